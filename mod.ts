/**
 * The Beacon: a public intake where autonomous software agents submit messages for asynchronous
 * human review, over its native protocol (beacon/0.1) and A2A 1.0 (JSON-RPC). One standards-only
 * `fetch` handler; runtime entry files in `src/runtime/` only adapt it.
 *
 * @example Serve the Beacon on Deno with an embedded database
 * ```ts ignore
 * import { createBeacon } from "./mod.ts";
 *
 * const beacon = createBeacon({ database: { url: "file:data/beacon.db" } });
 * await beacon.ready();
 * Deno.serve((request, info) => beacon.fetch(request, { remoteAddress: info.remoteAddr.hostname }));
 * ```
 *
 * @module
 */
import { buildHandler } from "./src/handler.ts";
import { Intake } from "./src/intake/accept.ts";
import { SourceHasher } from "./src/intake/source_hash.ts";
import { DEFAULT_DATABASE_URL } from "./src/defaults.ts";
import {
  MemoryRateLimiter,
  parseRateLimit,
  type RateLimit,
  type RateLimiter,
} from "./src/limits/rate.ts";
import { discoveryDocument } from "./src/native/discovery.ts";
import { originDocuments } from "./src/documents.ts";
import { SharedRateLimiter } from "./src/limits/shared_rate.ts";
import type { DatabaseConfig } from "./src/store/client.ts";
import { SubmissionStore } from "./src/store/store.ts";
import { errorResponse } from "./src/errors.ts";
import { loadSigningKey, type SigningKey, signReceipts } from "./src/signing/mod.ts";
import type { RequestLogEntry } from "./src/middleware/request_log.ts";
import { createDoor } from "./src/middleware/door.ts";
import type { ListenerScheme } from "./src/http/target.ts";
import { embeddedFilePath, isEmbedded } from "./src/store/client.ts";
import {
  type FileChange,
  type FileGuard,
  guardDatabaseFile,
  type IdentityStamp,
} from "./src/store/file_guard.ts";
import {
  DEFAULT_CHECKPOINT_INTERVAL_MS,
  scheduleTreeHeads,
  type TreeHeadSchedule,
  TreeHeadSigner,
} from "./src/tree_heads.ts";

export type { DatabaseConfig } from "./src/store/client.ts";
export type { Outcome, RequestLogEntry } from "./src/middleware/request_log.ts";
export type { ListenerScheme } from "./src/http/target.ts";
export type { RateDecision, RateLimit, RateLimiter } from "./src/limits/rate.ts";
export type { IdentityCheck, Receipt } from "./src/intake/accept.ts";
export type { SubmissionKind, Surface } from "./src/store/store.ts";
export { parseRateLimit } from "./src/limits/rate.ts";

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
   * form), or the seed's bytes. Default: a key generated once and kept in the database.
   */
  signingKey?: string | Uint8Array;
  /**
   * How often a signed tree head (a checkpoint over every submission, src/tree_heads.ts) is
   * signed while the log grows, in milliseconds; one is also signed at start when the log grew and
   * at `close()`. `"off"`: the Beacon signs none (Workers). Default 5 minutes.
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
}

/** Facts from the runtime about one request. */
export interface ConnectionInfo {
  /** The peer's IP address as the runtime saw it. */
  remoteAddress?: string;
  /**
   * The scheme the listener speaks: `https` when the entry terminates TLS itself. Default
   * `http`. Used for the public origin when no `publicUrl` is set; never read from the request.
   */
  scheme?: ListenerScheme;
}

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
}

/** A running Beacon. */
export interface Beacon {
  /** The fetch handler. */
  fetch(request: Request, info?: ConnectionInfo): Promise<Response>;
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
  /** Durable commits and writes so far (group commit shares commits). */
  counters(): { commits: number; writes: number };
  /** Finishes queued writes and closes the database. */
  close(): Promise<void>;
}

const DEFAULTS = {
  database: { url: DEFAULT_DATABASE_URL },
  maxBodyBytes: 65_536,
  bodyTimeoutMs: 10_000,
  rateLimit: "10/1m",
  statusRateLimit: "120/1m",
  idempotencyWindowMs: 60 * 60 * 1000,
} as const;

function defaultRandomBytes(length: number): Uint8Array<ArrayBuffer> {
  return crypto.getRandomValues(new Uint8Array(length));
}

/** The configured limit (for the discovery document) and, for a limiter of the caller's, it. */
function resolveLimit(
  option: BeaconOptions["rateLimit"],
  fallback: string = DEFAULTS.rateLimit,
): { limit: RateLimit | undefined; custom: RateLimiter | undefined } {
  const value = option ?? fallback;
  if (typeof value === "string") return { limit: parseRateLimit(value), custom: undefined };
  if ("check" in value) return { limit: undefined, custom: value };
  return { limit: value, custom: undefined };
}

