/**
 * What one run of the review tool may touch, computed from its command line and environment
 * before anything is opened ({@linkcode reviewNeeds}), and the same needs written as each
 * runtime's own permission flags. The launchers start the tool with them (launch_deno.ts,
 * launch_node.ts); docs/review.md ("Least privilege on each runtime") lists them:
 *
 * - read: the database folder, and the code the tool runs (Deno: the npm cache and this folder,
 *   whose console files are read at start; Node: the built `dist/` and the `node_modules` the
 *   dependencies are installed in);
 * - write: the database folder (the driver opens its WAL and shared-memory files there; reading
 *   commands never write rows), and for `export --out FILE` that one file;
 * - network: nothing, except the remote database's host, for `serve` its listen address
 *   (loopback unless `--allow-non-loopback`), and for `monitor` the Beacon it watches (and then
 *   no database at all, only its state file);
 * - the native driver only with a file database: Deno's `--allow-ffi` and `--allow-sys=…`, Node's
 *   `--allow-addons`;
 * - no subprocesses, no workers. No signing key is needed for anything but signing a checkpoint
 *   or a redaction, and only `BEACON_SIGNING_KEY` can give one.
 *
 * Deno enforces all of it, environment variables included. Node's permission model (Node 20.19:
 * `--experimental-permission`; 22.13 and later: `--permission`) enforces reads, writes,
 * subprocesses and workers, but has no network or environment permission, and a loaded native
 * addon (the embedded database's driver) is outside it: with a remote database it holds fully.
 * Bun has no permission model at all.
 *
 * @module
 */
import { posix } from "node:path";
import { DEPENDENCY_VARIABLES, SYS_FACTS } from "../../src/cli/permissions.ts";
import { DEFAULT_DATABASE_URL, embeddedFilePath } from "../../src/store/mod.ts";

/** Every environment variable the review tool reads. */
export const REVIEW_VARIABLES = [
  "BEACON_DATABASE_URL",
  "BEACON_DATABASE_AUTH_TOKEN",
  "BEACON_SIGNING_KEY",
  "BEACON_REVIEWER",
];

/**
 * The review package's folder, the one above this file's (the console's static files, read at
 * start, are in `console/static/`).
 */
const REVIEW_FOLDER = new URL("..", import.meta.url).pathname.replace(/\/$/, "");

/** What the needs are computed from: the command line as the tool will read it. */
export interface RunFacts {
  /** The arguments after `deno task review` (or `npx beacon-review`, …). */
  readonly args: readonly string[];
  /** Reads an environment variable. */
  readonly env: (name: string) => string | undefined;
  /** The working directory, for relative paths. */
  readonly cwd: string;
}

/** The Deno facts: also where Deno keeps the npm packages. */
export interface ReviewFacts extends RunFacts {
  /** Deno's npm cache folder. */
  readonly npmCache: string;
}

/** What one run may touch, whatever the runtime. */
export interface ReviewNeeds {
  /** Folders and files it reads, besides its own code. */
  readonly read: readonly string[];
  /** Folders and files it writes. */
  readonly write: readonly string[];
  /** `host` or `host:port` it connects to or listens on. */
  readonly net: readonly string[];
  /** Whether it loads the native libSQL driver (a file or in-memory database). */
  readonly nativeDriver: boolean;
  /** The database URL this run opens. */
  readonly databaseUrl: string;
  /** For a `file:` database, the file it opens: decoded once, absolute, `.` and `..` resolved. */
  readonly databaseFile?: string;
}

/** The value of `--name VALUE` or `--name=VALUE`, the last one given. */
function option(args: readonly string[], name: string): string | undefined {
  let value: string | undefined;
  for (let i = 0; i < args.length; i++) {
    if (args[i] === "--") break;
    if (args[i] === `--${name}` && i + 1 < args.length) value = args[++i];
    else if (args[i].startsWith(`--${name}=`)) value = args[i].slice(name.length + 3);
  }
  return value;
}

/** `path` made absolute from `cwd`, with `.` and `..` resolved once, as the system will. */
function absolute(path: string, cwd: string): string {
  return posix.resolve(cwd, path);
}

