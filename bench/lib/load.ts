/**
 * Load generation in a second process: `wrk` (Debian's package) with bench/wrk/unique.lua, or
 * `autocannon` from npm (bench/lib/autocannon_driver.mjs through npx) when wrk cannot be
 * installed. Both make every request body unique and target loopback only. autocannon runs in
 * one Node process (its workers cannot take a per-request body function), so it saturates
 * sooner than wrk: compare ratios only within one run, as the report does.
 *
 * @module
 */

import { hasCommand, run } from "./process.ts";
import { ROOT } from "./servers.ts";

/** Which body every request carries (see bench/wrk/unique.lua). */
export type BodyKind = "json" | "text" | "fixed";

/** One load generator run. */
export interface LoadOptions {
  /** Full URL; its host must be a loopback address. */
  url: string;
  headers: Record<string, string>;
  kind: BodyKind;
  /** Body bytes per request. */
  size: number;
  /** Makes this run's ids distinct from every other run's. */
  nonce: string;
  connections: number;
  threads: number;
  durationS: number;
  /** Per-request timeout; a slower answer counts as a timeout error. */
  timeoutS: number;
}

/** What one run measured. */
export interface LoadResult {
  /** Completed responses (any status). */
  requests: number;
  durationS: number;
  rps: number;
  p50Ms: number;
  p90Ms: number;
  p99Ms: number;
  maxMs: number;
  /** Responses with a status of 400 or more (wrk's definition; these scenarios send no 3xx). */
  non2xx: number;
  /** Socket level failures: connect, read, write, timeout. */
  errors: { connect: number; read: number; write: number; timeout: number };
}

/** The load generator in use. */
export type LoadGenerator = "wrk" | "autocannon";

const AUTOCANNON = "autocannon@8.0.0";
const WRK_SCRIPT = `${ROOT}/bench/wrk/unique.lua`;

/** Refuses anything but loopback: this harness must never load another machine. */
export function assertLoopback(url: string): void {
  const host = new URL(url).hostname;
  if (!(host === "localhost" || host === "[::1]" || /^127\.\d+\.\d+\.\d+$/.test(host))) {
    throw new Error(`Cannot load ${url}: only loopback addresses may be benchmark targets`);
  }
}

/**
 * Picks the load generator: wrk when present or installable with apt-get, else autocannon
 * through npx. `prefer` forces one.
 */
export async function ensureLoadGenerator(
  prefer: LoadGenerator | undefined,
  log: (line: string) => void,
): Promise<LoadGenerator> {
  if (prefer === "autocannon") return "autocannon";
  if (await hasCommand("wrk")) return "wrk";
  if (await hasCommand("apt-get")) {
    log("wrk is missing: installing it with apt-get (Debian's package)");
    for (const attempt of [["install", "-y", "wrk"], ["update"], ["install", "-y", "wrk"]]) {
      try {
        await run("apt-get", attempt);
        if (attempt[0] === "install" && await hasCommand("wrk")) return "wrk";
      } catch (error) {
        log(`apt-get ${attempt.join(" ")} failed: ${firstLine(error)}`);
      }
    }
  }
  if (prefer === "wrk") {
    throw new Error("Cannot use wrk: it is missing and apt-get could not add it");
  }
  if (!(await hasCommand("npx"))) {
    throw new Error("Cannot generate load: neither wrk (apt-get) nor npx (for autocannon) works");
  }
  log(`falling back to npx ${AUTOCANNON}`);
  return "autocannon";
}

/** Version line of the load generator, for the record. */
export async function loadGeneratorVersion(gen: LoadGenerator): Promise<string> {
  if (gen === "wrk") {
    // wrk prints its version with a usage text and exits 1 on -v; read it either way.
    const out = await new Deno.Command("wrk", { args: ["-v"], stdout: "piped", stderr: "piped" })
      .output();
    const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
    return text.split("\n")[0].trim();
  }
  return AUTOCANNON;
}

/** Runs one load generator pass and returns its measurements. */
export function runLoad(gen: LoadGenerator, options: LoadOptions): Promise<LoadResult> {
  assertLoopback(options.url);
  return gen === "wrk" ? runWrk(options) : runAutocannon(options);
}

async function runWrk(o: LoadOptions): Promise<LoadResult> {
  const args = [
    `-t${o.threads}`,
    `-c${o.connections}`,
    `-d${o.durationS}s`,
    "--timeout",
    `${o.timeoutS}s`,
    "-s",
    WRK_SCRIPT,
  ];
  for (const [name, value] of Object.entries(o.headers)) args.push("-H", `${name}: ${value}`);
  args.push(o.url, "--", o.kind, String(o.size), o.nonce);
  return parseResult(await run("wrk", args), "wrk");
}

/** Reads the one `BENCH_RESULT {json}` line both drivers print (times in microseconds). */
function parseResult(out: string, gen: LoadGenerator): LoadResult {
  const line = out.split("\n").find((l) => l.startsWith("BENCH_RESULT "));
  if (!line) throw new Error(`Cannot read ${gen}'s result: no BENCH_RESULT line in\n${out}`);
  const r = JSON.parse(line.slice("BENCH_RESULT ".length));
  const durationS = r.duration_us / 1e6;
  return {
    requests: r.requests,
    durationS,
    rps: r.requests / durationS,
    p50Ms: r.p50_us / 1000,
    p90Ms: r.p90_us / 1000,
    p99Ms: r.p99_us / 1000,
    maxMs: r.max_us / 1000,
    non2xx: r.status,
    errors: { connect: r.connect, read: r.read, write: r.write, timeout: r.timeout },
  };
}

async function runAutocannon(o: LoadOptions): Promise<LoadResult> {
  const configFile = await Deno.makeTempFile({ prefix: "beacon-bench-autocannon-" });
  try {
    await Deno.writeTextFile(
      configFile,
      JSON.stringify({
        url: o.url,
        headers: o.headers,
        kind: o.kind,
        size: o.size,
        nonce: o.nonce,
        connections: o.connections,
        duration: o.durationS,
        timeout: o.timeoutS,
      }),
    );
    const out = await run("npx", [
      "--yes",
      `--package=${AUTOCANNON}`,
      "--",
      "node",
      `${ROOT}/bench/lib/autocannon_driver.mjs`,
      configFile,
    ]);
    return parseResult(out, "autocannon");
  } finally {
    await Deno.remove(configFile).catch(() => {});
  }
}

function firstLine(error: unknown): string {
  return String(error instanceof Error ? error.message : error).split("\n")[0];
}
