/**
 * The review tool's reads of the `submissions`, `review_events`, `redactions` and
 * `checkpoints` tables: the one column list, row mapper and keyset pager of the review side.
 * Every value reaches SQL as a bound parameter; only fixed SQL text is concatenated. Review
 * events and checkpoints are read in events.ts, the writes are in appends.ts, the full-text
 * index in search/search.ts.
 *
 * The status of a submission is its latest review event that sets one (highest `seq`), or none
 * ("new"): events are appended, never updated (design principle 3), and an event with the status
 * `new` sets an item back.
 *
 * @module
 */
import type { Client, InValue } from "@libsql/client";
import { type ReceiptSignature, receiptSignatureOf } from "../../src/signing/mod.ts";
import {
  signatureColumns,
  signatureJoin,
  signedFieldsOf,
  storedSignatureOf,
  type SubmissionKind,
  type Surface,
} from "../../src/store/mod.ts";
import type { ReviewDatabase, Schema } from "./database.ts";

/** A reviewer's decision about a submission; `new` sets it back to unreviewed. */
export type ReviewStatus = "new" | "reviewed" | "follow-up" | "dismissed" | "escalated";

/** Every review status, in the order the tool lists them. */
export const REVIEW_STATUSES: readonly ReviewStatus[] = [
  "new",
  "reviewed",
  "follow-up",
  "dismissed",
  "escalated",
];

/** Rows per keyset page, for every command that walks the store. */
export const PAGE_SIZE = 500;

/** Filters shared by `list`, `export`, `stats`, `next` and the console. */
export interface Filters {
  /** ISO 8601 UTC time: only submissions received at or after it. */
  readonly since?: string;
  /** ISO 8601 UTC time: only submissions received before it. */
  readonly until?: string;
  /** Only this kind. */
  readonly kind?: SubmissionKind;
  /** Only this surface. */
  readonly surface?: Surface;
  /** Lowercase hex prefix of the signer's key fingerprint (after `sha256:`). */
  readonly key?: string;
  /** Only submissions whose status is `new` (no event, or set back). */
  readonly unreviewed?: boolean;
  /** Only submissions whose latest status is this. */
  readonly status?: ReviewStatus;
  /** Only messages whose `intent` is exactly this. */
  readonly intent?: string;
  /** Only messages whose sender name contains this (case-insensitive). */
  readonly sender?: string;
  /** Only submissions from this salted source hash. */
  readonly source?: string;
  /** Only signed (true) or unsigned (false) submissions. */
  readonly signed?: boolean;
  /** Seqs of submissions matching a full-text search (search/search.ts), when searching. */
  readonly searchSql?: { readonly sql: string; readonly args: readonly InValue[] };
}

/** One stored submission with its latest status. */
export interface SubmissionRow {
  /** Position in the store (`seq`, the rowid). */
  readonly seq: number;
  /** Receipt id. */
  readonly id: string;
  /** A2A context id. */
  readonly contextId: string;
  /** ISO 8601 UTC time of receipt, as stored. */
  readonly receivedAt: string;
  /** `native` or `a2a` (stored text: a damaged row may hold anything). */
  readonly surface: string;
  /** `structured` or `unstructured`. */
  readonly kind: string;
  /** Media type of the content. */
  readonly contentType: string;
  /** The exact stored bytes (empty once redacted). */
  readonly content: Uint8Array<ArrayBuffer>;
  /** Stored byte count (as received; kept after redaction). */
  readonly size: number;
  /** Stored `sha256:<hex>` digest (as received; kept after redaction). */
  readonly digest: string;
  /** Salted hash of the source address. */
  readonly sourceHash: string;
  /** Signer key fingerprint, null when unsigned. */
  readonly identityFingerprint: string | null;
  /** Whether the signature verified at intake, null when unsigned. */
  readonly identityVerified: boolean | null;
  /** The sender's idempotency key, if any. */
  readonly idempotencyKey: string | null;
  /** Latest review status, or null when new. */
  readonly status: ReviewStatus | null;
  /** The redaction record, when the content was removed. */
  readonly redaction: Redaction | null;
  /** The receipt signature stored at intake (migration 9), null when none is stored. */
  readonly receiptSignature: ReceiptSignature | null;
}

/** A row's stored facts in the review tool's JSON outputs (export, `list --json`), in order. */
export function rowFacts(row: SubmissionRow): Record<string, unknown> {
  return {
    receivedAt: row.receivedAt,
    surface: row.surface,
    kind: row.kind,
    contentType: row.contentType,
    size: row.size,
    digest: row.digest,
    sourceHash: row.sourceHash,
  };
}