/**
 * The file a `file:` database URL opens. The driver percent-decodes the path once (as
 * `embeddedFilePath` does) and the system then resolves its `..` segments, so
 * `file:/tmp/x/nx%2F..%2F..%2Fbeacon.db` opens `/tmp/beacon.db`: that file's folder, and no
 * other, is what the run is granted. Decoding twice, or granting the folder as written, would
 * grant a folder the driver never opens.
 *
 * @param url A `file:` URL.
 * @param cwd The working directory, for a relative path.
 * @returns The absolute, resolved path.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { databaseFile } from "./permissions.ts";
 *
 * assert.equal(databaseFile("file:/tmp/x/nx%2F..%2F..%2Fbeacon.db", "/"), "/tmp/beacon.db");
 * assert.equal(databaseFile("file:data/beacon.db", "/srv/beacon"), "/srv/beacon/data/beacon.db");
 * ```
 */
export function databaseFile(url: string, cwd: string): string {
  return absolute(embeddedFilePath(url), cwd);
}

/**
 * What a run of the review tool with `facts.args` needs.
 *
 * @param facts The command line, environment and working directory.
 * @returns Its reads, writes, network and whether it loads the native driver.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { reviewNeeds } from "./permissions.ts";
 *
 * const needs = reviewNeeds({ args: ["list"], env: () => undefined, cwd: "/srv/beacon" });
 * assert.deepEqual(needs.write, ["/srv/beacon/data"]);
 * assert.deepEqual(needs.net, []);
 * ```
 */
