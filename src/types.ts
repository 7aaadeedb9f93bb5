/**
 * The public types of the library: what {@linkcode createBeacon} takes and what it returns.
 *
 * @module
 */
import type { DatabaseConfig } from "./store/client.ts";
import type { RequestLogEntry } from "./http/request_log.ts";
import type { ListenerScheme } from "./http/target.ts";
import type { RateLimit, RateLimiter } from "./limits/rate.ts";
import type { NewSigningKey } from "./signing/key.ts";

/** Options of {@linkcode createBeacon}; every field has a safe default. */
export interface BeaconOptions {
  /** The database. Default: `file:data/beacon.db` (created on first use). */
  database?: DatabaseConfig;
  /**
   * The public origin used in the discovery document, the agent card and receipts, e.g.
   * `https://beacon.example.com`. Default: the listener's scheme ({@linkcode ConnectionInfo}) and
   * the request's `Host` header, validated (an invalid one is answered `400 invalid_host`), never
   * the host of an absolute-form request target nor a forwarding header. When the Beacon is mounted
   * under a path prefix of another app (which strips the prefix before calling `fetch`), include
   * it: `https://example.com/beacon`; the published URLs then carry the prefix.
   */
  publicUrl?: string;
  /** Largest accepted body in bytes. Default 65536. */
  maxBodyBytes?: number;
  /** How long a body may take to arrive, in milliseconds. Default 10000. */
  bodyTimeoutMs?: number;
  /**
   * Per-source rate limit: `"10/1m"` syntax, a parsed limit, a limiter of your own, or `"off"`.
   * Default `"10/1m"`.
   */
  rateLimit?: string | RateLimit | RateLimiter;
  /**
   * Per-source budget for reading receipts (native status, and every A2A request before its
   * body is read), separate from `rateLimit` so that polling never spends submissions. Same
   * forms as `rateLimit`. Default `"120/1m"`.
   */
  statusRateLimit?: string | RateLimit | RateLimiter;
  /**
   * Where the rate limiter keeps its state: `"memory"` (this process only) or `"database"`
   * (shared by every instance on the same database, one atomic UPSERT per check). Default
   * `"memory"`.
   */
  rateLimitStore?: "memory" | "database";
  /** Number of reverse proxies in front whose forwarding headers are trusted. Default 0. */
  trustedProxies?: number;
  /**
   * The one forwarding header the trusted proxies write: `"x-forwarded-for"` (default) or
   * `"forwarded"` (RFC 7239). The other is ignored.
   */
  trustedProxyHeader?: "x-forwarded-for" | "forwarded";
  /**
   * How long idempotency keys (native `Idempotency-Key`, A2A `messageId`) are remembered, in
   * milliseconds. Default 1 hour: long enough for a client backing off up to 5 minutes between
   * attempts to retry about 19 times, short enough that another client behind the same address
   * has 24 times less time than with a day to probe for a receipt (docs/threat-model.md §6.21).
   */
  idempotencyWindowMs?: number;
  /**
   * Salt for hashing source addresses. Default: a random salt generated once and kept in the
   * database. Keep it outside the database to make stored hashes useless to a database thief.
   */
  sourceSalt?: Uint8Array<ArrayBuffer>;
  /**
   * The Ed25519 key that signs receipts: unpadded base64url of a 32-byte seed (or its PKCS#8
   * form), or the seed's bytes. Default: the key an earlier version kept in the database, else
   * a new one as `newSigningKey` says.
   */
  signingKey?: string | Uint8Array;
  /**
   * Where a new key goes when `signingKey` is not given and the database keeps none:
   * `"database"` (the default: its `secrets` table, so whoever reads the database can sign;
   * right for `:memory:`), `"refuse"` (opening fails with `SigningKeyMissing`), or a function
   * that makes one and keeps it durably outside the database (the server entries write a key
   * file: docs/keys.md).
   */
  newSigningKey?: NewSigningKey;
  /**
   * The keys that signed this log before `signingKey` (`BEACON_PREVIOUS_SIGNING_KEYS`): each a
   * raw Ed25519 public key or a seed, unpadded base64url. When the store's latest tree head was
   * signed by one of them, opening records a signed rotation statement once and continues the
   * log under `signingKey` (docs/keys.md); a seed co-signs the statement. Without it a key
   * change is refused (`SigningKeyChanged`).
   */
  previousSigningKeys?: readonly string[];
  /**
   * How often a signed tree head (a checkpoint over every submission, src/tree_heads.ts) is
   * signed while the log grows, in milliseconds; one is also signed at start when the log grew and
   * at `close()`. `"off"`: the Beacon signs none (Workers). Default 2000 (two seconds).
   */
  checkpointIntervalMs?: number | "off";
  /** Clock in epoch milliseconds (tests pass a fake one). Default `Date.now`. */
  now?: () => number;
  /** Randomness source (tests may pass a seeded one). Default `crypto.getRandomValues`. */
  randomBytes?: (length: number) => Uint8Array<ArrayBuffer>;
  /** Receives one entry per request: never content, never raw addresses. */
  log?: (entry: RequestLogEntry) => void;
  /** Receives unexpected errors (never sent to clients). */
  onError?: (error: unknown) => void;
  /**
   * Serves Prometheus metrics at `GET /metrics` to requests that carry this bearer token
   * (`Authorization: Bearer <token>`). Without it there is no `/metrics` (404) and nothing is
   * counted. docs/deploy.md lists the series.
   */
  metricsToken?: string;
}

