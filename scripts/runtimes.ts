/**
 * Starts the Beacon on Bun, Node or workerd (through Miniflare), installing the project-local
 * tools and building the bundle first. The `deno.json` tasks `start:bun`, `start:node` and
 * `start:workers` call this file; the conformance test uses {@linkcode startRuntime}.
 *
 * Every runtime reads the same `PORT`, `HOSTNAME` and `BEACON_*` variables and prints the same
 * JSON lines (`{"event":"listening",...}`, then `{"event":"shutdown",...}` after SIGINT or
 * SIGTERM). On workerd the `BEACON_*` variables become the worker's `env` bindings, and the
 * database must be remote (`libsql://`, `https://`): Workers cannot load the embedded one.
 *
 * Usage:
 *
 * ```sh
 * deno run -A scripts/runtimes.ts install           # npm ci into tools/ (done on demand anyway)
 * deno run -A scripts/runtimes.ts start bun|node|workers
 * ```
 *
 * @example Start the Node server on a free loopback port and stop it
 * ```ts ignore
 * import { startRuntime } from "./scripts/runtimes.ts";
 *
 * const server = await startRuntime("node", { PORT: "0", HOSTNAME: "127.0.0.1" });
 * console.log(server.url);
 * await server.stop();
 * ```
 *
 * @module
 */
import { isEmbedded } from "../src/store/client.ts";
import { build } from "./build.ts";
import { bunExecutable, ensureTools, nodeExecutable, ROOT } from "./tools.ts";

/** The runtimes this script starts (Deno is `deno task start`). */
export type RuntimeName = "bun" | "node" | "workers";

/** Every runtime this script starts. */
export const RUNTIMES: readonly RuntimeName[] = ["bun", "node", "workers"];

/** How to run one runtime's server: installs tools and builds its bundle first. */
export async function runtimeCommand(
  runtime: RuntimeName,
): Promise<{ command: string; args: string[] }> {
  await ensureTools();
  switch (runtime) {
    case "bun":
      return { command: await bunExecutable(), args: [await build("bun")] };
    case "node":
      return { command: await nodeExecutable(), args: [await build("node")] };
    case "workers":
      return {
        command: await nodeExecutable(),
        args: [`${ROOT}/scripts/workerd_serve.mjs`, await build("workers")],
      };
  }
}

/** A server started by {@linkcode startRuntime}. */
export interface RunningServer {
  /** `http://<hostname>:<port>` as the server reported it. */
  readonly url: string;
  /** The JSON lines the server printed so far (request logs, events). */
  readonly lines: Record<string, unknown>[];
  /** Everything the server wrote to stderr so far. */
  stderr(): string;
  /** Sends `signal` (default SIGTERM) and waits for the exit status. */
  stop(signal?: Deno.Signal): Promise<Deno.CommandStatus>;
}

/** How long a server may take to stop after its signal before it is killed. */
const STOP_GRACE_MS = 15_000;

/** `promise`'s value, or undefined when it has not settled within `ms`. */
async function within<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Variables a child needs to find its tools and caches; nothing of the Beacon's own. */
const PASSED_THROUGH = ["PATH", "HOME", "TMPDIR", "DENO_DIR", "XDG_CACHE_HOME", "NPM_CONFIG_CACHE"];

function passThrough(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of PASSED_THROUGH) {
    const value = Deno.env.get(name);
    if (value !== undefined) env[name] = value;
  }
  return env;
}

/**
 * Starts a command that prints `{"event":"listening","port":N}` and waits for that line. The
 * child gets exactly `env` on top of a minimal environment (PATH, HOME, caches), so a developer's own
 * `BEACON_*` variables cannot change a test.
 */
