/**
 * The narrowest Deno permissions the server runs with (`deno task start` goes through
 * `launch.ts`, which computes them from the environment and starts `src/adapter/deno/server.ts`
 * with them). With these flags the runtime itself refuses every outbound connection our code did
 * not need, so the no-contact principle holds even if our own code had a bug.
 * docs/threat-model.md explains each flag:
 *
 * - `--allow-net=<listen address>:<port>[,<database host>]`: listening on our own port; when the
 *   database is remote, that one host. No other host, no DNS lookups of anything else.
 * - `--allow-env=<the Beacon's variables>,LIBSQL_JS_DEV`: the last one is read by the native
 *   libSQL loader at import time.
 * - `--allow-read=<database folder>,<npm cache>,<src>` and `--allow-write=<database folder>`: the
 *   embedded database and its WAL, the npm packages' code (the native module is loaded from the
 *   cache), and the Beacon's own `src/` (the writer thread's worker module is loaded at run time).
 * - `--allow-ffi`: the embedded database is a native Node-API module; only with a file database.
 * - `--allow-sys=…`: the native loader's libc detection (`detect-libc`) calls
 *   `process.report.getReport()`, which reads these system facts.
 * - no `--allow-run`: no subprocesses.
 *
 * @module
 */
import { embeddedFilePath } from "../store/client.ts";
import { ENVIRONMENT_VARIABLES } from "../start/config.ts";

/** Variables outside the Beacon's own that its dependencies read. */
export const DEPENDENCY_VARIABLES = ["LIBSQL_JS_DEV"];

/** System facts `process.report.getReport()` reads (see above). */
export const SYS_FACTS = [
  "cpus",
  "osRelease",
  "networkInterfaces",
  "hostname",
  "loadavg",
  "uid",
  "gid",
  "osUptime",
];

/**
 * V8 settings of the server process. A young generation of up to 16 MiB per semi-space: each
 * durable request keeps its objects for the ~25 ms it waits for its commit, and with 2 MiB (the
 * setting before) they were promoted and collected as old objects, at a cost in CPU and none in
 * peak memory (`bench/ab.ts`; bench/README.md, "Figures behind constants").
 */
export const SERVER_V8_FLAGS = ["--v8-flags=--max-semi-space-size=16"];

/**
 * The configuration the server and the review tool run with (`deno task start`, `deno task
 * review`): only the npm packages they import, so a first start on an empty cache fetches no
 * build, test or browser tool. The root deno.json, with the development imports, is for
 * the tests and the tasks of developers; tests/runtimes/serve_config_test.ts keeps the two in step.
 */
export const SERVE_CONFIG: string = new URL("../../tools/serve/deno.json", import.meta.url)
  .pathname;

/** The Beacon's `src/` folder, from which the writer thread's module is loaded. */
const SOURCE_FOLDER = new URL("..", import.meta.url).pathname.replace(/\/$/, "");

/** What the flags are computed from. */
export interface PermissionFacts {
  /** The listen address (`BEACON_HOSTNAME`). */
  readonly hostname: string;
  /** The listen port (`PORT`). */
  readonly port: number;
  /** The database URL. */
  readonly databaseUrl: string;
  /** Deno's npm cache folder (`deno info --json` → `npmCache`). */
  readonly npmCache: string;
  /** The working directory, for relative database paths. */
  readonly cwd: string;
  /** `BEACON_SIGNING_KEY_FILE`, read (only) at start; a key file beside the database is in its folder. */
  readonly signingKeyFile?: string;
}

/** The absolute folder of a `file:` database (relative paths from `cwd`). */
export function databaseFolder(url: string, cwd: string): string {
  const path = embeddedFilePath(url);
  const absolute = path.startsWith("/") ? path : `${cwd}/${path}`;
  return absolute.slice(0, absolute.lastIndexOf("/")) || "/";
}

/** The `deno run` permission flags for the server. */
export function serverPermissionFlags(facts: PermissionFacts): string[] {
  // An IPv6 address in brackets (Deno's --allow-net reads `[::1]:8000`; `::1:8000` does not parse).
  const host = facts.hostname.includes(":") ? `[${facts.hostname}]` : facts.hostname;
  const net = [`${host}:${facts.port}`];
  const read = [facts.npmCache, SOURCE_FOLDER];
  if (facts.signingKeyFile !== undefined) {
    read.push(
      facts.signingKeyFile.startsWith("/")
        ? facts.signingKeyFile
        : `${facts.cwd}/${facts.signingKeyFile}`,
    );
  }
  const flags: string[] = [];
  if (facts.databaseUrl.startsWith("file:")) {
    const folder = databaseFolder(facts.databaseUrl, facts.cwd);
    read.push(folder);
    flags.push(`--allow-write=${folder}`, "--allow-ffi", `--allow-sys=${SYS_FACTS.join(",")}`);
  } else if (facts.databaseUrl === ":memory:") {
    flags.push("--allow-ffi", `--allow-sys=${SYS_FACTS.join(",")}`);
  } else {
    const url = new URL(facts.databaseUrl.replace(/^libsql:/, "https:"));
    net.push(url.port === "" ? url.hostname : `${url.hostname}:${url.port}`);
  }
  return [
    `--allow-net=${net.join(",")}`,
    `--allow-env=${[...ENVIRONMENT_VARIABLES, ...DEPENDENCY_VARIABLES].join(",")}`,
    `--allow-read=${read.join(",")}`,
    ...flags,
    `--config=${SERVE_CONFIG}`,
    "--no-prompt",
  ];
}

/** Deno's npm cache folder, as `deno info` reports it. */
export async function npmCacheFolder(): Promise<string> {
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["info", "--json"],
    stdout: "piped",
    stderr: "null",
  }).output();
  const info = JSON.parse(new TextDecoder().decode(output.stdout));
  return String(info.npmCache);
}
