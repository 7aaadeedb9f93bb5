/**
 * Opening a Beacon, in the order its parts need each other: the database (`Database.open`:
 * the client, migrations, the connection that commits), the secrets kept in it (the source salt,
 * the receipt-signing key, this start's identity stamp), the store made with its receipt signer,
 * the guard on an embedded database's file, the tree-head signer and its schedule, the intake,
 * and the handler composed on them (src/handler.ts). `createBeacon` (src/beacon.ts)
 * runs it in the background, and again on the next request after a failure.
 *
 * @module
 */
import { originDocuments } from "./documents.ts";
import { buildHandler } from "./handler.ts";
import { READINESS_DEADLINE_MS, readinessProbe } from "./http/probe.ts";
import { Intake } from "./intake/accept.ts";
import { SourceHasher } from "./intake/source_hash.ts";
import type { SharedLimiterOptions } from "./limits/select.ts";
import type { Door } from "./middleware/door.ts";
import { discoveryDocument } from "./native/discovery.ts";
import type { ResolvedOptions } from "./options.ts";
import {
  fromBase64url,
  IntakeSignatures,
  keyFingerprint,
  type KeyHistory,
  loadSigningKey,
  type PreviousKey,
  RangedIntakeSignatures,
  refuseNewKeyForSignedStore,
  type SigningKey,
  signReceipts,
} from "./signing/mod.ts";
import { Database } from "./store/database.ts";
import { MIGRATIONS } from "./store/migrations.ts";
import type { BeaconMetrics } from "./metrics/beacon_metrics.ts";
import { type FileGuard, guardFile } from "./store/file_guard.ts";
import { type ReceiptSigner, SubmissionStore } from "./store/store.ts";
import { LogRows } from "./store/log_rows.ts";
import { continueLog } from "./transparency/key_rotation.ts";
import { newLogOrigin } from "./transparency/origin.ts";
import { scheduleTreeHeads, type TreeHeadSchedule } from "./transparency/schedule.ts";
import { LogSigner } from "./transparency/signer.ts";
import type { StartFacts } from "./types.ts";

/** An opened Beacon: what its requests run on, and what `close()` stops. */
export interface OpenedBeacon {
  readonly store: SubmissionStore;
  readonly intake: Intake;
  /** The composed handler: `(request, remoteAddress, scheme) => Response`. */
  readonly handle: ReturnType<typeof buildHandler>;
  /** The guard on the database file; none for a remote or in-memory database. */
  readonly guard: FileGuard | undefined;
  /** The signed log: heads, tiles and proofs (src/transparency/). */
  readonly log: LogSigner;
  /** The tree heads being signed; none when they are off, or once `close()` has stopped them. */
  treeHeads: TreeHeadSchedule | undefined;
  /** What this start found or created, for the operator's start log line. */
  readonly facts: StartFacts;
}

/**
 * The secrets: the source salt (kept in the database unless given), the signing key
 * (`loadSigningKey`: configured, an earlier version's kept one, or a new one as `newSigningKey`
 * says). A failure closes the database: a half-opened Beacon must not keep it open.
 */
async function loadSecrets(database: Database, options: ResolvedOptions) {
  const { now, randomBytes } = options;
  try {
    const salt = options.sourceSalt ??
      (await database.secret("source-salt", () => randomBytes(32), now)).value;
    const signingKey = await loadSigningKey(
      database,
      now,
      options.signingKey,
      options.newSigningKey,
      // Never a new identity for a store whose log another key signed: restore that key instead.
      () => refuseNewKeyForSignedStore(new LogRows(database.statements)),
    );
    return {
      sourceHasher: new SourceHasher(salt),
      signingKey,
      identity: await database.stampIdentity(randomBytes, now),
    };
  } catch (error) {
    await database.close();
    throw error;
  }
}

/**
 * The documents the Beacon serves, prepared once (an open succeeds once): no per-Host work or
 * cache (src/documents.ts), and the card is signed only for the configured public origin.
 */
function servedDocuments(
  options: ResolvedOptions,
  started: Date,
  signingKey: SigningKey,
  logOrigin: string,
  previousKeys: readonly PreviousKey[],
) {
  const { maxBodyBytes, submissions, status } = options;
  return originDocuments({
    publicOrigin: options.publicOrigin,
    started,
    key: () => signingKey,
    discovery: (origin, key) =>
      discoveryDocument({
        origin,
        maxBodyBytes,
        rateLimit: submissions.limit,
        statusRateLimit: status.limit,
        receiptKey: key.publicKey,
        receiptKeyFingerprint: key.fingerprint,
        logOrigin,
        previousKeys,
      }),
    previousKeys,
  });
}

/**
 * The keys that signed the log before the current one, each with the rows it vouches for, as the
 * discovery document and the JWKS publish them: old receipts keep verifying under them.
 */
async function previousKeysOf(history: KeyHistory): Promise<PreviousKey[]> {
  return await Promise.all(
    history.ranges.filter((range) => range.retiredBy !== undefined).map(async (range) => ({
      publicKey: range.publicKey,
      fingerprint: await keyFingerprint(fromBase64url(range.publicKey)!),
      firstSeq: range.firstSeq,
      lastSeq: range.lastSeq,
      retiredAt: range.retiredBy!.createdAt,
    })),
  );
}

/**
 * The configured key continues the log: a rotation is recorded when the previous key is named,
 * else a key change is refused (src/transparency/key_rotation.ts). Before anything is signed
 * under the key. A refusal closes the database.
 */