/**
 * Facts from the runtime about one request: the second argument of {@linkcode Beacon.fetch}, which
 * is required, so that an embedding cannot forget the client address without a type error.
 */
export interface ConnectionInfo {
  /**
   * The peer's IP address as the runtime saw it (`info.remoteAddr.hostname` on `Deno.serve`,
   * `server.requestIP(request)?.address` on Bun, `socket.remoteAddress` on `node:http`), which
   * keys the per-source rate limits and the stored source hash. `null` says, explicitly, that
   * there is none ({@linkcode UNKNOWN_CLIENT}): every request without one shares one bucket,
   * unless `trustedProxies` is set and a trusted proxy's forwarding header names the client.
   */
  remoteAddress: string | null;
  /**
   * The scheme the listener speaks: `https` when the entry terminates TLS itself. Default
   * `http`. Used for the public origin when no `publicUrl` is set; never read from the request.
   */
  scheme?: ListenerScheme;
  /**
   * The path the Beacon is mounted under, when the caller strips it from the request before
   * `fetch` (`/beacon`; Hono's `app.mount`, the Node adapter's `prefix`): every URL the Beacon
   * publishes (discovery, agent card, receipts, status) then carries it. A configured `publicUrl`
   * wins. Default: none, the Beacon is at the root. Anything but a path of segments is ignored.
   */
  basePath?: string;
}

/**
 * The {@linkcode ConnectionInfo} to pass when the runtime gives no peer address: every such
 * request shares one rate-limit bucket (with `trustedProxies`, a trusted forwarding header still
 * names the client). Passing it says so on purpose; omitting the argument is a type error.
 */
export const UNKNOWN_CLIENT: ConnectionInfo = Object.freeze({ remoteAddress: null });

/**
 * What a start found or created, for the operator's start log line: a database or a signing key
 * created on a start that was meant to find them is how a lost or replaced database shows.
 */
export interface StartFacts {
  /** The database was created (every migration applied) by this start. */
  readonly databaseCreated: boolean;
  /** The schema version before this start's migrations (0: a new database) and after them. */
  readonly schema: { readonly from: number; readonly to: number };
  /** The receipt signing key was generated and stored by this start (a new identity). */
  readonly signingKeyGenerated: boolean;
  /** `sha256:<hex>` of the signing key's public half (docs/protocol-0.1.md §6). */
  readonly signingKeyFingerprint: string;
  /**
   * The keys the log rotated from, oldest first, each with the last row it vouches for
   * (docs/keys.md, "Rotating the key"); absent when the log never rotated.
   */
  readonly previousSigningKeys?: readonly {
    readonly fingerprint: string;
    readonly lastSeq: number;
  }[];
  /**
   * The database keeps a private signing key in its `secrets` table (an earlier version's
   * default): whoever reads the database can sign. `review key move-out` moves it to a key file.
   */
  readonly signingKeyInDatabase: boolean;
}

/** A running Beacon. */
export interface Beacon {
  /**
   * The fetch handler. `info` is required: the client address keys the rate limits (pass
   * {@linkcode UNKNOWN_CLIENT} where the runtime gives none, and all such clients share a bucket).
   */
  fetch(request: Request, info: ConnectionInfo): Promise<Response>;
  /**
   * Resolves once the database is open and migrated, saying what this start created; rejects if
   * it cannot be opened.
   */
  ready(): Promise<StartFacts>;
  /**
   * The answer for a request the entry gives up on (a deadline): `503 unavailable`, through the
   * same door as every other response (hardening headers, one log line).
   */
  unavailable(request: Request): Response;
  /**
   * Brings the signed log up to date now: signs and stores a head (and its tiles) when the log
   * grew, continuing from the newest stored head. For platforms whose own scheduler runs it (a
   * Workers Cron Trigger, `Deno.cron`); a server signs on its own timer. Rejects when the
   * database fails or the store cannot be vouched for (`TreeHeadRefused`).
   */
  signLog(): Promise<void>;
  /** Finishes queued writes and closes the database. */
  close(): Promise<void>;
}
