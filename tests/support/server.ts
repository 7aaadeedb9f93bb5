/**
 * Starts the real Beacon server (`src/adapter/deno/server.ts`, the `deno task start` entry) as a child
 * process on an ephemeral loopback port with a temporary database file, for end-to-end tests.
 *
 * @module
 */
import { childEnvironment, startServerProcess } from "../../scripts/runtimes.ts";
import { ROOT } from "../../scripts/tools.ts";
import {
  npmCacheFolder,
  SERVER_V8_FLAGS,
  serverPermissionFlags,
} from "../../src/cli/permissions.ts";

/** A running server process. */
export interface ServerProcess {
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  /** The database URL it uses (`file:<tmp>/beacon.db`). */
  readonly databaseUrl: string;
  /** The temporary folder holding the database. */
  readonly directory: string;
  /** JSON lines the server printed so far. */
  readonly lines: Record<string, unknown>[];
  /** Everything the server wrote to stderr so far. */
  stderr(): string;
  /** The server's process id. */
  readonly pid: number;
  /** Sends a signal and waits for the exit status. */
  stop(signal?: Deno.Signal): Promise<Deno.CommandStatus>;
}

const ENTRY = new URL("../../src/adapter/deno/server.ts", import.meta.url).pathname;
let npmCache: Promise<string> | undefined;

/**
 * `deno run` with the server entry under the same narrow permissions `deno task start` uses, so
 * every end-to-end test also proves the server needs nothing more.
 */
async function runArgs(env: Record<string, string>): Promise<string[]> {
  const flags = serverPermissionFlags({
    hostname: env.BEACON_HOSTNAME,
    port: Number(env.PORT),
    databaseUrl: env.BEACON_DATABASE_URL,
    npmCache: await (npmCache ??= npmCacheFolder()),
    cwd: ROOT,
    signingKeyFile: env.BEACON_SIGNING_KEY_FILE || undefined,
  });
  return ["run", ...flags, ...SERVER_V8_FLAGS, ENTRY];
}

/** Starts the server; `env` adds or overrides environment variables. */
export async function startServer(
  options: {
    env?: Record<string, string>;
    directory?: string;
    /** A command and its arguments to run the server under (e.g. `prlimit --nofile=…`). */
    wrapper?: string[];
  } = {},
): Promise<ServerProcess> {
  const directory = options.directory ?? await Deno.makeTempDir({ prefix: "beacon-test-" });
  const env: Record<string, string> = {
    PORT: "0",
    BEACON_HOSTNAME: "127.0.0.1",
    BEACON_DATABASE_URL: `file:${directory}/beacon.db`,
    BEACON_RATE_LIMIT: "off",
    BEACON_STATUS_RATE_LIMIT: "off",
    ...options.env,
  };
  const databaseUrl = env.BEACON_DATABASE_URL;
  const [command, ...args] = [...options.wrapper ?? [], Deno.execPath(), ...await runArgs(env)];
  const server = await startServerProcess(
    command,
    args,
    env,
    30_000,
  );
  return {
    url: server.url,
    databaseUrl,
    directory,
    lines: server.lines,
    stderr: () => server.stderr(),
    pid: server.pid,
    stop: (signal?: Deno.Signal) => server.stop(signal),
  };
}

/**
 * Runs the server entry to its end, for starts that must be refused: its exit code and the lines
 * it wrote to stderr. `env` must name the database.
 */
export async function refusedStart(
  env: Record<string, string>,
): Promise<{ code: number; lines: string[] }> {
  const all: Record<string, string> = { PORT: "0", BEACON_HOSTNAME: "127.0.0.1", ...env };
  const output = await new Deno.Command(Deno.execPath(), {
    args: await runArgs(all),
    cwd: ROOT,
    clearEnv: true,
    env: { ...childEnvironment(), ...all },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const lines = new TextDecoder().decode(output.stderr).split("\n").filter((line) => line !== "");
  return { code: output.code, lines };
}

/** Closes raw client connections a test opened to a server, any the server closed already too. */
export function closeAll(connections: Deno.Conn[]): void {
  for (const connection of connections) {
    try {
      connection.close();
    } catch {
      // closed by the server already
    }
  }
}
