/**
 * The review tool's reads of the `submissions`, `review_events` and `checkpoints` tables. Every
 * value reaches SQL as a bound parameter; only fixed SQL text is concatenated.
 *
 * The status of a submission is its latest review event (highest `seq`), or none
 * ("unreviewed"): events are appended, never updated (design principle 3).
 *
 * @module
 */
import type { Client, InValue } from "@libsql/client";
import type { SubmissionKind, Surface } from "../store/store.ts";
import type { Schema } from "./database.ts";

/** A reviewer's decision about a submission. */
export type ReviewStatus = "reviewed" | "dismissed" | "escalated";

/** Every review status, in the order the tool lists them. */
export const REVIEW_STATUSES: readonly ReviewStatus[] = ["reviewed", "dismissed", "escalated"];

/** Filters shared by `list`, `export` and `stats`. */
export interface Filters {
  /** ISO 8601 UTC time: only submissions received at or after it. */
  readonly since?: string;
  /** Only this kind. */
  readonly kind?: SubmissionKind;
  /** Only this surface. */
  readonly surface?: Surface;
  /** Lowercase hex prefix of the signer's key fingerprint (after `sha256:`). */
  readonly key?: string;
  /** Only submissions without any review event. */
  readonly unreviewed?: boolean;
  /** Only submissions whose latest status is this. */
  readonly status?: ReviewStatus;
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
  /** The exact stored bytes. */
  readonly content: Uint8Array<ArrayBuffer>;
  /** Stored byte count. */
  readonly size: number;
  /** Stored `sha256:<hex>` digest. */
  readonly digest: string;
  /** Salted hash of the source address. */
  readonly sourceHash: string;
  /** Signer key fingerprint, null when unsigned. */
  readonly identityFingerprint: string | null;
  /** Whether the signature verified at intake, null when unsigned. */
  readonly identityVerified: boolean | null;
  /** The sender's idempotency key, if any. */
  readonly idempotencyKey: string | null;
  /** Latest review status, or null when unreviewed. */
  readonly status: ReviewStatus | null;
}

/** One appended review event. */
export interface ReviewEvent {
  /** Order of appending. */
  readonly seq: number;
  /** The receipt id it is about. */
  readonly submissionId: string;
  /** The decision. */
  readonly status: ReviewStatus;
  /** The reviewer's note, if any. */
  readonly note: string | null;
  /** The reviewer's name, if given. */
  readonly reviewer: string | null;
  /** ISO 8601 UTC time it was appended. */
  readonly createdAt: string;
}

/** One recorded checkpoint. */
export interface CheckpointRow {
  /** Order of appending. */
  readonly seq: number;
  /** Submissions covered, from the first in `seq` order. */
  readonly treeSize: number;
  /** RFC 6962 root over them, 64 lowercase hex digits. */
  readonly rootHash: string;
  /** ISO 8601 UTC time it was made. */
  readonly createdAt: string;
  /** Ed25519 signature (signing/checkpoint.ts), unpadded base64url. */
  readonly signature: string;
  /** The signer's raw public key, unpadded base64url. */
  readonly publicKey: string;
}

const LATEST_STATUS =
  "(SELECT r.status FROM review_events r WHERE r.submission_id = s.id ORDER BY r.seq DESC LIMIT 1)";

/**
 * The SQL expression for a submission's latest status (`s` is the submissions alias).
 *
 * @param schema Tables present; without `review_events` every status is NULL.
 * @returns SQL text.
 */
export function statusExpression(schema: Schema): string {
  return schema.events ? LATEST_STATUS : "NULL";
}

const ROW_COLUMNS = "s.seq, s.id, s.context_id, s.received_at, s.surface, s.kind, " +
  "s.content_type, s.content, s.size, s.digest, s.source_hash, s.identity_fingerprint, " +
  "s.identity_verified, s.idempotency_key";

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
  extra: { sql: string; args: InValue[] }[] = [],
): { sql: string; args: InValue[] } {
  const conditions: string[] = [];
  const args: InValue[] = [];
  if (filters.since !== undefined) {
    // Stored times are `Date.prototype.toISOString()` output, so text order is time order.
    conditions.push("s.received_at >= ?");
    args.push(filters.since);
  }
  if (filters.kind !== undefined) {
    conditions.push("s.kind = ?");
    args.push(filters.kind);
  }
  if (filters.surface !== undefined) {
    conditions.push("s.surface = ?");
    args.push(filters.surface);
  }
  if (filters.key !== undefined) {
    const prefix = "sha256:" + filters.key;
    conditions.push("substr(s.identity_fingerprint, 1, ?) = ?");
    args.push(prefix.length, prefix);
  }
  if (filters.unreviewed === true) {
    if (schema.events) {
      conditions.push("NOT EXISTS (SELECT 1 FROM review_events r WHERE r.submission_id = s.id)");
    }
  }
  if (filters.status !== undefined) {
    conditions.push(`${statusExpression(schema)} = ?`);
    args.push(filters.status);
  }
  for (const condition of extra) {
    conditions.push(condition.sql);
    args.push(...condition.args);
  }
  return { sql: conditions.length === 0 ? "" : " WHERE " + conditions.join(" AND "), args };
}

