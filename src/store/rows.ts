/**
 * The `submissions` row: its types, the one column list, the insert statements and the row
 * mapper. Every reader and writer of the table (store, review tool) takes them from here.
 *
 * @module
 */
import { sha256Hex } from "../bytes.ts";

/** Which protocol a submission arrived through. */
export type Surface = "native" | "a2a";
/** Structured (validated against the message schema) or unstructured (free text). */
export type SubmissionKind = "structured" | "unstructured";

/** Everything stored for one accepted submission. */
export interface NewSubmission {
  /** The receipt id (also the A2A task id). */
  readonly id: string;
  /** The A2A context id opened for it. */
  readonly contextId: string;
  /** ISO 8601 UTC time of receipt. */
  readonly receivedAt: string;
  readonly surface: Surface;
  readonly kind: SubmissionKind;
  /** Media type of `content`. */
  readonly contentType: string;
  /** The content exactly as accepted. */
  readonly content: Uint8Array<ArrayBuffer>;
  /** `sha256:<hex>` of `content`. */
  readonly digest: string;
  /** Salted hash of the source key; raw addresses are never stored. */
  readonly sourceHash: string;
  /** `sha256:<hex>` of a signer's public key, if the message was signed. */
  readonly identityFingerprint?: string;
  /** Whether that signature verified. */
  readonly identityVerified?: boolean;
  /** The sender's idempotency key (native header or A2A messageId), if any. */
  readonly idempotencyKey?: string;
}

/** What lookups return: the receipt facts, never the content. */
export interface SubmissionSummary {
  readonly id: string;
  readonly contextId: string;
  readonly receivedAt: string;
  readonly surface: Surface;
  readonly kind: SubmissionKind;
  readonly size: number;
  readonly digest: string;
  readonly identityFingerprint?: string;
  readonly identityVerified?: boolean;
  /** The receipt signature stored at intake (migration 9), where the lookup reads it. */
  readonly signature?: StoredSignature;
}

/**
 * A receipt's signature exactly as the receipt carried it (`signature`, and for a batch signature
 * `batch`: docs/protocol-0.1.md §6.3-6.4; src/signing/receipt.ts `ReceiptSignature`).
 */
export interface StoredSignature {
  /** Ed25519, unpadded base64url: over the receipt, or over its batch's root with `batch`. */
  readonly signature: string;
  /** The receipt's inclusion proof in the signed batch. */
  readonly batch?: {
    readonly size: number;
    readonly index: number;
    readonly path: readonly string[];
  };
}

/** The five members of a row's receipt that its signature covers (protocol §6.2). */
export interface SignedFields {
  readonly id: string;
  readonly receivedAt: string;
  readonly digest: string;
  readonly size: number;
  readonly kind: SubmissionKind;
}

/** The parameters of {@linkcode KEY_USED_SEQS}, in order. */
export type KeyCheckArgs = readonly [
  idempotencyHash: number,
  sourceHash: string,
  key: string,
  since: string,
  sourceHash: string,
  key: string,
  since: string,
];

/** One row to insert and, for a row with an idempotency key, its key check's parameters. */
export interface PendingRow {
  readonly id: string;
  /** The values of {@linkcode INSERT_COLUMNS}, in order. */
  readonly values: (string | number | null | Uint8Array)[];
  /** The parameters of the key check ({@linkcode keyCheckArgs}), when the row has a key. */
  readonly keySince?: KeyCheckArgs;
  /** What the receipt's signature covers, to sign the row in the commit that stores it. */
  readonly signed: SignedFields;
  /**
   * The values of {@linkcode INSERT_SIGNATURE} after the row's `seq`, set by the commit once the batch is signed: the
   * signature is stored in the row's own transaction, or not at all.
   */
  signature?: readonly (string | number | null)[];
}

/** The columns an insert writes, in the order of {@linkcode PendingRow.values}. */
export const INSERT_COLUMNS =
  "id, context_id, received_at, surface, kind, content_type, content, size, digest, " +
  "source_hash, identity_fingerprint, identity_verified, idempotency_key, idempotency_hash";

/** The columns a receipt lookup reads (never the content). */
export const SUMMARY_COLUMNS =
  "id, context_id, received_at, surface, kind, size, digest, identity_fingerprint, identity_verified";

