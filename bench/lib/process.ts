/**
 * Starting, watching and stopping one server process for a benchmark.
 *
 * The server is spawned directly (never through `deno task` or `npm start`), so the pid the
 * harness holds is the process that serves and holds the memory; its tree is sampled anyway in
 * case it forks. Output is drained continuously because a full pipe would stall the server.
 *
 * @module
 */

import { freePort } from "../../scripts/runtimes.ts";
import { RssSampler } from "./rss.ts";

/** How to run a server and how to know it is ready. */
export interface ServerSpec {
  /** Short name used in messages. */
  name: string;
  command: string;
  /** Arguments, or a function of the port `startServer` picked (for `--allow-net=host:port`). */
  args: string[] | ((port: number) => string[]);
  /** Added to the harness's own environment; `PORT` and `BEACON_HOSTNAME` are set by `startServer`. */
  env: Record<string, string>;
  /** `GET` path that answers 200 once the server accepts work. */
  readyPath: string;
  cwd?: string;
  readyTimeoutMs?: number;
}

/** What a stopped server left behind. */
export interface StopResult {
  code: number;
  signal: string | null;
  /** Stdout lines, the last ones kept (the shutdown summary is the final line). */
  stdout: string[];
  stderrTail: string;
  /** True when SIGTERM was not enough and the harness had to SIGKILL. */
  killed: boolean;
}

/** A server started by `startServer`. */
export interface RunningServer {
  name: string;
  port: number;
  origin: string;
  pid: number;
  rss: RssSampler;
  stderrTail(): string;
  /** Set once the process has exited (before `stop()`, that means it died or was killed). */
  exitStatus(): Deno.CommandStatus | undefined;
  /** The last stdout lines so far. */
  stdoutTail(): string[];
  stop(): Promise<StopResult>;
}

/** Every server listens here, and the load generator refuses any other host. */
export const LOOPBACK = "127.0.0.1";
const KEEP_LINES = 400;
const KEEP_STDERR = 8192;

/** Collects the last lines of a byte stream; resolves when the stream ends. */
function collectLines(stream: ReadableStream<Uint8Array>, keep: string[]): Promise<void> {
  let partial = "";
  return stream.pipeThrough(new TextDecoderStream()).pipeTo(
    new WritableStream({
      write(chunk) {
        const parts = (partial + chunk).split("\n");
        partial = parts.pop() ?? "";
        keep.push(...parts);
        if (keep.length > KEEP_LINES) keep.splice(0, keep.length - KEEP_LINES);
      },
      close() {
        if (partial !== "") keep.push(partial);
      },
    }),
  ).catch(() => {});
}

/** Keeps the tail of a byte stream as text (for error messages). */
function collectTail(stream: ReadableStream<Uint8Array>, sink: { text: string }): Promise<void> {
  return stream.pipeThrough(new TextDecoderStream()).pipeTo(
    new WritableStream({
      write(chunk) {
        sink.text = (sink.text + chunk).slice(-KEEP_STDERR);
      },
    }),
  ).catch(() => {});
}

/**
 * Spawns a server on a free loopback port and waits until its ready path answers 200.
 *
 * @example
 * ```ts
 * const server = await startServer({
 *   name: "echo",
 *   command: Deno.execPath(),
 *   args: ["run", "-A", "bench/echo.ts"],
 *   env: {},
 *   readyPath: "/",
 * });
 * const result = await server.stop();
 * ```
 */
