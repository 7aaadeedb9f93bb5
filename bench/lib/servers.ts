/**
 * The servers the benchmarks start: the bare echo, the `@a2a-js/sdk` reference and the Beacon.
 *
 * @module
 */

import {
  npmCacheFolder,
  SERVER_V8_FLAGS,
  serverPermissionFlags,
} from "../../src/cli/permissions.ts";
import { LOOPBACK, run, type ServerSpec } from "./process.ts";
import { TEST_SIGNING_KEY } from "../../scripts/runtimes.ts";

/** Absolute path of the repository root (bench/lib/ is two levels down). */
export const ROOT = decodeURIComponent(new URL("../../", import.meta.url).pathname).replace(
  /\/$/,
  "",
);

/** The Beacon's Deno entry file, relative to the root (the contract's start command). */
export const BEACON_ENTRY = "src/adapter/deno/server.ts";
/** The Beacon answers 200 here once it is ready (database open, migrations applied). */
export const BEACON_READY_PATH = "/.well-known/autonomous-agent";

const SDK_DIR = `${ROOT}/bench/sdk`;
const SDK_VERSION = "1.3.0";

function exists(path: string): boolean {
  try {
    Deno.statSync(path);
    return true;
  } catch {
    return false;
  }
}

/** Throws a clear message when the Beacon's entry file is not there yet. */
export function assertBeaconExists(entry = BEACON_ENTRY): void {
  if (!exists(entry.startsWith("/") ? entry : `${ROOT}/${entry}`)) {
    throw new Error(
      `Cannot benchmark the Beacon: ${entry} does not exist yet. ` +
        "Run only the reference servers with --only=echo,sdk until it does",
    );
  }
}

/** The bare `Deno.serve` echo (bench/echo.ts); `refuse413` makes it the 413 ceiling instead. */
export function echoSpec(refuse413 = false): ServerSpec {
  return {
    name: refuse413 ? "echo-413" : "echo",
    command: Deno.execPath(),
    args: ["run", "--allow-net", "--allow-env", "bench/echo.ts"],
    cwd: ROOT,
    env: { DENO_NO_UPDATE_CHECK: "1", ...(refuse413 ? { ECHO_MODE: "refuse413" } : {}) },
    readyPath: "/",
  };
}

/** The `@a2a-js/sdk` Express reference server on Node (bench/sdk_server.mjs). */
export function sdkSpec(): ServerSpec {
  return {
    name: "sdk",
    command: "node",
    args: ["bench/sdk_server.mjs"],
    cwd: ROOT,
    // Express's documented production setting; the SDK's own defaults are left as they are.
    env: { NODE_ENV: "production" },
    readyPath: "/.well-known/agent-card.json",
  };
}

/**
 * The reference floor: `server.ts` of the shared floor folder (`../shared/floor` beside the
 * checkout, or `BENCH_REFERENCE_FLOOR`), a minimal server that does the whole durable
 * `SendMessage` job and nothing else, started with the knobs its README names for the full job.
 * It is an instrument kept outside the project; the bench only runs it.
 */
export const REFERENCE_FLOOR_DIR = Deno.env.get("BENCH_REFERENCE_FLOOR") ??
  decodeURIComponent(new URL("../../../shared/floor", import.meta.url).pathname);

/** The knobs of the reference floor's full job (its README, "Run it"). */
export const REFERENCE_FLOOR_KNOBS: Readonly<Record<string, string>> = {
  STAGE: "e",
  HASH: "node",
  DB: "libsql-json",
  SIGN: "webcrypto",
  HEADERS: "7",
  IDX: "int",
  CKPT: "20000",
  STORE_SIG: "batch",
};

/** The reference floor's knobs for tree heads as the Beacon keeps them: a head every 2 s over the rows read back. */
export const FLOOR_HEADS_KNOBS: Readonly<Record<string, string>> = {
  HEADS: "2000",
  HEADS_FROM: "db",
};

/** Why the reference floor cannot run here, or undefined when its `server.ts` is there. */
export function referenceFloorMissing(): string | undefined {
  return exists(`${REFERENCE_FLOOR_DIR}/server.ts`)
    ? undefined
    : `${REFERENCE_FLOOR_DIR}/server.ts is missing`;
}

/**
 * The reference floor's process: `deno run` in its own folder (its own `deno.json`), without a
 * lock file or a `node_modules` folder of its own, so the run writes nothing there.
 */
export function referenceFloorSpec(
  databasePath: string,
  options: { name?: string; env?: Record<string, string>; extraArgs?: readonly string[] } = {},
): ServerSpec {
  return {
    name: options.name ?? "floor-ref",
    command: Deno.execPath(),
    args: [
      "run",
      "-A",
      "--no-lock",
      "--node-modules-dir=none",
      ...options.extraArgs ?? [],
      "server.ts",
    ],
    cwd: REFERENCE_FLOOR_DIR,
    env: {
      DENO_NO_UPDATE_CHECK: "1",
      ...REFERENCE_FLOOR_KNOBS,
      DBPATH: databasePath,
      ...options.env,
    },
    readyPath: "/",
    readyTimeoutMs: 120_000,
  };
}

