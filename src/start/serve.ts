/**
 * The one start-up and shutdown path of every server entry (Deno, Bun, Node). Each entry gives
 * only its runtime's facts (how to read a variable, how to listen, how to exit); this module
 * decides the rest the same way everywhere:
 *
 * 1. Read the configuration. A refusal is one line on stderr and exit code 2 :
 *    an invalid variable, a busy port or an address that cannot be bound.
 * 2. An embedded database file that cannot be created or opened refuses the start, naming the
 *    path and the reason (`database_file.ts`): unlike a remote database, it will not come up.
 *    Then try to open (and migrate) the database once, for at most a few seconds, so that a server
 *    whose database is there listens with it open; then listen whatever the outcome. Until the
 *    database is reachable every request gets `503 unavailable` (createBeacon does that), and
 *    {@linkcode keepOpening} retries in the background with back-off, so migrations are applied
 *    as soon as it is. A remote database that is down never stops the start.
 *    Each failure is logged with its cause in words (`../database_error.ts`), and the migrations a
 *    start applied once, as "from version A to B".
 *    The signing key is resolved before (`server_key.ts`: the environment, a key file, or a key
 *    file made beside an embedded database on its first open); a key that is missing for a
 *    remote database or is not the one that signed the latest tree head refuses the start in one
 *    line, exit code 2, whenever the database is first reached.
 * 3. On SIGINT / SIGTERM: stop accepting, let in-flight requests finish, close the database,
 *    print `{"event":"shutdown",…}` and exit 0.
 *
 * @module
 */
import { BEACON_VERSION } from "../version.ts";
import type { Beacon } from "../types.ts";
import { DEFAULT_DATABASE_URL } from "../defaults.ts";
import {
  beaconForServer,
  closeAndReport,
  configFromEnvironment,
  publicUrlFact,
  type ServerConfig,
  StartupError,
} from "./config.ts";
import { describeDatabaseError } from "../database_error.ts";
import { sleep } from "../timers.ts";
import { checkDatabaseFile } from "./database_file.ts";
import { type ServerKey, serverSigningKey } from "./server_key.ts";

/** A listening server, as an entry's `listen` returns it. */
export interface Listening {
  /** The bound port (the chosen one when `PORT=0`). */
  readonly port: number;
  /** Stops accepting and resolves when in-flight requests have finished. */
  close(): Promise<void>;
}

/** What one runtime gives the shared path. */
export interface ServerRuntime {
  /** Reads an environment variable. */
  env(name: string): string | undefined;
  /** Starts listening with the Beacon's fetch handler; rejects when it cannot bind. */
  listen(config: ServerConfig, beacon: Beacon): Promise<Listening>;
  /** Calls `handler` on SIGINT and SIGTERM. */
  onStopSignal(handler: () => void): void;
  /** Ends the process. */
  exit(code: number): void;
}

/** Prints one JSON line on stdout (the events tests, the benchmark and operators read). */
export function logEvent(event: Record<string, unknown>): void {
  console.log(JSON.stringify(event));
}

/** The one-line message for an error that stops a start. */
export function refusalMessage(error: unknown, config?: ServerConfig): string {
  if (error instanceof StartupError) return error.message;
  const code = (error as { code?: unknown })?.code;
  const name = (error as Error)?.name;
  const where = config === undefined ? "" : ` ${config.hostname}:${config.port}`;
  if (code === "EADDRINUSE" || name === "AddrInUse") {
    return `Cannot start: the address${where} is already in use; set PORT (or BEACON_HOSTNAME) ` +
      "to a free one";
  }
  if (code === "EACCES" || name === "PermissionDenied") {
    return `Cannot start: not permitted to listen on${where}; choose a PORT above 1023 or ` +
      "grant the permission";
  }
  if (code === "EADDRNOTAVAIL" || name === "AddrNotAvailable" || code === "ENOTFOUND") {
    return `Cannot start: cannot listen on${where}: BEACON_HOSTNAME is not an address of this ` +
      "machine";
  }
  // Anything else: its name only (a message may quote configuration such as a URL).
  return `Cannot start: listening on${where} failed (${name ?? "unknown error"})`;
}

/** How long the start waits for the first opening of the database before listening anyway. */
const FIRST_OPEN_WAIT_MS = 5_000;

/** Back-off of the background database opening: 0.5 s doubling to 30 s. */
const OPEN_RETRY_FIRST_MS = 500;
const OPEN_RETRY_MAX_MS = 30_000;

/**
 * Whether an error refuses the start (one line on stderr, exit 2) rather than being retried: a
 * configuration that cannot work, or a signing key that is missing or changed
 * (src/signing/key.ts, src/signing/key_change.ts), which another attempt would not change.
 */
export function refusesStart(error: unknown): error is Error {
  return error instanceof StartupError ||
    (error as { refusesStart?: unknown })?.refusesStart === true;
}

/**
 * The once-per-start notice of a store that keeps its private key in the database (an earlier
 * version's default): whoever can read the database can sign receipts and tree heads.
 */
const KEY_IN_DATABASE_WARNING = {
  event: "warning",
  message: "the database keeps the private signing key (its secrets table): whoever can read " +
    "the database can sign receipts and tree heads; move it to a key file with `review key " +
    "move-out` (deno task review key move-out, npm run review -- key move-out, bun run review " +
    "key move-out; docs/keys.md)",
};