function bytes(value: unknown): Uint8Array<ArrayBuffer> {
  if (value instanceof ArrayBuffer) return new Uint8Array(value);
  if (value instanceof Uint8Array) return new Uint8Array(value);
  if (typeof value === "string") return new TextEncoder().encode(value);
  return new Uint8Array(0);
}

function nullableString(value: unknown): string | null {
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
  };
}

async function query(
  client: Client,
  sql: string,
  args: InValue[],
): Promise<Record<string, unknown>[]> {
  return (await client.execute({ sql, args })).rows as unknown as Record<string, unknown>[];
}

/**
 * The newest submissions matching `filters`, newest first.
 *
 * @param client The database.
 * @param schema Tables present.
 * @param filters The filters.
 * @param limit At most this many.
 * @returns The rows.
 */
export async function latestSubmissions(
  client: Client,
  schema: Schema,
  filters: Filters,
  limit: number,
): Promise<SubmissionRow[]> {
  const where = whereClause(filters, schema);
  const rows = await query(
    client,
    `SELECT ${ROW_COLUMNS}, ${statusExpression(schema)} AS status FROM submissions s` +
      `${where.sql} ORDER BY s.seq DESC LIMIT ?`,
    [...where.args, limit],
  );
  return rows.map(toRow);
}

/**
 * Pages through the matching submissions in `seq` order with keyset pagination
 * (`WHERE seq > last LIMIT pageSize`): each page costs the same however deep it is, and only
 * one page is in memory at a time.
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
  pageSize = 500,
): AsyncGenerator<SubmissionRow[]> {
  let after = 0;
  while (true) {
    const where = whereClause(filters, schema, [{ sql: "s.seq > ?", args: [after] }]);
    const rows = (await query(
      client,
      `SELECT ${ROW_COLUMNS}, ${statusExpression(schema)} AS status FROM submissions s` +
        `${where.sql} ORDER BY s.seq LIMIT ?`,
      [...where.args, pageSize],
    )).map(toRow);
    if (rows.length === 0) return;
    yield rows;
    after = rows[rows.length - 1].seq;
    if (rows.length < pageSize) return;
  }
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
    `SELECT ${ROW_COLUMNS}, ${
      statusExpression(schema)
    } AS status FROM submissions s WHERE s.id = ?`,
    [id],
  );
  return rows[0] === undefined ? undefined : toRow(rows[0]);
}

/**
 * Every review event of a submission, oldest first.
 *
 * @param client The database.
 * @param schema Tables present.
 * @param id The receipt id.
 * @returns The events.
 */
export async function reviewEvents(
  client: Client,
  schema: Schema,
  id: string,
): Promise<ReviewEvent[]> {
  if (!schema.events) return [];
  const rows = await query(
    client,
    "SELECT seq, submission_id, status, note, reviewer, created_at FROM review_events " +
      "WHERE submission_id = ? ORDER BY seq",
    [id],
  );
  return rows.map((row) => ({
    seq: Number(row.seq),
    submissionId: String(row.submission_id),
    status: String(row.status) as ReviewStatus,
    note: nullableString(row.note),
    reviewer: nullableString(row.reviewer),
    createdAt: String(row.created_at),
  }));
}

/**
 * Every recorded checkpoint, oldest first.
 *
 * @param client The database.
 * @param schema Tables present.
 * @returns The checkpoints.
 */
export async function checkpoints(client: Client, schema: Schema): Promise<CheckpointRow[]> {
  if (!schema.checkpoints) return [];
  const rows = await query(
    client,
    "SELECT seq, tree_size, root_hash, created_at, signature, public_key FROM checkpoints ORDER BY seq",
    [],
  );
  return rows.map((row) => ({
    seq: Number(row.seq),
    treeSize: Number(row.tree_size),
    rootHash: String(row.root_hash),
    createdAt: String(row.created_at),
    signature: String(row.signature),
    publicKey: String(row.public_key),
  }));
}