function normaliseOrigin(url: string): string {
  const parsed = new URL(url);
  // A path prefix (an embedding app's mount point) is kept; query, fragment and `/` are not.
  return parsed.origin + parsed.pathname.replace(/\/+$/, "");
}

/** Why the Beacon stopped acknowledging, as the error name its `onError` hook receives. */
const FILE_CHANGE_ERRORS: Readonly<Record<FileChange, string>> = {
  database_removed: "DatabaseFileRemoved",
  database_replaced: "DatabaseFileReplaced",
  database_overwritten: "DatabaseFileOverwritten",
  wal_removed: "DatabaseWalRemoved",
  wal_replaced: "DatabaseWalReplaced",
  shm_removed: "DatabaseShmRemoved",
  shm_replaced: "DatabaseShmReplaced",
};

/**
 * Guards an embedded database file (src/store/file_guard.ts); reports the change once, through
 * `onError`, with an error whose name says what happened (the message is fixed text).
 */
async function guardFile(
  database: DatabaseConfig,
  onError: BeaconOptions["onError"],
  identity: IdentityStamp | undefined,
): Promise<FileGuard | undefined> {
  if (!isEmbedded(database.url) || /(^|[?&])mode=memory(&|$)/.test(database.url)) return;
  const path = embeddedFilePath(database.url);
  if (path === "" || path === ":memory:") return;
  try {
    return await guardDatabaseFile(path, {
      identity,
      onChange(change) {
        const error = new Error(
          "The database file changed under the running Beacon; it answers 503 until restarted",
        );
        error.name = FILE_CHANGE_ERRORS[change];
        onError?.(error);
      },
    });
  } catch (error) {
    onError?.(error); // no permission to stat the file: run unguarded rather than not at all
    return undefined;
  }
}

/**
 * Creates a Beacon. The database opens in the background; `fetch` waits for it, and answers
 * `503 unavailable` while it cannot be opened (retrying on the next request).
 *
 * @example
 * ```ts
 * import { createBeacon } from "./mod.ts";
 *
 * const beacon = createBeacon({ database: { url: ":memory:" }, rateLimit: "off" });
 * const response = await beacon.fetch(
 *   new Request("http://127.0.0.1/beacon/0.1/submissions", {
 *     method: "POST",
 *     headers: { "content-type": "text/plain; charset=utf-8" },
 *     body: "Hello, reviewer.",
 *   }),
 *   { remoteAddress: "127.0.0.1" },
 * );
 * if (response.status !== 202) throw new Error(`expected 202, got ${response.status}`);
 * await beacon.close();
 * ```
 */