async function checkContinuity(
  database: Database,
  options: ResolvedOptions,
  signingKey: SigningKey,
  origin: string,
): Promise<void> {
  try {
    await continueLog({
      statements: database.statements,
      key: signingKey,
      previousKeys: options.previousSigningKeys,
      origin,
      now: options.now,
    });
  } catch (error) {
    await database.close();
    throw error;
  }
}

/**
 * With `rateLimitStore: "database"`, what a limiter needs to keep its state in the database,
 * under a key prefix of its own: the database's statements and the salted source hash (raw
 * addresses are never at rest). Undefined: the limiters keep their state in memory.
 */
function sharedLimiterParts(
  options: ResolvedOptions,
  database: Database,
  sourceHasher: SourceHasher,
): ((prefix: string) => SharedLimiterOptions) | undefined {
  if (options.rateLimitStore !== "database") return undefined;
  return (prefix) => ({
    statements: database.statements,
    keyOf: (source) => Promise.resolve(prefix + sourceHasher.hash(source)),
  });
}

/**
 * Opens the database and builds everything the Beacon's requests run on. `door` is the Beacon's
 * one way out (it answers while closed too); `started` dates every served document.
 */
export async function openBeacon(
  options: ResolvedOptions,
  door: Door,
  started: Date,
  metrics?: BeaconMetrics,
): Promise<OpenedBeacon> {
  const { now, onError, checkpointIntervalMs: interval } = options;
  // The database first, then the secrets from it, then the store with its receipt signer:
  // the signing key is one of the database's secrets (src/store/database.ts).
  const database = await Database.open(options.database, now);
  const { sourceHasher, signingKey, identity } = await loadSecrets(database, options);
  const signer: ReceiptSigner = (receipts) => signReceipts(signingKey, receipts);
  // The log's name, recorded by its first signer and fixed for its life (src/transparency/).
  const logOrigin = await new LogRows(database.statements).origin(
    newLogOrigin(options.publicOrigin, options.randomBytes),
  );
  // Before anything is signed: a key change would end the log without a word.
  await checkContinuity(database, options, signingKey, logOrigin);
  const log = new LogSigner({
    statements: database.statements,
    key: signingKey,
    origin: logOrigin,
    now,
    onIgnored: onError,
  });
  const history = await log.history();
  const previousKeys = await previousKeysOf(history);
  // What a replay found in the database is checked against (src/intake/accept.ts): the key that
  // vouches for its `seq` (a row stored before a rotation carries the previous key's signature,
  // and a retired key's past its boundary is a copy of that key at work), else the current key.
  const replays = new RangedIntakeSignatures(history);
  const current = new IntakeSignatures([signingKey.publicKey]);
  const store = new SubmissionStore(database, {
    signReceipts: signer,
    ...(metrics === undefined ? {} : {
      observer: {
        committed: (rows: number, seconds: number) => metrics.committed(rows, seconds),
        outcomeUnknown: () => metrics.outcomeUnknown.inc(),
      },
    }),
    // Only while heads are signed: the signer consumes what it is told.
    ...(interval === "off" ? {} : {
      onCommitted: (seqs, receipts) => log.committed(seqs, receipts),
    }),
  });
  const guard = await guardFile(database.connection.file, onError, identity);
  const treeHeads = interval === "off" ? undefined : scheduleTreeHeads(log, interval, onError);
  const intake = new Intake({
    store,
    now,
    randomBytes: options.randomBytes,
    sourceHasher,
    idempotencyWindowMs: options.idempotencyWindowMs,
    acknowledged: (fields, stored) =>
      fields.seq === undefined
        ? current.verifies(fields, stored)
        : replays.verifies({ seq: fields.seq, fields, stored }),
  });
  const shared = sharedLimiterParts(options, database, sourceHasher);
  const { publicOrigin } = options;
  const handle = buildHandler({
    intake,
    limiter: options.submissions.limiter(shared?.("")),
    // Its own keys in the shared table: reads never spend submissions.
    statusLimiter: options.status.limiter(shared?.("status ")),
    maxBodyBytes: options.maxBodyBytes,
    bodyTimeoutMs: options.bodyTimeoutMs,
    trustedProxies: options.trustedProxies,
    trustedProxyHeader: options.trustedProxyHeader,
    now,
    origin: (context) => publicOrigin ?? context.url.origin + context.basePath,
    documents: servedDocuments(options, started, signingKey, logOrigin, previousKeys),
    log,
    readiness: readinessProbe({
      schemaVersion: () => database.schemaVersion(),
      // The version this build migrates to: a database a newer release migrated is not current.
      expectedSchema: Math.max(...MIGRATIONS.map((migration) => migration.version)),
      guardTripped: () => guard?.tripped !== undefined,
      deadlineMs: Math.min(READINESS_DEADLINE_MS, database.timeoutMs),
    }),
    ...(metrics === undefined || options.metricsToken === undefined ? {} : {
      metrics: { token: options.metricsToken, render: () => metrics.registry.render() },
    }),
    door,
    onError,
  });
  const facts: StartFacts = {
    databaseCreated: database.created,
    schema: database.schema,
    signingKeyGenerated: signingKey.generated === true,
    signingKeyFingerprint: signingKey.fingerprint,
    ...(previousKeys.length === 0 ? {} : {
      previousSigningKeys: previousKeys.map(({ fingerprint, lastSeq }) => ({
        fingerprint,
        lastSeq,
      })),
    }),
    signingKeyInDatabase: signingKey.inDatabase === true,
  };
  return { store, intake, handle, guard, log, treeHeads, facts };
}