export function reviewNeeds(facts: RunFacts): ReviewNeeds {
  const { args, cwd } = facts;
  const command = args.find((arg, i) =>
    !arg.startsWith("-") && !["--database", "--width"].includes(args[i - 1] ?? "")
  );
  const env = (name: string) => {
    const value = facts.env(name);
    return value === undefined || value === "" ? undefined : value;
  };
  const url = option(args, "database") ?? env("BEACON_DATABASE_URL") ?? DEFAULT_DATABASE_URL;
  const read: string[] = [];
  const write: string[] = [];
  const net: string[] = [];
  let nativeDriver = false;
  let databaseFileOpened: string | undefined;
  if (command === "monitor") {
    // A monitor opens no database: it reads the Beacon's published head over HTTP and keeps
    // what it saw in its state file (commands/monitor.ts), written whole to FILE.new, then renamed.
    const state = option(args, "state");
    if (state !== undefined && state !== "") {
      const file = absolute(state, cwd);
      // Deno's rename asks for read and write on both names.
      read.push(file, file + ".new");
      write.push(file, file + ".new");
    }
    const target = args.find((arg) => /^https?:\/\//i.test(arg));
    try {
      const beacon = new URL(target ?? "");
      const port = beacon.port !== "" ? beacon.port : beacon.protocol === "https:" ? "443" : "80";
      net.push(`${beacon.hostname}:${port}`);
    } catch {
      // commands/monitor.ts reports the missing or bad URL; it gets no network for it.
    }
    return { read, write, net, nativeDriver, databaseUrl: url };
  }
  if (url.startsWith("file:")) {
    databaseFileOpened = databaseFile(url, cwd);
    const folder = posix.dirname(databaseFileOpened);
    read.push(folder);
    write.push(folder);
    nativeDriver = true;
  } else if (url === ":memory:") {
    nativeDriver = true;
  } else {
    try {
      const remote = new URL(url.replace(/^libsql:/, "https:"));
      net.push(remote.port === "" ? remote.hostname : `${remote.hostname}:${remote.port}`);
    } catch {
      // main.ts reports the bad URL; it gets no network for it.
    }
  }
  if (command === "export") {
    // An empty --out names no file: commands/export.ts refuses it as a usage error, and it must
    // never be read as the working folder.
    const out = option(args, "out");
    if (out !== undefined && out !== "") write.push(absolute(out, cwd));
  }
  if (command === "key") {
    // A key file is made beside its name (a temporary file, a hard link, the folder flushed:
    // src/start/key_file.ts), so its folder is read and written.
    for (const name of ["out", "key-file"]) {
      const value = option(args, name);
      if (value === undefined || value === "") continue;
      const folder = posix.dirname(absolute(value, cwd));
      // Each once: Node 20 aborts on a path its permission flags name twice.
      if (!read.includes(folder)) read.push(folder);
      if (!write.includes(folder)) write.push(folder);
    }
  }
  if (command === "serve") {
    const hostname = option(args, "hostname") ?? "127.0.0.1";
    const port = option(args, "port");
    const host = hostname.includes(":") && !hostname.startsWith("[") ? `[${hostname}]` : hostname;
    net.push(port === undefined || port === "0" ? host : `${host}:${port}`);
  }
  return { read, write, net, nativeDriver, databaseUrl: url, databaseFile: databaseFileOpened };
}

/**
 * The `deno run` permission flags for one run of the review tool.
 *
 * @param facts The command line, environment, npm cache and working directory.
 * @returns The flags.
 *
 * @example
 * ```ts
 * import { reviewPermissionFlags } from "./permissions.ts";
 * import { assert } from "../../tests/support/assert.ts";
 * const flags = reviewPermissionFlags({
 *   args: ["list"], env: () => undefined, npmCache: "/cache", cwd: "/srv/beacon",
 * });
 * assert(flags.includes("--allow-write=/srv/beacon/data"));
 * assert(!flags.some((flag) => flag.startsWith("--allow-run")));
 * ```
 */
export function reviewPermissionFlags(facts: ReviewFacts): string[] {
  const needs = reviewNeeds(facts);
  const read = [facts.npmCache, REVIEW_FOLDER, ...needs.read];
  return [
    `--allow-read=${read.join(",")}`,
    ...(needs.write.length === 0 ? [] : [`--allow-write=${needs.write.join(",")}`]),
    ...(needs.net.length === 0 ? [] : [`--allow-net=${needs.net.join(",")}`]),
    `--allow-env=${[...REVIEW_VARIABLES, ...DEPENDENCY_VARIABLES].join(",")}`,
    ...(needs.nativeDriver ? ["--allow-ffi", `--allow-sys=${SYS_FACTS.join(",")}`] : []),
    "--no-prompt",
  ];
}

/** What Node's flags are computed from, besides the run's needs. */
export interface NodeFacts {
  /** The folders of the code Node loads: the built tool and its installed dependencies. */
  readonly code: readonly string[];
  /**
   * The flag that turns the permission model on: `--permission` where Node has it (22.13 and
   * later), else `--experimental-permission` (20.19).
   */
  readonly permissionFlag: "--permission" | "--experimental-permission";
}

/**
 * The `node` permission flags for one run of the review tool. Node takes one path per flag (a
 * comma-separated list is deprecated) and grants a folder with everything under it.
 *
 * @param needs What the run needs ({@linkcode reviewNeeds}).
 * @param facts The code folders and the flag this Node spells its permission model with.
 * @returns The flags, warnings about the model itself switched off.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { nodePermissionFlags } from "./permissions.ts";
 *
 * const flags = nodePermissionFlags(
 *   { read: [], write: [], net: ["db.example:8080"], nativeDriver: false, databaseUrl: "x" },
 *   { code: ["/srv/beacon/dist"], permissionFlag: "--permission" },
 * );
 * assert.ok(flags.includes("--permission"));
 * assert.ok(!flags.includes("--allow-addons")); // a remote database loads no native code
 * assert.ok(!flags.some((flag) => flag.startsWith("--allow-fs-write")));
 * ```
 */
export function nodePermissionFlags(needs: ReviewNeeds, facts: NodeFacts): string[] {
  return [
    facts.permissionFlag,
    ...[...facts.code, ...needs.read].map((path) => `--allow-fs-read=${path}`),
    ...needs.write.map((path) => `--allow-fs-write=${path}`),
    ...(needs.nativeDriver ? ["--allow-addons"] : []),
    // The model announces itself (ExperimentalWarning) and warns that addons escape it
    // (SecurityWarning) on every run; docs/review.md says both once.
    "--disable-warning=ExperimentalWarning",
    "--disable-warning=SecurityWarning",
  ];
}