export async function startServerProcess(
  command: string,
  args: string[],
  env: Record<string, string>,
  timeoutMs = 60_000,
): Promise<RunningServer> {
  const child = new Deno.Command(command, {
    args,
    cwd: ROOT,
    clearEnv: true,
    env: { ...passThrough(), ...env },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const lines: Record<string, unknown>[] = [];
  let errors = "";
  const { promise: port, resolve: resolvePort, reject: rejectPort } = Promise.withResolvers<
    number
  >();
  const readingErrors = (async () => {
    for await (const chunk of child.stderr.pipeThrough(new TextDecoderStream())) {
      if (errors.length < 200_000) errors += chunk;
    }
  })();
  const reading = (async () => {
    let buffered = "";
    for await (const chunk of child.stdout.pipeThrough(new TextDecoderStream())) {
      buffered += chunk;
      let newline;
      while ((newline = buffered.indexOf("\n")) >= 0) {
        const line = buffered.slice(0, newline);
        buffered = buffered.slice(newline + 1);
        try {
          const parsed = JSON.parse(line);
          lines.push(parsed);
          if (parsed.event === "listening") resolvePort(parsed.port);
        } catch {
          // not a JSON line
        }
      }
    }
    await readingErrors;
    rejectPort(new Error(`${command} exited before listening:\n${errors.slice(-4000)}`));
  })();
  const timer = setTimeout(
    () => rejectPort(new Error(`${command} did not listen within ${timeoutMs} ms`)),
    timeoutMs,
  );
  let listening: number;
  try {
    listening = await port;
  } catch (error) {
    try {
      child.kill("SIGKILL");
    } catch {
      // already gone
    }
    await child.status;
    await reading;
    throw error;
  } finally {
    clearTimeout(timer);
  }
  const host = env.HOSTNAME ?? "127.0.0.1";
  return {
    url: `http://${host.includes(":") ? `[${host}]` : host}:${listening}`,
    lines,
    stderr: () => errors,
    async stop(signal: Deno.Signal = "SIGTERM") {
      try {
        child.kill(signal);
      } catch {
        // already gone
      }
      // A server that does not stop in time is killed, and output still held open by a
      // grandchild (workerd under Miniflare) is not waited for: a stuck stop must fail a test,
      // never hang the whole run.
      const exited = await within(child.status, STOP_GRACE_MS);
      if (exited === undefined) {
        try {
          child.kill("SIGKILL");
        } catch {
          // gone meanwhile
        }
      }
      const status = exited ?? await child.status;
      await within(reading, 2_000);
      return status;
    },
  };
}

/**
 * Installs the tools, builds the bundle and starts `runtime`'s server with `env` (at least
 * `PORT` and `HOSTNAME`; `PORT: "0"` picks a free port). Resolves once it listens.
 */
export async function startRuntime(
  runtime: RuntimeName,
  env: Record<string, string>,
): Promise<RunningServer> {
  const { command, args } = await runtimeCommand(runtime);
  return startServerProcess(command, args, env);
}

async function main(args: string[]): Promise<number> {
  const [action, runtime] = args;
  if (action === "install") {
    await ensureTools();
    return 0;
  }
  if (action !== "start" || !RUNTIMES.includes(runtime as RuntimeName)) {
    console.error("Usage: deno run -A scripts/runtimes.ts install | start bun|node|workers");
    return 2;
  }
  if (runtime === "workers" && isEmbedded(Deno.env.get("BEACON_DATABASE_URL") || "file:")) {
    console.error(
      "Cannot start on Workers: BEACON_DATABASE_URL names an embedded database (or is unset), " +
        "and Workers cannot load native modules; set it to the libsql:// or https:// URL of a " +
        "Turso or sqld database (run `deno task migrate` against it first)",
    );
    return 1;
  }
  const { command, args: commandArgs } = await runtimeCommand(runtime as RuntimeName);
  // The server inherits this process's environment, standard streams and working directory.
  const child = new Deno.Command(command, { args: commandArgs, stdin: "inherit" }).spawn();
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    Deno.addSignalListener(signal, () => {
      try {
        child.kill(signal);
      } catch {
        // already gone
      }
    });
  }
  return (await child.status).code;
}

if (import.meta.main) Deno.exit(await main(Deno.args));
