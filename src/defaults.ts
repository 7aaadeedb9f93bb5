/**
 * Every default of the Beacon in one place, shared by the server, the library and the operator
 * tools, so that `deno task start`, `createBeacon()`, `deno task migrate` and `deno task review`
 * find the same database and the documentation has one place to be checked against.
 *
 * @module
 */

/** The embedded database used when none is configured (`BEACON_DATABASE_URL`). */
export const DEFAULT_DATABASE_URL = "file:data/beacon.db";

/** Largest accepted body in bytes. */
export const DEFAULT_MAX_BODY_BYTES = 65_536;

/** How long a body may take to arrive, in milliseconds. */
export const DEFAULT_BODY_TIMEOUT_MS = 10_000;

/** Per-source submission budget. */
export const DEFAULT_RATE_LIMIT = "10/1m";

/** Per-source budget for reading receipts. */
export const DEFAULT_STATUS_RATE_LIMIT = "120/1m";

/** Where the rate limiters keep their state: this process only. */
export const DEFAULT_RATE_LIMIT_STORE = "memory";

/** Reverse proxies in front whose forwarding headers are trusted: none. */
export const DEFAULT_TRUSTED_PROXIES = 0;

/** The forwarding header the trusted proxies write. */
export const DEFAULT_TRUSTED_PROXY_HEADER = "x-forwarded-for";

/**
 * How long idempotency keys are remembered: 1 hour (docs/threat-model.md §6.21, and the option's
 * documentation in src/types.ts).
 */
export const DEFAULT_IDEMPOTENCY_WINDOW_MS = 60 * 60 * 1000;

/**
 * Default of `BEACON_CHECKPOINT_INTERVAL`: a signed tree head about two seconds behind the log
 * while it grows. Each head costs one signature and the rows since the last one (the tree is
 * kept in memory), and a tick while a signing runs is skipped, so heads coalesce under load.
 */
export const DEFAULT_CHECKPOINT_INTERVAL_MS = 2_000;

/** Default deadline of one database call, in milliseconds. */
export const DEFAULT_DATABASE_TIMEOUT_MS = 10_000;

/**
 * The connection bounds of the Node server entry (src/adapter/node/server.ts; docs/deploy.md,
 * "Connections and timeouts"): the whole head within 10 s, the whole request within 30 s, an idle
 * keep-alive connection closed after 5 s.
 */
export const NODE_TIMEOUTS = {
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  keepAliveTimeoutMs: 5_000,
} as const;