/** A row's signer in JSON outputs: `null` for an unsigned submission. */
export function signerOf(row: SubmissionRow): { fingerprint: string; verified: boolean } | null {
  return row.identityFingerprint === null
    ? null
    : { fingerprint: row.identityFingerprint, verified: row.identityVerified === true };
}

/** A redaction record: who removed the content, when and why. */
export interface Redaction {
  /** ISO 8601 UTC time it was recorded. */
  readonly createdAt: string;
  /** The operator's name. */
  readonly by: string;
  /** The reason given (a legal duty, an order's reference). */
  readonly reason: string;
  /** The Ed25519 signature of the record (src/signing/redaction.ts), null when unsigned. */
  readonly signature: string | null;
  /** The public key it claims to be signed by, null when unsigned. */
  readonly publicKey: string | null;
}

/**
 * The SQL expression for a submission's latest status, NULL when new (`s` is the submissions
 * alias).
 *
 * @param schema Tables present; without `review_events` every status is NULL.
 * @returns SQL text.
 */
export function statusExpression(schema: Schema): string {
  return schema.events
    ? "NULLIF((SELECT r.status FROM review_events r WHERE r.submission_id = s.id " +
      "AND r.status IS NOT NULL ORDER BY r.seq DESC LIMIT 1), 'new')"
    : "NULL";
}

function rowColumns(schema: Schema): string {
  const redaction =
    (schema.redactions
      ? "d.created_at AS redacted_at, d.redacted_by, d.reason AS redaction_reason, "
      : "NULL AS redacted_at, NULL AS redacted_by, NULL AS redaction_reason, ") +
    (schema.signedRedactions
      ? "d.signature AS redaction_signature, d.public_key AS redaction_key"
      : "NULL AS redaction_signature, NULL AS redaction_key");
  return "s.seq, s.id, s.context_id, s.received_at, s.surface, s.kind, " +
    "s.content_type, s.content, s.size, s.digest, s.source_hash, s.identity_fingerprint, " +
    `s.identity_verified, s.idempotency_key, ${
      statusExpression(schema)
    } AS status, ${redaction}, ` +
    (schema.receiptSignatures
      ? signatureColumns("s", schema.receiptBatches)
      : "NULL AS receipt_signature, NULL AS receipt_batch_size, NULL AS receipt_batch_index, " +
        "NULL AS receipt_batch_path");
}

function rowSource(schema: Schema): string {
  return "submissions s" +
    (schema.redactions ? " LEFT JOIN redactions d ON d.submission_id = s.id" : "") +
    (schema.receiptSignatures ? " " + signatureJoin("s", schema.receiptBatches) : "");
}

/** The message text of structured content (native, or an A2A data part), for filters. */
function messageMember(member: string): string {
  const text = "CAST(s.content AS TEXT)";
  return `(CASE WHEN s.kind = 'structured' AND json_valid(${text}) THEN coalesce(` +
    `json_extract(${text}, '$.${member}'), json_extract(${text}, '$.parts[0].data.${member}')) ` +
    "END)";
}

/**
 * The WHERE clause (possibly empty, else starting with ` WHERE `) and its arguments.
 *
 * @param filters The filters.
 * @param schema Tables present.
 * @param extra More conditions (fixed SQL) and their arguments, ANDed in.
 * @returns SQL text and arguments.
 */
