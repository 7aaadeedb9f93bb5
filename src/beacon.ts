/**
 * The Beacon's lifecycle: {@linkcode createBeacon} opens the database in the background (retrying
 * on the next request after a failure), guards an embedded database file, schedules signed tree
 * heads and builds the handler (src/handler.ts) once the store is open. The public face is mod.ts.
 *
 * @module
 */
import { buildHandler } from "./handler.ts";
import { Intake } from "./intake/accept.ts";
import { SourceHasher } from "./intake/source_hash.ts";
import {
  DEFAULT_BODY_TIMEOUT_MS,
  DEFAULT_CHECKPOINT_INTERVAL_MS,
  DEFAULT_DATABASE_URL,
  DEFAULT_IDEMPOTENCY_WINDOW_MS,
  DEFAULT_MAX_BODY_BYTES,
  DEFAULT_RATE_LIMIT,
  DEFAULT_STATUS_RATE_LIMIT,
} from "./defaults.ts";
import { chooseLimiter, type SharedLimiterParts } from "./limits/select.ts";
import { discoveryDocument } from "./native/discovery.ts";
import { originDocuments } from "./documents.ts";
import { Database } from "./store/database.ts";
import { type ReceiptSigner, SubmissionStore } from "./store/store.ts";
import {
  loadSigningKey,
  type SignedReceiptFields,
  type SigningKey,
  signReceipts,
} from "./signing/mod.ts";
import { createDoor } from "./middleware/door.ts";
import { type FileGuard, guardFile, type IdentityStamp } from "./store/file_guard.ts";
import { scheduleTreeHeads, type TreeHeadSchedule, TreeHeadSigner } from "./tree_heads.ts";
import type { Beacon, BeaconOptions, ConnectionInfo, StartFacts } from "./types.ts";

export type { Beacon, BeaconOptions, ConnectionInfo, StartFacts } from "./types.ts";

function defaultRandomBytes(length: number): Uint8Array<ArrayBuffer> {
  return crypto.getRandomValues(new Uint8Array(length));
}

let warnedNoClientAddress = false;

/** Says once per process that a caller gave `fetch` no client address: every client shares a bucket. */
function warnNoClientAddress(): void {
  if (warnedNoClientAddress) return;
  warnedNoClientAddress = true;
  console.warn(JSON.stringify({
    event: "warning",
    message: "beacon.fetch was called without a client address (its second argument, " +
      "{ remoteAddress }): every such request shares one rate-limit bucket; pass the peer " +
      "address, or UNKNOWN_CLIENT to share the bucket on purpose",
  }));
}

function normaliseOrigin(url: string): string {
  const parsed = new URL(url);
  // A path prefix (an embedding app's mount point) is kept; query, fragment and `/` are not.
  return parsed.origin + parsed.pathname.replace(/\/+$/, "");
}

/**
 * Creates a Beacon. The database opens in the background; `fetch` waits for it, and answers
 * `503 unavailable` while it cannot be opened (retrying on the next request).
 *
 * @example
 * ```ts
 * import { createBeacon } from "./beacon.ts";
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
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const submissions = chooseLimiter(options.rateLimit, DEFAULT_RATE_LIMIT, now);
  const status = chooseLimiter(options.statusRateLimit, DEFAULT_STATUS_RATE_LIMIT, now);
  const publicOrigin = options.publicUrl === undefined
    ? undefined
    : normaliseOrigin(options.publicUrl);
  const door = createDoor(options.log, now);
  const refuseUnavailable = (request: Request, startedAt = now()) => {
    request.body?.cancel().catch(() => {});
    return door.turnAway(request, startedAt, "unavailable");
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
        rateLimit: submissions.limit,
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
      // The database first, then the secrets from it, then the store with its receipt signer:
      // the signing key is one of the database's secrets (src/store/database.ts).
      const database = await Database.open(options.database ?? { url: DEFAULT_DATABASE_URL }, now);
      let sourceHasher: SourceHasher;
      let signingKey: Awaited<ReturnType<typeof loadSigningKey>>;
      let identity: IdentityStamp | undefined;
      try {
        const salt = options.sourceSalt ??
          (await database.secret("source-salt", () => randomBytes(32), now)).value;
        sourceHasher = new SourceHasher(salt);
        signingKey = await loadSigningKey(database, now, options.signingKey);
        identity = await database.stampIdentity(randomBytes, now);
      } catch (error) {
        await database.close(); // a half-opened Beacon must not keep the database open
        throw error;
      }
      const signer: ReceiptSigner = (receipts) => signReceipts(signingKey, receipts);
      const store = new SubmissionStore(database, { signReceipts: signer });
      guard = await guardFile(database.connection.file, options.onError, identity);
      storeRef = store;
      cardKey = signingKey;
      const treeHeadSigner = new TreeHeadSigner({
        statements: database.statements,
        key: signingKey,
        now,
        onIgnored: options.onError,
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
        idempotencyWindowMs: options.idempotencyWindowMs ?? DEFAULT_IDEMPOTENCY_WINDOW_MS,
        signReceipts: signer,
        // Only while heads are signed: the signer consumes what it is told.
        ...(interval === "off" ? {} : {
          onStored: (receipt: SignedReceiptFields) => treeHeadSigner.acknowledged(receipt),
        }),
      });
      const shared = options.rateLimitStore === "database"
        ? (prefix: string): SharedLimiterParts => ({
          statements: database.statements,
          keyOf: (source) => Promise.resolve(prefix + sourceHasher.hash(source)),
        })
        : undefined;
      const handle = buildHandler({
        intake,
        limiter: submissions.limiter(shared?.("")),
        // Its own keys in the shared table: reads never spend submissions.
        statusLimiter: status.limiter(shared?.("status ")),
        maxBodyBytes,
        bodyTimeoutMs: options.bodyTimeoutMs ?? DEFAULT_BODY_TIMEOUT_MS,
        trustedProxies: options.trustedProxies ?? 0,
        trustedProxyHeader: options.trustedProxyHeader ?? "x-forwarded-for",
        now,
        origin: (_request, url) => publicOrigin ?? url.origin,
        documents,
        treeHead: () => treeHeadSigner.latest(),
        consistency: (first, second) => treeHeadSigner.consistency(first, second),
        door,
        onError: options.onError,
      });
      const facts: StartFacts = {
        databaseCreated: database.created,
        schema: database.schema,
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

  const openAndHandle = async (request: Request, info: ConnectionInfo) => {
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
    return handle(request, info?.remoteAddress ?? undefined, info?.scheme);
  };

  return {
    fetch(request, info) {
      // A caller whose types do not reach here (Hono's `mount` takes `...args: any`).
      if (info?.remoteAddress === undefined) warnNoClientAddress();
      // Once open, the handler is called directly: no async frame or await per request.
      if (handler !== undefined && !closed && guard?.tripped === undefined) {
        return handler(request, info?.remoteAddress ?? undefined, info?.scheme);
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