/** Options for one Beacon process. */
export interface BeaconOptions {
  /** Absolute path of the database file; the server creates it and applies migrations. */
  databasePath: string;
  /** A remote database's URL (a real sqld's), used instead of the file. */
  databaseUrl?: string;
  /** `off`, or a limit such as `1/1h`. */
  rateLimit: string;
  /** Deno's npm cache folder (`beaconNpmCache()`), which the narrow permissions must read. */
  npmCache: string;
  name?: string;
  /** Entry file to run instead of the contract's (to compare builds); relative to the root. */
  entry?: string;
  /** More `deno run` flags before the entry (the profiler's `--cpu-prof`). */
  extraArgs?: string[];
  /** More environment (`BEACON_WRITER_THREAD=on`, say). */
  env?: Record<string, string>;
}

/** Deno's npm cache folder, asked once per run (it is a `deno info` process). */
export function beaconNpmCache(): Promise<string> {
  return npmCacheFolder();
}

/**
 * The Beacon on Deno, started as `deno task start` starts it (src/cli/launch.ts): the same
 * narrow permissions and V8 settings, computed by the same function, but spawned directly so the
 * pid the harness watches is the process that serves (the launcher would be its parent).
 */
export function beaconSpec(options: BeaconOptions): ServerSpec {
  const databaseUrl = options.databaseUrl ?? `file:${options.databasePath}`;
  return {
    name: options.name ?? "beacon",
    command: Deno.execPath(),
    args: (port) => [
      "run",
      ...serverPermissionFlags({
        hostname: LOOPBACK,
        port,
        databaseUrl,
        npmCache: options.npmCache,
        cwd: ROOT,
      }),
      ...SERVER_V8_FLAGS,
      ...(options.extraArgs ?? []),
      options.entry ?? BEACON_ENTRY,
    ],
    cwd: ROOT,
    env: {
      DENO_NO_UPDATE_CHECK: "1",
      BEACON_DATABASE_URL: databaseUrl,
      BEACON_RATE_LIMIT: options.rateLimit,
      // Both budgets alike: "off" measures the durable path, a limit the refusal before the body.
      BEACON_STATUS_RATE_LIMIT: options.rateLimit,
      BEACON_LOG: "off",
      // A remote database needs a key from the environment (docs/keys.md); a throwaway one here.
      ...(/^(libsql|https?):\/\//.test(databaseUrl)
        ? { BEACON_SIGNING_KEY: TEST_SIGNING_KEY }
        : {}),
      ...options.env,
    },
    readyPath: BEACON_READY_PATH,
    // First start may compile and download npm packages; later ones are quick.
    readyTimeoutMs: 120_000,
  };
}

/** Installs the SDK server's packages from its lock file when they are missing or stale. */
export async function ensureSdkInstalled(log: (line: string) => void): Promise<void> {
  const installed = `${SDK_DIR}/node_modules/@a2a-js/sdk/package.json`;
  let ok = exists(`${SDK_DIR}/node_modules/express/package.json`) && exists(installed);
  if (ok) {
    const version = JSON.parse(Deno.readTextFileSync(installed)).version;
    ok = version === SDK_VERSION;
  }
  if (ok) return;
  log(`installing the SDK reference server's packages: npm ci --prefix bench/sdk`);
  await run("npm", ["ci", "--prefix", "bench/sdk", "--no-audit", "--no-fund"], { cwd: ROOT });
}

/** Versions of the tools in play, for the record. */
export async function toolVersions(): Promise<Record<string, string>> {
  const versions: Record<string, string> = {
    deno: Deno.version.deno,
    v8: Deno.version.v8,
  };
  try {
    versions.node = (await run("node", ["--version"])).trim();
  } catch {
    versions.node = "missing";
  }
  try {
    const sdk = JSON.parse(
      Deno.readTextFileSync(`${SDK_DIR}/node_modules/@a2a-js/sdk/package.json`),
    );
    const express = JSON.parse(
      Deno.readTextFileSync(`${SDK_DIR}/node_modules/express/package.json`),
    );
    versions["@a2a-js/sdk"] = sdk.version;
    versions.express = express.version;
  } catch {
    // Not installed: only matters when the sdk target runs, which installs it first.
  }
  return versions;
}

/** The commit the servers start from, and whether the work tree differs from it. */
export async function gitState(): Promise<{ head: string; dirty: boolean | null }> {
  try {
    const head = (await run("git", ["rev-parse", "--short", "HEAD"], { cwd: ROOT })).trim();
    const status = await run("git", ["status", "--porcelain", "--", "src", "mod.ts"], {
      cwd: ROOT,
    });
    return { head, dirty: status.trim() !== "" };
  } catch {
    return { head: "unknown", dirty: null };
  }
}
