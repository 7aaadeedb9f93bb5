/**
 * The narrowest Deno permissions the review tool runs with, computed like the server's
 * (cli/permissions.ts, whose helpers it reuses) from the command line and the environment.
 * launch.ts starts `main.ts` with them; docs/review.md lists them:
 *
 * - `--allow-read=<database folder>,<npm cache>,<src/review>`: the embedded database, the npm
 *   packages' code (the native libSQL module is loaded from the cache), and the console's
 *   static files;
 * - `--allow-write=<database folder>[,<export file>]`: the database folder (the driver opens
 *   its WAL and shared-memory files there; reading commands never write rows), and for
 *   `export --out FILE` that one file;
 * - `--allow-net`: nothing, except the remote database's host, and for `serve` its listen
 *   address (loopback unless `--allow-non-loopback`);
 * - `--allow-env=<the variables the tool reads>,LIBSQL_JS_DEV`;
 * - `--allow-ffi` and `--allow-sys=…` only with a file database (the native driver and its
 *   libc detection);
 * - no `--allow-run`: no subprocesses. No signing key is needed for anything but signing a
 *   checkpoint, and only `BEACON_SIGNING_KEY` can give one.
 *
 * @module
 */
import { databaseFolder, DEPENDENCY_VARIABLES, SYS_FACTS } from "../cli/permissions.ts";
import { DEFAULT_DATABASE_URL } from "../defaults.ts";

/** Every environment variable the review tool reads. */
export const REVIEW_VARIABLES = [
  "BEACON_DATABASE_URL",
  "BEACON_DATABASE_AUTH_TOKEN",
  "BEACON_SIGNING_KEY",
  "BEACON_REVIEWER",
];

/** The folder of the review tool's own files (the console's static files are read at start). */
const REVIEW_FOLDER = new URL(".", import.meta.url).pathname.replace(/\/$/, "");

/** What the flags are computed from: the command line as `main.ts` will read it. */
export interface ReviewFacts {
  /** The arguments after `deno task review`. */
  readonly args: readonly string[];
  /** Reads an environment variable. */
  readonly env: (name: string) => string | undefined;
  /** Deno's npm cache folder. */
  readonly npmCache: string;
  /** The working directory, for relative paths. */
  readonly cwd: string;
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

function absolute(path: string, cwd: string): string {
  return path.startsWith("/") ? path : `${cwd}/${path}`;
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
  const { args, cwd } = facts;
  const command = args.find((arg, i) =>
    !arg.startsWith("-") && !["--database", "--width"].includes(args[i - 1] ?? "")
  );
  const env = (name: string) => {
    const value = facts.env(name);
    return value === undefined || value === "" ? undefined : value;
  };
  const url = option(args, "database") ?? env("BEACON_DATABASE_URL") ?? DEFAULT_DATABASE_URL;
  const read = [facts.npmCache, REVIEW_FOLDER];
  const write: string[] = [];
  const net: string[] = [];
  const flags: string[] = [];
  if (url.startsWith("file:")) {
    const folder = databaseFolder(url, cwd);
    read.push(folder);
    write.push(folder);
    flags.push("--allow-ffi", `--allow-sys=${SYS_FACTS.join(",")}`);
  } else if (url === ":memory:") {
    flags.push("--allow-ffi", `--allow-sys=${SYS_FACTS.join(",")}`);
  } else {
    try {
      const remote = new URL(url.replace(/^libsql:/, "https:"));
      net.push(remote.port === "" ? remote.hostname : `${remote.hostname}:${remote.port}`);
    } catch {
      // main.ts reports the bad URL; it gets no network for it.
    }
  }
  if (command === "export") {
    const out = option(args, "out");
    if (out !== undefined) write.push(absolute(out, cwd));
  }
  if (command === "serve") {
    const hostname = option(args, "hostname") ?? "127.0.0.1";
    const port = option(args, "port");
    const host = hostname.includes(":") && !hostname.startsWith("[") ? `[${hostname}]` : hostname;
    net.push(port === undefined || port === "0" ? host : `${host}:${port}`);
  }
  return [
    `--allow-read=${read.join(",")}`,
    ...(write.length === 0 ? [] : [`--allow-write=${write.join(",")}`]),
    ...(net.length === 0 ? [] : [`--allow-net=${net.join(",")}`]),
    `--allow-env=${[...REVIEW_VARIABLES, ...DEPENDENCY_VARIABLES].join(",")}`,
    ...flags,
    "--no-prompt",
  ];
}