export function createBeacon(options: BeaconOptions = {}): Beacon {
  const now = options.now ?? Date.now;
  const randomBytes = options.randomBytes ?? defaultRandomBytes;
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULTS.maxBodyBytes;
  const { limit, custom } = resolveLimit(options.rateLimit);
  // The in-memory limiter lives as long as the Beacon, across database reconnects.
  const memoryLimiter = limit && new MemoryRateLimiter(limit, now);
  const status = resolveLimit(options.statusRateLimit, DEFAULTS.statusRateLimit);
  const memoryStatusLimiter = status.limit && new MemoryRateLimiter(status.limit, now);
  const publicOrigin = options.publicUrl === undefined
    ? undefined
    : normaliseOrigin(options.publicUrl);
  const door = createDoor(options.log, now);
  const refuseUnavailable = (request: Request, startedAt = now()) => {
    request.body?.cancel().catch(() => {});
    return door.leave(request, startedAt, { code: "unavailable" }, errorResponse("unavailable"));
  };
  const started = new Date(now());
  // Prepared once; no per-Host work or cache (src/documents.ts). The card is signed only for
  // the configured public origin.
  const documents = originDocuments({
    publicOrigin,
    started,
    key: () => cardKey!, // documents are only asked for once the Beacon is open
    discovery: (origin, key) =>
      discoveryDocument({
        origin,
        maxBodyBytes,
        rateLimit: limit,
        statusRateLimit: status.limit,
        receiptKey: key.publicKey,
        receiptKeyFingerprint: key.fingerprint,
      }),
  });

  let opening:
    | Promise<
      {
        store: SubmissionStore;
        intake: Intake;
        handle: ReturnType<typeof buildHandler>;
        facts: StartFacts;
      }
    >
    | undefined;
  let closed = false;
  let guard: FileGuard | undefined;
  let storeRef: SubmissionStore | undefined;
  let cardKey: SigningKey | undefined;
  let treeHeads: TreeHeadSchedule | undefined;
  /** The opened Beacon's handler, once there is one. */
  let handler: ReturnType<typeof buildHandler> | undefined;
  const open = () => {
    opening ??= (async () => {
      const store = await SubmissionStore.open(options.database ?? DEFAULTS.database, now);
      let sourceHasher: SourceHasher;
      let signingKey: Awaited<ReturnType<typeof loadSigningKey>>;
      let identity: IdentityStamp | undefined;
      try {
        const salt = options.sourceSalt ??
          (await store.secret("source-salt", () => randomBytes(32), now)).value;
        sourceHasher = new SourceHasher(salt);
        signingKey = await loadSigningKey(store, now, options.signingKey);
        identity = await store.stampIdentity(randomBytes, now);
      } catch (error) {
        await store.close(); // a half-opened Beacon must not keep the database open
        throw error;
      }
      guard = await guardFile(options.database ?? DEFAULTS.database, options.onError, identity);
      storeRef = store;
      cardKey = signingKey;
      const treeHeadSigner = new TreeHeadSigner({
        statements: store.statements,
        key: signingKey,
        now,
      });
      const interval = options.checkpointIntervalMs ?? DEFAULT_CHECKPOINT_INTERVAL_MS;
      if (interval !== "off") {
        treeHeads = scheduleTreeHeads(treeHeadSigner, interval, options.onError);
      }
      const intake = new Intake({
        store,
        now,
        randomBytes,
        sourceHasher,
        idempotencyWindowMs: options.idempotencyWindowMs ?? DEFAULTS.idempotencyWindowMs,
        signReceipts: (receipts) => signReceipts(signingKey, receipts),
      });
      const handle = buildHandler({
        intake,
        limiter: custom ??
          (limit && options.rateLimitStore === "database"
            ? new SharedRateLimiter(
              store.statements,
              limit,
              (source) => Promise.resolve(sourceHasher.hash(source)),
              now,
            )
            : memoryLimiter),
        statusLimiter: status.custom ??
          (status.limit && options.rateLimitStore === "database"
            ? new SharedRateLimiter(
              store.statements,
              status.limit,
              // Its own keys in the shared table: reads never spend submissions.
              (source) => Promise.resolve("status " + sourceHasher.hash(source)),
              now,
            )
            : memoryStatusLimiter),
        maxBodyBytes,
        bodyTimeoutMs: options.bodyTimeoutMs ?? DEFAULTS.bodyTimeoutMs,
        trustedProxies: options.trustedProxies ?? 0,
        trustedProxyHeader: options.trustedProxyHeader ?? "x-forwarded-for",
        now,
        origin: (_request, url) => publicOrigin ?? url.origin,
        documents,
        treeHead: () => treeHeadSigner.latest(),
        door,
        onError: options.onError,
      });
      const facts: StartFacts = {
        databaseCreated: store.created,
        schema: store.schema,
        signingKeyGenerated: signingKey.generated === true,
      };
      handler = handle;
      return { store, intake, handle, facts };
    })();
    opening.catch(() => {
      opening = undefined; // the next request tries again, so the Beacon recovers on its own
    });
    return opening;
  };

  const openAndHandle = async (request: Request, info: ConnectionInfo | undefined) => {
    const startedAt = now();
    if (closed) return refuseUnavailable(request, startedAt);
    let handle;
    try {
      ({ handle } = await open());
    } catch (error) {
      options.onError?.(error);
      return refuseUnavailable(request, startedAt);
    }
    // A database file removed or replaced under us: nothing more may be acknowledged.
    if (guard?.tripped !== undefined) return refuseUnavailable(request, startedAt);
    return handle(request, info?.remoteAddress, info?.scheme);
  };

  return {
    fetch(request, info) {
      // Once open, the handler is called directly: no async frame or await per request.
      if (handler !== undefined && !closed && guard?.tripped === undefined) {
        return handler(request, info?.remoteAddress, info?.scheme);
      }
      return openAndHandle(request, info);
    },
    async ready() {
      return (await open()).facts;
    },
    unavailable(request) {
      return refuseUnavailable(request);
    },
    counters() {
      return storeRef?.counters ?? { commits: 0, writes: 0 };
    },
    async close() {
      closed = true;
      guard?.stop();
      if (opening === undefined) return;
      const { store, intake } = await opening;
      guard?.stop(); // set by an open that was still running
      await guard?.idle(); // a check may be asking for a checkpoint right now
      // The last head covers every row the stopped server acknowledged, unless the file changed.
      const schedule = treeHeads;
      treeHeads = undefined; // a second close() signs nothing more
      await schedule?.stop(guard?.tripped === undefined);
      await store.close();
      intake.close();
    },
  };
}
