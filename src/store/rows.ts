/**
 * The `submissions` row: its types, the one column list, the insert statements and the row
 * mapper. Every reader and writer of the table (store, review tool) takes them from here.
 *
 * @module
 */
import { hex, sha256Hex } from "../bytes.ts";
import { receiptSignatureInBatch, type SignedReceiptFields } from "../signing/receipt.ts";

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
  /** The row's place in the log, from 1 (its leaf index plus one), where the lookup reads it. */
  readonly seq?: number;
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
}

/**
 * What a commit stores for its batch besides the rows (schema version 11): the receipts' leaves
 * and the one signature ({@linkcode INSERT_BATCH}), in the rows' own transaction or not at all.
 */
export interface BatchSignature {
  /** The receipts' RFC 6962 leaf hashes, 32 bytes each, in batch order. */
  readonly leaves: Uint8Array;
  /** The batch's one signature (src/signing/receipt.ts `SignedBatch`). */
  readonly signature: string;
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
 * A row's stored receipt signature, in either form: its own row of `receipt_signatures` (schema
 * version 9), or the row of `receipt_batches` whose `seq` range holds it (version 11), both
 * joined by {@linkcode signatureJoin}; {@linkcode storedSignatureOf} maps them. Without
 * `batches` (a store older than version 11), the batch columns are null.
 */
export function signatureColumns(alias: string, batches = true): string {
  return "receipt_signatures.signature AS receipt_signature, " +
    "receipt_signatures.batch_size AS receipt_batch_size, " +
    "receipt_signatures.batch_index AS receipt_batch_index, " +
    "receipt_signatures.batch_path AS receipt_batch_path, " +
    `${alias}.seq AS signed_seq, ` +
    (batches
      ? "receipt_batches.first_seq AS batch_first_seq, receipt_batches.last_seq AS " +
        "batch_last_seq, receipt_batches.leaves AS batch_leaves, receipt_batches.signature AS " +
        "batch_signature"
      : "NULL AS batch_first_seq, NULL AS batch_last_seq, NULL AS batch_leaves, " +
        "NULL AS batch_signature");
}

/**
 * Joins each submission (`alias`) to its stored receipt signature, in either form: for a batch,
 * the newest batch that starts at or before the row, if its range reaches the row (migration 11).
 */
export function signatureJoin(alias: string, batches = true): string {
  return `LEFT JOIN receipt_signatures ON receipt_signatures.seq = ${alias}.seq` +
    (batches
      ? " LEFT JOIN receipt_batches ON receipt_batches.seq = (SELECT seq FROM receipt_batches " +
        `WHERE first_seq <= ${alias}.seq ORDER BY first_seq DESC, seq DESC LIMIT 1) AND ` +
        `${alias}.seq <= receipt_batches.last_seq`
      : "");
}

/**
 * The first row with an idempotency key in its window ({@linkcode keyCheckArgs}), as a summary
 * with its stored receipt signature: a replay answers with the first receipt's own signature.
 */
export const FIND_BY_IDEMPOTENCY_KEY = `SELECT submissions.seq AS row_seq, ${SUMMARY_COLUMNS}, ${
  signatureColumns("submissions")
}
  FROM submissions ${signatureJoin("submissions")}
  WHERE submissions.seq = (SELECT min(seq) FROM (${KEY_USED_SEQS}))`;

/**
 * Where stored intake signatures are required (src/signing/log_audit.ts
 * `intakeSignaturesFrom`): `recorded`, the start migration 10 wrote, and `first_signed`, the
 * smallest `seq` with a stored signature in either form; either may be null. Needs schema
 * version 11.
 */
export const INTAKE_SIGNATURES_FROM = "SELECT (SELECT value FROM log_settings " +
  "WHERE name = 'intake_signatures_from') AS recorded, " +
  "(SELECT MIN(seq) FROM (SELECT MIN(seq) AS seq FROM receipt_signatures " +
  "UNION ALL SELECT MIN(first_seq) FROM receipt_batches)) AS first_signed";

/**
 * Stores a batch's signature ({@linkcode BatchSignature}) in the transaction that inserted its
 * rows, `first_seq` to `last_seq`. Never `OR REPLACE` (see migrations.ts).
 */
export const INSERT_BATCH =
  "INSERT INTO receipt_batches (first_seq, last_seq, leaves, signature) VALUES (?, ?, ?, ?)";

/**
 * {@linkcode INSERT_BATCH} for the rows the statement just before it inserted (one multi-row
 * insert, {@linkcode INSERT_BATCH_JSON}), without knowing their `seq`s: SQLite numbers the rows of
 * one statement consecutively, `last_insert_rowid()` is the last one's and `changes()` counts
 * them (neither counts rows written by triggers: sqlite.org/lang_corefunc.html#changes). When the
 * key check skipped every row, nothing was acknowledged and no batch row is stored.
 */
export const INSERT_BATCH_AFTER_ROWS =
  "INSERT INTO receipt_batches (first_seq, last_seq, leaves, signature) " +
  "SELECT last_insert_rowid() - changes() + 1, last_insert_rowid(), ?, ? WHERE changes() > 0";

/**
 * The five members a row's receipt signature covers, as the row reads now (`id`, `received_at`,
 * `digest`, `kind`, `size`): what its stored signature, or what this process committed, is
 * checked against.
 */