export function whereClause(
  filters: Filters,
  schema: Schema,
  extra: { sql: string; args: readonly InValue[] }[] = [],
): { sql: string; args: InValue[] } {
  const conditions: string[] = [];
  const args: InValue[] = [];
  const add = (sql: string, ...values: InValue[]) => {
    conditions.push(sql);
    args.push(...values);
  };
  // Stored times are `Date.prototype.toISOString()` output, so text order is time order.
  if (filters.since !== undefined) add("s.received_at >= ?", filters.since);
  if (filters.until !== undefined) add("s.received_at < ?", filters.until);
  if (filters.kind !== undefined) add("s.kind = ?", filters.kind);
  if (filters.surface !== undefined) add("s.surface = ?", filters.surface);
  if (filters.key !== undefined) {
    const prefix = "sha256:" + filters.key;
    add("substr(s.identity_fingerprint, 1, ?) = ?", prefix.length, prefix);
  }
  if (filters.source !== undefined) add("s.source_hash = ?", filters.source);
  if (filters.signed === true) add("s.identity_fingerprint IS NOT NULL");
  if (filters.signed === false) add("s.identity_fingerprint IS NULL");
  if (filters.intent !== undefined) add(`${messageMember("intent")} = ?`, filters.intent);
  if (filters.sender !== undefined) {
    add(`instr(lower(${messageMember("sender.name")}), lower(?)) > 0`, filters.sender);
  }
  if (filters.unreviewed === true) add(`${statusExpression(schema)} IS NULL`);
  if (filters.status === "new") add(`${statusExpression(schema)} IS NULL`);
  else if (filters.status !== undefined) add(`${statusExpression(schema)} = ?`, filters.status);
  if (filters.searchSql !== undefined) {
    add(`s.seq IN (${filters.searchSql.sql})`, ...filters.searchSql.args);
  }
  for (const condition of extra) add(condition.sql, ...condition.args);
  return { sql: conditions.length === 0 ? "" : " WHERE " + conditions.join(" AND "), args };
}

function bytes(value: unknown): Uint8Array<ArrayBuffer> {
  if (value instanceof ArrayBuffer) return new Uint8Array(value);
  if (value instanceof Uint8Array) return new Uint8Array(value);
  if (typeof value === "string") return new TextEncoder().encode(value);
  return new Uint8Array(0);
}

/**
 * A nullable text column.
 *
 * @param value The column value.
 * @returns Its text, or null.
 */
export function nullableString(value: unknown): string | null {
  return value === null || value === undefined ? null : String(value);
}

function toRow(row: Record<string, unknown>): SubmissionRow {
  return {
    seq: Number(row.seq),
    id: String(row.id),
    contextId: String(row.context_id),
    receivedAt: String(row.received_at),
    surface: String(row.surface),
    kind: String(row.kind),
    contentType: String(row.content_type),
    content: bytes(row.content),
    size: Number(row.size),
    digest: String(row.digest),
    sourceHash: String(row.source_hash),
    identityFingerprint: nullableString(row.identity_fingerprint),
    identityVerified: row.identity_verified === null || row.identity_verified === undefined
      ? null
      : Number(row.identity_verified) === 1,
    idempotencyKey: nullableString(row.idempotency_key),
    status: nullableString(row.status) as ReviewStatus | null,
    redaction: row.redacted_at === null || row.redacted_at === undefined ? null : {
      createdAt: String(row.redacted_at),
      by: String(row.redacted_by),
      reason: String(row.redaction_reason),
      signature: nullableString(row.redaction_signature),
      publicKey: nullableString(row.redaction_key),
    },
    receiptSignature: receiptSignatureOf(signedFieldsOf(row), storedSignatureOf(row)) ?? null,
  };
}

/**
 * Runs one read with bound arguments.
 *
 * @param client The database.
 * @param sql Fixed SQL text.
 * @param args The values.
 * @returns The rows.
 */
export async function query(
  client: Client,
  sql: string,
  args: readonly InValue[],
): Promise<Record<string, unknown>[]> {
  return (await client.execute({ sql, args: [...args] })).rows as unknown as Record<
    string,
    unknown
  >[];
}

/**
 * One keyset page of matching submissions (`WHERE seq > after` ascending, or `seq < before`
 * descending): each page costs the same however deep it is.
 *
 * @param client The database.
 * @param schema Tables present.
 * @param filters The filters.
 * @param page `after` (oldest first) or `before` (newest first, 0 meaning from the newest), and
 *   the page size.
 * @returns The rows.
 */
export async function submissionPage(
  client: Client,
  schema: Schema,
  filters: Filters,
  page: {
    after?: number;
    before?: number;
    limit: number;
    extra?: { sql: string; args: InValue[] };
  },
): Promise<SubmissionRow[]> {
  const descending = page.after === undefined;
  const keyset = descending
    ? (page.before ?? 0) > 0 ? [{ sql: "s.seq < ?", args: [page.before!] }] : []
    : [{ sql: "s.seq > ?", args: [page.after!] }];
  const where = whereClause(filters, schema, [...keyset, ...(page.extra ? [page.extra] : [])]);
  const rows = await query(
    client,
    `SELECT ${rowColumns(schema)} FROM ${rowSource(schema)}${where.sql} ` +
      `ORDER BY s.seq ${descending ? "DESC" : "ASC"} LIMIT ?`,
    [...where.args, page.limit],
  );
  return rows.map(toRow);
}