const PLACEHOLDERS = "?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?";
/** {@linkcode PLACEHOLDERS} numbered, for a statement that refers to the values again. */
const NUMBERED_PLACEHOLDERS = Array.from({ length: 14 }, (_, i) => `?${i + 1}`).join(", ");

/**
 * The integer the idempotency index is keyed by (migration 8): the first 48 bits of the SHA-256
 * of the source hash (fixed length, so it cannot run into the key) and the key. An index entry is
 * then a 6-byte integer instead of both texts (about 130 bytes), so far fewer index pages take
 * each insert. Equal hashes are only candidates: the lookups compare the source and the key
 * themselves.
 */
export function idempotencyHash(sourceHash: string, key: string): number {
  // 12 hex digits are 48 bits: exact in a double (below 2^53).
  return parseInt(sha256Hex(sourceHash + " " + key).slice(0, 12), 16);
}

/**
 * The `seq` of every row from one source with one idempotency key received since the window
 * start ({@linkcode keyCheckArgs}). Two probes, each on its own partial index: rows written since
 * migration 8 by their `idempotency_hash`, and rows written before it (or by an instance not yet
 * upgraded), which have a key and no hash, by `(source_hash, idempotency_key)`. The second index
 * takes no new rows, so an insert pays for one small integer index only.
 */
export const KEY_USED_SEQS = `SELECT seq FROM submissions
    WHERE idempotency_hash = ? AND source_hash = ? AND idempotency_key = ? AND received_at >= ?
  UNION ALL SELECT seq FROM submissions
    WHERE idempotency_hash IS NULL AND source_hash = ? AND idempotency_key = ? AND received_at >= ?`;

/** The parameters of {@linkcode KEY_USED_SEQS}. */
export function keyCheckArgs(
  sourceHash: string,
  key: string,
  since: string,
  hash: number = idempotencyHash(sourceHash, key),
): KeyCheckArgs {
  return [hash, sourceHash, key, since, sourceHash, key, since];
}

/**
 * The stored receipt signature's columns, from `receipt_signatures` joined by its table name
 * ({@linkcode signatureJoin}; {@linkcode storedSignatureOf} maps them).
 */
export const SIGNATURE_COLUMNS = "receipt_signatures.signature AS receipt_signature, " +
  "receipt_signatures.batch_size AS receipt_batch_size, " +
  "receipt_signatures.batch_index AS receipt_batch_index, " +
  "receipt_signatures.batch_path AS receipt_batch_path";

/** Joins each submission (`alias`) to its stored receipt signature, if it has one. */
export function signatureJoin(alias: string): string {
  return `LEFT JOIN receipt_signatures ON receipt_signatures.seq = ${alias}.seq`;
}

/**
 * The first row with an idempotency key in its window ({@linkcode keyCheckArgs}), as a summary
 * with its stored receipt signature: a replay answers with the first receipt's own signature.
 */
export const FIND_BY_IDEMPOTENCY_KEY = `SELECT ${SUMMARY_COLUMNS}, ${SIGNATURE_COLUMNS}
  FROM submissions ${signatureJoin("submissions")}
  WHERE submissions.seq = (SELECT min(seq) FROM (${KEY_USED_SEQS}))`;

/**
 * Where stored intake signatures are required (src/signing/log_audit.ts
 * `intakeSignaturesFrom`): `recorded`, the start migration 10 wrote, and `first_signed`, the
 * smallest `seq` with a stored signature; either may be null. Needs schema version 10.
 */
export const INTAKE_SIGNATURES_FROM = "SELECT (SELECT value FROM log_settings " +
  "WHERE name = 'intake_signatures_from') AS recorded, " +
  "(SELECT MIN(seq) FROM receipt_signatures) AS first_signed";

/**
 * Stores a receipt's signature (migration 9) in the transaction that inserted its row. `OR
 * IGNORE` only matters after tampering: a writer who deleted the newest row but not its
 * signature leaves a signature under the `seq` SQLite hands out again. The new row is stored
 * anyway (intake must not stop), its receipt carries its own signature, and the review tools
 * report the stale one as "does NOT verify" for that row. (Never `OR REPLACE`: see migrations.ts.)
 */