export function signedFieldsOf(row: Record<string, unknown>): SignedReceiptFields {
  return {
    id: String(row.id),
    receivedAt: String(row.received_at),
    digest: String(row.digest),
    size: Number(row.size),
    kind: String(row.kind),
  };
}

/**
 * The stored signature of a row read with {@linkcode signatureColumns} and the five signed
 * members (`id`, `received_at`, `digest`, `size`, `kind`); undefined when it has none. A
 * per-receipt signature comes back as stored (a malformed path as it reads: a verifier then
 * reports that it does not verify). A batch's is rebuilt from its leaves for this row's receipt;
 * when the row's receipt is not among them (the row changed since it was signed), it comes back
 * with no place in the batch, so that it verifies nowhere.
 */
export function storedSignatureOf(row: Record<string, unknown>): StoredSignature | undefined {
  const signature = row.receipt_signature;
  if (signature === null || signature === undefined) return batchSignatureOf(row);
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

/** {@linkcode storedSignatureOf} for a row whose batch holds its signature (version 11). */
function batchSignatureOf(row: Record<string, unknown>): StoredSignature | undefined {
  const signature = row.batch_signature;
  if (signature === null || signature === undefined) return undefined;
  const leaves = row.batch_leaves instanceof ArrayBuffer
    ? new Uint8Array(row.batch_leaves)
    : row.batch_leaves instanceof Uint8Array
    ? row.batch_leaves
    : new Uint8Array(0);
  const batch = { leaves, signature: String(signature) };
  const offset = Number(row.signed_seq) - Number(row.batch_first_seq);
  const rows = Number(row.batch_last_seq) - Number(row.batch_first_seq) + 1;
  // Receipts turned away in the same commit have leaves and no rows: a row's place is at least
  // its offset among the rows, and at most that many places further.
  const found = receiptSignatureInBatch(
    signedFieldsOf(row),
    batch,
    offset,
    offset + leaves.length / 32 - rows,
  );
  return found ?? { signature: batch.signature, batch: { size: 0, index: -1, path: [] } };
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

/** The member of a row in {@linkcode INSERT_BATCH_JSON}'s array, by its place. */
const member = (place: number) => `r.value ->> ${place}`;

/**
 * The inserts of a whole batch as one short statement over one JSON array (`json_each`), for
 * remote databases, where one round trip per commit matters more than preparing once: the
 * database parses a constant statement and one string per commit, not a statement of 25
 * `SELECT`s with as many bound values per row. Each element is {@linkcode INSERT_COLUMNS}'s
 * values in order, then the key check's window start (null without one: `received_at >= NULL` is
 * never true, so nothing is skipped), then how the content is spelled, as JSON has no bytes:
 * `0` for its text, when it is UTF-8 without NUL (the content of every submission the Beacon
 * accepts; the text's UTF-8 is then exactly those bytes, `CAST … AS BLOB`), `1` for hex.
 * The key check is {@linkcode KEY_USED_SEQS} on the element's own members. Rows are inserted in
 * array order, so they get consecutive `seq`s in batch order; `RETURNING` names the rows
 * inserted and the `seq` each got.
 */
export const INSERT_BATCH_JSON = `INSERT INTO submissions (${INSERT_COLUMNS})
  SELECT ${member(0)}, ${member(1)}, ${member(2)}, ${member(3)}, ${member(4)}, ${member(5)},
    CASE ${member(15)} WHEN 0 THEN CAST(${member(6)} AS BLOB) ELSE unhex(${member(6)}) END,
    ${member(7)}, ${member(8)}, ${member(9)}, ${member(10)}, ${member(11)}, ${member(12)},
    ${member(13)}
  FROM json_each(?) AS r
  WHERE NOT EXISTS (SELECT seq FROM submissions
      WHERE idempotency_hash = ${member(13)} AND source_hash = ${member(9)}
        AND idempotency_key = ${member(12)} AND received_at >= ${member(14)}
    UNION ALL SELECT seq FROM submissions
      WHERE idempotency_hash IS NULL AND source_hash = ${member(9)}
        AND idempotency_key = ${member(12)} AND received_at >= ${member(14)})
  ORDER BY r.key
  RETURNING id, seq`;

const strictUtf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/** The content of an element of {@linkcode INSERT_BATCH_JSON} and how it is spelled. */
function contentMember(content: Uint8Array): [string, 0 | 1] {
  try {
    const text = strictUtf8.decode(content);
    if (!text.includes("\0")) return [text, 0];
  } catch {
    // not UTF-8: hex
  }
  return [hex(content), 1];
}

/** The argument of {@linkcode INSERT_BATCH_JSON} for `rows`. */
export function insertBatchJson(rows: readonly PendingRow[]): string {
  const elements = rows.map((row) => {
    const values: unknown[] = row.values.slice();
    const [content, spelling] = contentMember(row.values[6] as Uint8Array);
    values[6] = content;
    values.push(row.keySince?.[3] ?? null, spelling);
    return values;
  });
  return JSON.stringify(elements);
}

/**
 * The last statement of a remote batch's transaction ({@linkcode INSERT_BATCH_JSON}): it fails, and
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
    ...(row.row_seq === undefined ? {} : { seq: Number(row.row_seq) }),
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