/**
 * Pages through the matching submissions in `seq` order with keyset pagination: only one page
 * is in memory at a time.
 *
 * @param client The database.
 * @param schema Tables present.
 * @param filters The filters.
 * @param pageSize Rows per page.
 * @returns Pages of rows, oldest first.
 */
export async function* submissionPages(
  client: Client,
  schema: Schema,
  filters: Filters,
  pageSize = PAGE_SIZE,
): AsyncGenerator<SubmissionRow[]> {
  let after = 0;
  while (true) {
    const rows = await submissionPage(client, schema, filters, { after, limit: pageSize });
    if (rows.length === 0) return;
    yield rows;
    after = rows[rows.length - 1].seq;
    if (rows.length < pageSize) return;
  }
}

/** Where the queue continues: in the new items, or after them in the reviewed ones. */
export interface QueueCursor {
  /** `new` items come first, then `done` (every other status). */
  readonly phase: "new" | "done";
  /** The last `seq` shown in that phase. */
  readonly after: number;
}

/**
 * One page of the review queue: new items first, oldest first, then the others, oldest first.
 * With a status filter, only that status (one phase).
 *
 * @param client The database.
 * @param schema Tables present.
 * @param filters The filters.
 * @param cursor Where to continue (from the start when undefined).
 * @param limit Page size.
 * @returns The rows and the cursor of the next page (undefined at the end).
 */
export async function queuePage(
  client: Client,
  schema: Schema,
  filters: Filters,
  cursor: QueueCursor | undefined,
  limit: number,
): Promise<{ rows: SubmissionRow[]; next?: QueueCursor }> {
  let phase = cursor?.phase ?? "new";
  let after = cursor?.after ?? 0;
  const rows: SubmissionRow[] = [];
  const single = filters.status !== undefined || filters.unreviewed === true;
  while (rows.length < limit) {
    const extra = single
      ? undefined
      : { sql: `${statusExpression(schema)} IS ${phase === "new" ? "" : "NOT "}NULL`, args: [] };
    const page = await submissionPage(client, schema, filters, {
      after,
      limit: limit - rows.length + 1,
      extra,
    });
    const room = limit - rows.length;
    rows.push(...page.slice(0, room));
    if (page.length > room) return { rows, next: { phase, after: rows[rows.length - 1].seq } };
    if (single || phase === "done") return { rows };
    phase = "done";
    after = 0;
  }
  return { rows, next: { phase, after } };
}

/**
 * How many submissions match.
 *
 * @param client The database.
 * @param schema Tables present.
 * @param filters The filters.
 * @returns The count.
 */
export async function countSubmissions(
  client: Client,
  schema: Schema,
  filters: Filters,
): Promise<number> {
  const where = whereClause(filters, schema);
  const rows = await query(
    client,
    `SELECT count(*) AS n FROM submissions s${where.sql}`,
    where.args,
  );
  return Number(rows[0]?.n ?? 0);
}

/** Whether any redaction record is stored (a store older than the table has none). */
export async function hasRedactions(database: ReviewDatabase): Promise<boolean> {
  if (!database.schema.redactions) return false;
  return (await database.client.execute("SELECT 1 FROM redactions LIMIT 1")).rows.length > 0;
}

/**
 * The submission with receipt id `id`.
 *
 * @param client The database.
 * @param schema Tables present.
 * @param id The receipt id.
 * @returns The row, or undefined.
 */
export async function findSubmission(
  client: Client,
  schema: Schema,
  id: string,
): Promise<SubmissionRow | undefined> {
  const rows = await query(
    client,
    `SELECT ${rowColumns(schema)} FROM ${rowSource(schema)} WHERE s.id = ?`,
    [id],
  );
  return rows[0] === undefined ? undefined : toRow(rows[0]);
}

/**
 * The receipt ids starting with `prefix`, at most `limit` (a range over the unique id index:
 * ids are base64url, all below U+007F, so `prefix <= id < prefix + U+007F` is exactly them).
 *
 * @param client The database.
 * @param prefix The start of an id.
 * @param limit At most this many.
 * @returns The ids, in order.
 */
export async function idsWithPrefix(
  client: Client,
  prefix: string,
  limit: number,
): Promise<string[]> {
  const rows = await query(
    client,
    "SELECT id FROM submissions WHERE id >= ? AND id < ? ORDER BY id LIMIT ?",
    [prefix, prefix + "\u007f", limit],
  );
  return rows.map((row) => String(row.id));
}