export const INSERT_SIGNATURE = "INSERT OR IGNORE INTO receipt_signatures " +
  "(seq, signature, batch_size, batch_index, batch_path) VALUES (?, ?, ?, ?, ?)";

/** The values of {@linkcode INSERT_SIGNATURE} after the row's `seq`. */
export function signatureValues(stored: StoredSignature): (string | number | null)[] {
  const batch = stored.batch;
  return batch === undefined
    ? [stored.signature, null, null, null]
    : [stored.signature, batch.size, batch.index, JSON.stringify(batch.path)];
}

/**
 * The stored signature of a row read with {@linkcode SIGNATURE_COLUMNS}; undefined when it has
 * none. Stored values come back as stored; a malformed path is returned as it reads (a verifier
 * then reports that it does not verify).
 */
export function storedSignatureOf(row: Record<string, unknown>): StoredSignature | undefined {
  const signature = row.receipt_signature;
  if (signature === null || signature === undefined) return undefined;
  if (row.receipt_batch_size === null || row.receipt_batch_size === undefined) {
    return { signature: String(signature) };
  }
  let path: unknown;
  try {
    path = JSON.parse(String(row.receipt_batch_path));
  } catch {
    path = [];
  }
  return {
    signature: String(signature),
    batch: {
      size: Number(row.receipt_batch_size),
      index: Number(row.receipt_batch_index),
      path: Array.isArray(path) ? path.map(String) : [],
    },
  };
}

/**
 * The signatures of a remote batch ({@linkcode insertBatchSql}) as one statement of the same
 * transaction: each only where its row now exists, so a row the key check skipped gets none.
 */
export function insertSignaturesSql(count: number): string {
  const select = "SELECT seq, ?, ?, ?, ? FROM submissions WHERE id = ?";
  // OR IGNORE as in INSERT_SIGNATURE.
  return "INSERT OR IGNORE INTO receipt_signatures " +
    "(seq, signature, batch_size, batch_index, batch_path) " +
    Array.from({ length: count }, () => select).join(" UNION ALL ");
}

/** Inserts one row. */
export const INSERT_ROW = `INSERT INTO submissions (${INSERT_COLUMNS}) VALUES (${PLACEHOLDERS})`;

/**
 * Inserts one row unless a row from the same source with the same idempotency key was received
 * since the window start (the key check's parameters follow the values): the retry check happens
 * inside the commit, so an accepted submission costs no separate read.
 */
export const INSERT_ROW_UNLESS_KEY_USED =
  `INSERT INTO submissions (${INSERT_COLUMNS}) SELECT ${NUMBERED_PLACEHOLDERS} WHERE NOT EXISTS (
    SELECT seq FROM submissions
      WHERE idempotency_hash = ?14 AND source_hash = ?10 AND idempotency_key = ?13
        AND received_at >= ?15
    UNION ALL SELECT seq FROM submissions
      WHERE idempotency_hash IS NULL AND source_hash = ?10 AND idempotency_key = ?13
        AND received_at >= ?15)`;

/**
 * The parameters of {@linkcode INSERT_ROW_UNLESS_KEY_USED}: the row's values, then the window
 * start. The key check there is {@linkcode KEY_USED_SEQS} with numbered parameters that name the
 * row's own hash (14), source hash (10) and key (13), so each value is bound once: the driver
 * converts every bound string on every insert, and the key and source hash are the longest
 * .
 */
export function keyedInsertArgs(row: PendingRow): (string | number | null | Uint8Array)[] {
  return [...row.values, row.keySince![3]];
}

/**
 * The same inserts as one statement for a whole batch, for remote databases, where one round
 * trip per commit matters more than preparing once. `RETURNING` names the rows inserted. The
 * arguments are each row's values, then its key check's ({@linkcode KEY_USED_SEQS}). (Numbered
 * parameters that name a row's source hash and key again instead of sending them twice cost sqld
 * more CPU and the pair 6 % of its throughput, side by side with `bench/ab.ts`.)
 */
export function insertBatch(
  rows: readonly PendingRow[],
): { sql: string; args: (string | number | null | Uint8Array)[] } {
  const args: (string | number | null | Uint8Array)[] = [];
  for (const row of rows) {
    for (const value of row.values) args.push(value);
    if (row.keySince !== undefined) { for (const value of row.keySince) args.push(value); }
  }
  return { sql: insertBatchSql(rows), args };
}