/**
 * Opens (and migrates) the database in the background, retrying with back-off until it works or
 * `stopped()` says the server is stopping. Logs `{"event":"database","state":"unavailable",
 * "error":<class name>,"cause":<words>,…}` on each failure (the cause in fixed words, never the
 * error's message, which may quote a credential) and `{"event":"database","state":"ready",
 * "databaseCreated":…,"signingKeyGenerated":…,"signingKey":<where it is kept>,…,"schema":{"from":A,
 * "to":B}}` once, after a `{"event":"migrations",…}` line when this start applied any, and
 * before a warning when the database keeps the private key. Resolves with the error of a refused
 * start (a missing or changed key) instead of retrying it.
 */
export async function keepOpening(
  beacon: Beacon,
  stopped: () => boolean,
  key: Omit<ServerKey, "options"> = { where: "unknown", configured: false, ephemeral: false },
): Promise<Error | undefined> {
  let delay = OPEN_RETRY_FIRST_MS;
  let failures = 0;
  while (!stopped()) {
    try {
      const facts = await beacon.ready();
      if (stopped()) return;
      const { from, to } = facts.schema;
      if (from !== to) {
        logEvent({
          event: "migrations",
          from,
          to,
          message: `applied migrations from version ${from} to ${to}`,
        });
      }
      const inDatabase = facts.signingKeyInDatabase && !key.ephemeral;
      // A database or key created on a start that expected them is how a lost database shows.
      logEvent({
        event: "database",
        state: "ready",
        ...facts,
        // Without a configured key, a key kept in the database is the one in use.
        signingKey: inDatabase && !key.configured ? "the database (secrets table)" : key.where,
      });
      if (inDatabase) logEvent(KEY_IN_DATABASE_WARNING);
      return;
    } catch (error) {
      if (stopped()) return;
      if (refusesStart(error)) return error;
      logEvent({
        event: "database",
        state: "unavailable",
        error: (error as Error)?.name ?? "unknown",
        cause: describeDatabaseError(error),
        time: new Date().toISOString(),
        failures: ++failures, // attempts failed in a row, this one included
        retryInMs: delay,
      });
      await sleep(delay);
      delay = Math.min(delay * 2, OPEN_RETRY_MAX_MS);
    }
  }
}

/**
 * Logs accept errors (`EMFILE`, `ENFILE`: the process or system is out of file descriptors)
 * with back-off: the first at once, then at most one line per interval, which doubles up to a
 * minute while they continue, with the count of those not logged.
 */
export function acceptErrorLogger(runtime: string): (error: unknown) => void {
  let next = 0;
  let interval = 1_000;
  let unlogged = 0;
  return (error) => {
    const now = Date.now();
    if (now < next) {
      unlogged++;
      return;
    }
    logEvent({
      event: "accept-error",
      runtime,
      code: (error as { code?: unknown })?.code ?? (error as Error)?.name ?? "unknown",
      cause: describeDatabaseError(error),
      time: new Date(now).toISOString(),
      suppressed: unlogged,
    });
    unlogged = 0;
    next = now + interval;
    interval = Math.min(interval * 2, 60_000);
  };
}

/** Runs a server entry: configuration, its signing key, listening, background opening, shutdown. */
export async function runServer(runtime: ServerRuntime): Promise<void> {
  let config: ServerConfig;
  let key: ServerKey;
  let beacon: Beacon;
  try {
    config = configFromEnvironment((name) => runtime.env(name));
    await checkDatabaseFile(config.options.database?.url ?? DEFAULT_DATABASE_URL);
    key = await serverSigningKey(config);
    beacon = beaconForServer(config, key.options);
  } catch (error) {
    console.error(refusalMessage(error));
    return runtime.exit(2);
  }
  let stopping = false;
  let waited: ReturnType<typeof setTimeout> | undefined;
  let firstFailure: unknown;
  await Promise.race([
    // Its failure is logged and retried by keepOpening below, unless it refuses the start.
    beacon.ready().catch((error) => firstFailure = error),
    new Promise((resolve) => waited = setTimeout(resolve, FIRST_OPEN_WAIT_MS)),
  ]);
  clearTimeout(waited);
  if (refusesStart(firstFailure)) {
    console.error(firstFailure.message);
    await beacon.close().catch(() => {});
    return runtime.exit(2);
  }
  let listening: Listening;
  try {
    listening = await runtime.listen(config, beacon);
  } catch (error) {
    console.error(refusalMessage(error, config));
    await beacon.close().catch(() => {});
    return runtime.exit(2);
  }
  logEvent({
    event: "listening",
    version: BEACON_VERSION,
    hostname: config.hostname,
    port: listening.port,
    publicUrl: publicUrlFact(config),
  });
  if (config.ignored !== undefined) {
    logEvent({
      event: "warning",
      ignored: config.ignored,
      message: `${config.ignored.join(" and ")} only apply to an embedded database (file:); ` +
        "with this BEACON_DATABASE_URL they do nothing",
    });
  }
  const stop = async (code: number) => {
    if (stopping) return;
    stopping = true;
    await listening.close();
    try {
      await closeAndReport(beacon);
    } catch (error) {
      // The database never opened (or failed while closing): nothing is left to flush.
      logEvent({ event: "shutdown", error: (error as Error)?.name ?? "unknown" });
    }
    runtime.exit(code);
  };
  // A database that came up late without a usable key: refused as at the start, never retried.
  void keepOpening(beacon, () => stopping, key).then((refused) => {
    if (refused === undefined) return;
    console.error(refused.message);
    void stop(2);
  });
  runtime.onStopSignal(() => void stop(0));
}
