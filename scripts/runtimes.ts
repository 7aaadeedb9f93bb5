/**
 * Starts the Beacon on Bun, Node or workerd (through Miniflare) from Deno, for the `deno.json`
 * tasks `start:bun`, `start:node` and `start:workers` and the tests ({@linkcode startRuntime}).
 * Each runtime's tools are installed on first use of that runtime only (scripts/tools.ts):
 *
 * | runtime | what runs | installs |
 * |---|---|---|
 * | Bun | `bun src/adapter/bun/server.ts` (the TypeScript sources) | root `package.json`, `tools/bun/` |
 * | Node | `node dist/server.mjs` after `npm run build` | root `package.json` |
 * | workerd | `tools/workers/dist/worker.js` in Miniflare | `tools/workers/` |
 *
 * Bun and Node users need none of this: `bun install && bun run start:bun`, `npm install &&
 * npm start` (README.md). Every runtime reads the same `PORT`, `BEACON_HOSTNAME` and `BEACON_*`
 * variables and prints the same JSON lines (`{"event":"listening",...}`, then
 * `{"event":"shutdown",...}` after SIGINT or SIGTERM). On workerd the `BEACON_*` variables become
 * the worker's `env` bindings, and the database must be remote (`libsql://`, `https://`,
 * `http://` for a local sqld): Workers cannot load the embedded one.
 *
 * Usage:
 *
 * ```sh
 * deno run -A scripts/runtimes.ts start bun|node|workers
 * ```
 *
 * @example Start the Node server on a free loopback port and stop it
 * ```ts ignore
 * import { startRuntime } from "./scripts/runtimes.ts";
 *
 * const server = await startRuntime("node", { PORT: "0", BEACON_HOSTNAME: "127.0.0.1" });
 * console.log(server.url);
 * await server.stop();
 * ```
 *
 * @module
 */
import { isEmbedded } from "../src/store/client.ts";
import { workersDatabaseRefusal } from "../src/adapter/workers/refusal.mjs";
import { build } from "./build.ts";
import { bunExecutable, ensurePackages, nodeExecutable, ROOT } from "./tools.ts";

/** The runtimes this script starts (Deno is `deno task start`). */
export type RuntimeName = "bun" | "node" | "workers";

/** Every runtime this script starts. */
export const RUNTIMES: readonly RuntimeName[] = ["bun", "node", "workers"];

/** How to run one runtime's server: installs its tools and builds what it runs first. */
export async function runtimeCommand(
  runtime: RuntimeName,
): Promise<{ command: string; args: string[] }> {
  switch (runtime) {
    case "bun":
      await ensurePackages();
      return { command: await bunExecutable(), args: [`${ROOT}/src/adapter/bun/server.ts`] };
    case "node":
      return { command: await nodeExecutable(), args: [await build("package")] };
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
  /** The process id of the started command. */
  readonly pid: number;
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

/**
 * Variables a child needs to find its runtime, caches, certificates, proxy and registry;
 * nothing of the Beacon's own `BEACON_*` set, so a developer's own configuration
 * cannot change a test.
 */
const PASSED_THROUGH = [
  "PATH",
  "HOME",
  "TMPDIR",
  "XDG_CACHE_HOME",
  "DENO_DIR",
  "DENO_CERT",
  "DENO_TLS_CA_STORE",
  "SSL_CERT_FILE",
  "SSL_CERT_DIR",
  "NODE_EXTRA_CA_CERTS",
  "HTTP_PROXY",
  "HTTPS_PROXY",
  "NO_PROXY",
  "http_proxy",
  "https_proxy",
  "no_proxy",
];

/** Prefixes of npm's own settings (registry, cache, certificates), passed through too. */
const PASSED_THROUGH_PREFIXES = ["NPM_CONFIG_", "npm_config_"];

/**
 * The environment every child process of the tests and scripts starts from: the runtime's own
 * variables ({@linkcode PASSED_THROUGH}), never a `BEACON_*` one.
 */
export function childEnvironment(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(Deno.env.toObject())) {
    if (
      PASSED_THROUGH.includes(name) ||
      PASSED_THROUGH_PREFIXES.some((prefix) => name.startsWith(prefix))
    ) {
      env[name] = value;
    }
  }
  return env;
}

/** A TCP port on the loopback interface that was free a moment ago (the caller binds it next). */
export function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const { port } = listener.addr as Deno.NetAddr;
  listener.close();
  return port;
}

/**
 * The seed every test and benchmark server on a remote database signs with unless its caller
 * names a key (or sets `BEACON_SIGNING_KEY` empty, for none): a remote database needs a key from
 * the environment (docs/keys.md), and those runs are about something else. Public, so never a
 * key to trust: it exists only for throwaway databases.
 */
export const TEST_SIGNING_KEY = "dGVzdCBzaWduaW5nIGtleSwgbmV2ZXIgYSBzZWNyZXQ";

/** `env` with {@linkcode TEST_SIGNING_KEY} for a remote database that names no key. */
function withTestSigningKey(env: Record<string, string>): Record<string, string> {
  const remote = /^(libsql|https?):\/\//.test(env.BEACON_DATABASE_URL ?? "");
  if (!remote || "BEACON_SIGNING_KEY" in env || "BEACON_SIGNING_KEY_FILE" in env) return env;
  return { ...env, BEACON_SIGNING_KEY: TEST_SIGNING_KEY };
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
  cwd: string = ROOT,
): Promise<RunningServer> {
  const child = new Deno.Command(command, {
    args,
    cwd,
    clearEnv: true,
    env: { ...childEnvironment(), ...withTestSigningKey(env) },
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
  const host = (env.BEACON_HOSTNAME ?? "127.0.0.1").replace(/^\[(.*)\]$/, "$1");
  return {
    url: `http://${host.includes(":") ? `[${host}]` : host}:${listening}`,
    lines,
    stderr: () => errors,
    pid: child.pid,
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
 * `PORT` and `BEACON_HOSTNAME`; `PORT: "0"` picks a free port), under `wrapper` if given (a
 * command and its arguments, such as `prlimit --nofile=128`). Resolves once it listens.
 */
export async function startRuntime(
  runtime: RuntimeName,
  env: Record<string, string>,
  wrapper: string[] = [],
): Promise<RunningServer> {
  const { command, args } = await runtimeCommand(runtime);
  const [first, ...rest] = [...wrapper, command, ...args];
  return startServerProcess(first, rest, env);
}

async function main(args: string[]): Promise<number> {
  const [action, runtime] = args;
  if (action !== "start" || !RUNTIMES.includes(runtime as RuntimeName)) {
    console.error("Usage: deno run -A scripts/runtimes.ts start bun|node|workers");
    return 2;
  }
  if (runtime === "workers" && isEmbedded(Deno.env.get("BEACON_DATABASE_URL") || "file:")) {
    console.error(workersDatabaseRefusal("deno task db"));
    return 2;
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