export async function startServer(spec: ServerSpec): Promise<RunningServer> {
  const port = freePort();
  const origin = `http://${LOOPBACK}:${port}`;
  const child = new Deno.Command(spec.command, {
    args: typeof spec.args === "function" ? spec.args(port) : spec.args,
    cwd: spec.cwd,
    env: { ...spec.env, PORT: String(port), BEACON_HOSTNAME: LOOPBACK, HOSTNAME: LOOPBACK },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const stdout: string[] = [];
  const stderr = { text: "" };
  const drained = Promise.all([
    collectLines(child.stdout, stdout),
    collectTail(child.stderr, stderr),
  ]);
  let exited: Deno.CommandStatus | undefined;
  const status = child.status.then((s) => (exited = s));

  const deadline = Date.now() + (spec.readyTimeoutMs ?? 30_000);
  for (;;) {
    if (exited) {
      await drained;
      const text = plain(stderr.text);
      const reason = text.split("\n").find((l) => /error/i.test(l))?.trim() ?? "no error line";
      throw new Error(
        `Cannot start ${spec.name}: it exited with code ${exited.code} before it was ready ` +
          `(${reason})\n${text.slice(-2000)}`,
      );
    }
    try {
      const response = await fetch(origin + spec.readyPath, {
        signal: AbortSignal.timeout(1000),
      });
      await response.body?.cancel();
      if (response.status === 200) break;
    } catch {
      // Not listening yet: connection refused is the expected answer while it boots.
    }
    if (Date.now() > deadline) {
      child.kill("SIGKILL");
      await status;
      await drained;
      throw new Error(
        `Cannot start ${spec.name}: ${origin}${spec.readyPath} did not answer 200 in time\n` +
          stderr.text.slice(-2000),
      );
    }
    await new Promise((r) => setTimeout(r, 100));
  }

  const rss = new RssSampler(child.pid);
  rss.start();

  return {
    name: spec.name,
    port,
    origin,
    pid: child.pid,
    rss,
    stderrTail: () => stderr.text,
    exitStatus: () => exited,
    stdoutTail: () => stdout.slice(-5),
    async stop(): Promise<StopResult> {
      // Last look at /proc before the entry disappears with the process.
      rss.sample();
      rss.stop();
      let killed = false;
      if (!exited) {
        try {
          child.kill("SIGTERM");
        } catch {
          // Already gone between the check and the signal.
        }
        const timer = setTimeout(() => {
          killed = true;
          try {
            child.kill("SIGKILL");
          } catch {
            // Exited on its own at the last moment.
          }
        }, 15_000);
        await status;
        clearTimeout(timer);
      }
      await drained;
      const final = exited!;
      return {
        code: final.code,
        signal: final.signal,
        stdout,
        stderrTail: stderr.text,
        killed,
      };
    },
  };
}

/** Text without terminal colour codes (Deno colours its error messages). */
function plain(text: string): string {
  // deno-lint-ignore no-control-regex -- matching the escape character is the point here
  return text.replace(/\x1b\[[0-9;]*m/g, "");
}

/** Finds the last stdout line that is a JSON object with the given `event`. */
export function findEvent(lines: readonly string[], event: string): Record<string, unknown> | null {
  for (let i = lines.length - 1; i >= 0; i--) {
    const line = lines[i].trim();
    if (!line.startsWith("{")) continue;
    try {
      const value = JSON.parse(line);
      if (value && typeof value === "object" && value.event === event) return value;
    } catch {
      // A log line that merely starts with a brace: keep looking.
    }
  }
  return null;
}

/** Runs a command to completion and returns its output; throws with stderr when it fails. */
export async function run(
  command: string,
  args: string[],
  options: { cwd?: string; quiet?: boolean } = {},
): Promise<string> {
  const output = await new Deno.Command(command, {
    args,
    cwd: options.cwd,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(output.stdout);
  if (!output.success) {
    const err = new TextDecoder().decode(output.stderr);
    throw new Error(`Cannot run ${command} ${args.join(" ")}: exit ${output.code}\n${err}`);
  }
  return text;
}

/** True when the command can be found on PATH (or is an existing path). */
export async function hasCommand(command: string): Promise<boolean> {
  try {
    const out = await new Deno.Command("sh", {
      args: ["-c", `command -v "$0"`, command],
      stdout: "null",
      stderr: "null",
    }).output();
    return out.success;
  } catch {
    return false;
  }
}