/** Statement texts by batch shape: a batch of one size and kind recurs under steady load. */
const batchSqlCache = new Map<string, string>();
/** Shapes kept (each text at most ~110 KB, for 256 keyed rows). */
const BATCH_SQL_CACHE_SIZE = 32;

/** The statement of {@linkcode insertBatch}, cached for batches whose rows are all alike. */
export function insertBatchSql(rows: readonly PendingRow[]): string {
  let keyed = 0;
  for (const row of rows) if (row.keySince !== undefined) keyed++;
  const uniform = keyed === 0 || keyed === rows.length;
  const shape = `${keyed === 0 ? "u" : "k"}${rows.length}`;
  if (uniform) {
    const cached = batchSqlCache.get(shape);
    if (cached !== undefined) return cached;
  }
  const selects = rows.map((row) =>
    `SELECT ${PLACEHOLDERS}` +
    (row.keySince === undefined ? "" : ` WHERE NOT EXISTS (${KEY_USED_SEQS})`)
  );
  const sql = `INSERT INTO submissions (${INSERT_COLUMNS}) ${
    selects.join(" UNION ALL ")
  } RETURNING id`;
  if (uniform) {
    if (batchSqlCache.size >= BATCH_SQL_CACHE_SIZE) {
      batchSqlCache.delete(batchSqlCache.keys().next().value!);
    }
    batchSqlCache.set(shape, sql);
  }
  return sql;
}

/**
 * The last statement of a remote batch's transaction ({@linkcode insertBatchSql}): it fails, and
 * so rolls back the rows and their signatures, unless the database's own clock is still before
 * the parameter, the batch's deadline in epoch milliseconds (docs/protocol-0.1.md §9.1). A
 * network may deliver a statement long after the Beacon gave up on it and answered
 * `outcome_unknown`; the database then stores nothing, so a status that is still `404` after two
 * deadlines stays `404`. SQLite has no `RAISE` outside triggers: the failure is `abs()` of the
 * smallest integer, an "integer overflow" error (sqlite.org/lang_corefunc.html#abs).
 */
export const BEFORE_DEADLINE = "SELECT abs(CASE WHEN unixepoch('subsec') * 1000 < ? " +
  "THEN 0 ELSE -9223372036854775807 - 1 END) AS before_deadline";

/** The row to insert for `submission`; `keyWindowStart` turns on the idempotency check. */
export function pendingRow(submission: NewSubmission, keyWindowStart?: string): PendingRow {
  const key = submission.idempotencyKey;
  const hash = key === undefined ? null : idempotencyHash(submission.sourceHash, key);
  const values = [
    submission.id,
    submission.contextId,
    submission.receivedAt,
    submission.surface,
    submission.kind,
    submission.contentType,
    submission.content,
    submission.content.byteLength,
    submission.digest,
    submission.sourceHash,
    submission.identityFingerprint ?? null,
    submission.identityVerified === undefined ? null : submission.identityVerified ? 1 : 0,
    key ?? null,
    hash,
  ];
  const keySince = key !== undefined && keyWindowStart !== undefined
    ? keyCheckArgs(submission.sourceHash, key, keyWindowStart, hash!)
    : undefined;
  const signed = {
    id: submission.id,
    receivedAt: submission.receivedAt,
    digest: submission.digest,
    size: submission.content.byteLength,
    kind: submission.kind,
  };
  return { id: submission.id, values, keySince, signed };
}

/** Maps a row read with {@linkcode SUMMARY_COLUMNS}. */
export function toSummary(row: Record<string, unknown>): SubmissionSummary {
  const summary: { -readonly [K in keyof SubmissionSummary]: SubmissionSummary[K] } = {
    id: String(row.id),
    contextId: String(row.context_id),
    receivedAt: String(row.received_at),
    surface: row.surface as Surface,
    kind: row.kind as SubmissionKind,
    size: Number(row.size),
    digest: String(row.digest),
  };
  if (row.identity_fingerprint !== null && row.identity_fingerprint !== undefined) {
    summary.identityFingerprint = String(row.identity_fingerprint);
    summary.identityVerified = Number(row.identity_verified) === 1;
  }
  const signature = storedSignatureOf(row);
  if (signature !== undefined) summary.signature = signature;
  return summary;
}
