/**
 * The `submissions` row: its types, the one column list, the reads and the row mapper. Every
 * reader and writer of the table (store, review tool) takes them from here; each connection kind
 * keeps its own insert statements (src/store/connection/embedded/sql.ts, remote/sql.ts).
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
  /**
   * The receipt signature stored at intake (migration 9), as it is kept, where the lookup reads
   * it: signing's `receiptSignatureOf` turns it into the receipt's.
   */
  readonly signature?: StoredSignature;
}

/**
 * A receipt's signature exactly as the receipt carries it (`signature`, and for a batch signature
 * `batch`: docs/protocol-0.1.md §6.3-6.4; src/signing/receipt.ts `ReceiptSignature`).
 */
export interface CarriedSignature {
  /** Ed25519, unpadded base64url: over the receipt, or over its batch's root with `batch`. */
  readonly signature: string;
  /** The receipt's inclusion proof in the signed batch. */
  readonly batch?: {
    readonly size: number;
    readonly index: number;
    readonly path: readonly string[];
  };
}

/**
 * A row's receipt signature kept in its own row of `receipt_signatures` (schema version 9): as
 * the receipt carried it.
 */
export interface StoredOwnSignature extends CarriedSignature {
  readonly form: "receipt";
}

/**
 * A row's receipt signature kept in the row of `receipt_batches` whose range holds it (schema
 * version 11): the batch's leaves and one signature, the `seq`s of its first and last stored
 * rows, and the row's own `seq`. The receipt's proof is not stored; signing rebuilds it.
 */
export interface StoredBatchSignature {
  readonly form: "batch";
  /** The batch's one signature. */
  readonly signature: string;
  /** The receipts' RFC 6962 leaf hashes, 32 bytes each, in batch order. */
  readonly leaves: Uint8Array;
  readonly firstSeq: number;
  readonly lastSeq: number;
  /** The `seq` of the row whose signature this is. */
  readonly seq: number;
}

/**
 * A row's receipt signature in the form the store keeps it (either form); signing's
 * `receiptSignatureOf` (src/signing/receipt.ts) turns it into the one the receipt carried.
 */
export type StoredSignature = StoredOwnSignature | StoredBatchSignature;

/** The five signed members as a row reads now: its `kind` is whatever text the row holds. */
export type SignedFieldsAsRead = Omit<SignedFields, "kind"> & { readonly kind: string };

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
  /** The batch's one signature (the receipt signer's, `SignedReceipts` in store.ts). */
  readonly signature: string;
}

/** The columns an insert writes, in the order of {@linkcode PendingRow.values}. */
export const INSERT_COLUMNS =
  "id, context_id, received_at, surface, kind, content_type, content, size, digest, " +
  "source_hash, identity_fingerprint, identity_verified, idempotency_key, idempotency_hash";

/** The columns a receipt lookup reads (never the content). */
export const SUMMARY_COLUMNS =
  "id, context_id, received_at, surface, kind, size, digest, identity_fingerprint, identity_verified";

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
 * The batch rows that {@linkcode signatureJoin} passes over for some of the `seq`s their range
 * names, because a later batch row starts inside that range: `taken_from` is the first such `seq`
 * (the rows from there to `last_seq` read the later batch). SQLite numbers one commit's rows
 * consecutively, so this happens only when a database writer deleted the newest rows and SQLite
 * handed their `seq`s to the rows of a later commit (or a writer inserted a batch row). Needs
 * schema version 11; the `first_seq` index keeps each probe to the range's few rows.
 */
export const SHADOWED_BATCHES = "SELECT seq, first_seq, last_seq, leaves, taken_from FROM " +
  "(SELECT b.seq, b.first_seq, b.last_seq, b.leaves, (SELECT MIN(c.first_seq) FROM " +
  "receipt_batches c WHERE c.first_seq >= b.first_seq AND c.first_seq <= b.last_seq AND " +
  "(c.first_seq > b.first_seq OR c.seq > b.seq)) AS taken_from FROM receipt_batches b) " +
  "WHERE taken_from IS NOT NULL ORDER BY first_seq, seq";

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
 * The five members a row's receipt signature covers, as the row reads now (`id`, `received_at`,
 * `digest`, `kind`, `size`): what its stored signature, or what this process committed, is
 * checked against.
 */
export function signedFieldsOf(row: Record<string, unknown>): SignedFieldsAsRead {
  return {
    id: String(row.id),
    receivedAt: String(row.received_at),
    digest: String(row.digest),
    size: Number(row.size),
    kind: String(row.kind),
  };
}

/**
 * The stored signature of a row read with {@linkcode signatureColumns}, in the form it is kept;
 * undefined when it has none. A per-receipt signature comes back as the receipt carried it (a
 * malformed path as it reads: a verifier then reports that it does not verify). A batch's comes
 * back as its row holds it, with this row's `seq`: signing's `receiptSignatureOf`
 * (src/signing/receipt.ts) finds the receipt's place among the leaves and rebuilds its proof.
 */
export function storedSignatureOf(row: Record<string, unknown>): StoredSignature | undefined {
  const signature = row.receipt_signature;
  if (signature === null || signature === undefined) return batchSignatureOf(row);
  if (row.receipt_batch_size === null || row.receipt_batch_size === undefined) {
    return { form: "receipt", signature: String(signature) };
  }
  let path: unknown;
  try {
    path = JSON.parse(String(row.receipt_batch_path));
  } catch {
    path = [];
  }
  return {
    form: "receipt",
    signature: String(signature),
    batch: {
      size: Number(row.receipt_batch_size),
      index: Number(row.receipt_batch_index),
      path: Array.isArray(path) ? path.map(String) : [],
    },
  };
}

/** {@linkcode storedSignatureOf} for a row whose batch holds its signature (version 11). */
function batchSignatureOf(row: Record<string, unknown>): StoredBatchSignature | undefined {
  const signature = row.batch_signature;
  if (signature === null || signature === undefined) return undefined;
  const leaves = row.batch_leaves instanceof ArrayBuffer
    ? new Uint8Array(row.batch_leaves)
    : row.batch_leaves instanceof Uint8Array
    ? row.batch_leaves
    : new Uint8Array(0);
  return {
    form: "batch",
    signature: String(signature),
    leaves,
    firstSeq: Number(row.batch_first_seq),
    lastSeq: Number(row.batch_last_seq),
    seq: Number(row.signed_seq),
  };
}

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
