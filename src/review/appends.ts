/**
 * The review tool's writes, every one an append: review events, redaction records (and the one
 * update the database allows, removing a redacted row's content), checkpoints. The rules are
 * enforced by the database's triggers (store/migrations.ts, version 5); these functions only
 * keep each append to one statement or one transaction, with no window between a check and the
 * write.
 *
 * @module
 */
import type { Client } from "@libsql/client";
import type { CheckpointFields } from "../signing/checkpoint.ts";
import type { ReviewStatus } from "./queries.ts";

/** Longest note, in UTF-16 code units. */
export const MAX_NOTE = 4000;
/** Longest reviewer name or redaction reason. */
export const MAX_REVIEWER = 200;
/** Longest redaction reason. */
export const MAX_REASON = 2000;

/** A review event to append. */
export interface NewEvent {
  /** The receipt id. */
  readonly id: string;
  /** The status it sets, or undefined for a note alone. */
  readonly status?: ReviewStatus;
  /** The note, if any. */
  readonly note?: string;
  /** Who, if known. */
  readonly reviewer?: string;
  /** The event whose note this one corrects. */
  readonly supersedes?: number;
  /** ISO 8601 UTC time. */
  readonly createdAt: string;
}

/**
 * Appends a review event, only if the submission exists (and, when correcting a note, only if
 * the corrected event is a note of the same submission): one statement.
 *
 * @param client The migrated database.
 * @param event The event.
 * @returns The new event's `seq`, or undefined when the submission (or corrected note) is not
 *   there.
 */
export async function appendEvent(client: Client, event: NewEvent): Promise<number | undefined> {
  const result = await client.execute({
    sql: `INSERT INTO review_events
        (submission_id, status, note, reviewer, created_at, supersedes)
      SELECT ?, ?, ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM submissions WHERE id = ?)
        AND (? IS NULL OR EXISTS (SELECT 1 FROM review_events
          WHERE seq = ? AND submission_id = ? AND note IS NOT NULL))`,
    args: [
      event.id,
      event.status ?? null,
      event.note ?? null,
      event.reviewer === undefined || event.reviewer === "" ? null : event.reviewer,
      event.createdAt,
      event.supersedes ?? null,
      event.id,
      event.supersedes ?? null,
      event.supersedes ?? null,
      event.id,
    ],
  });
  return result.rowsAffected === 0 ? undefined : Number(result.lastInsertRowid);
}

/** What a redaction did. */
export type RedactionOutcome = "redacted" | "already redacted" | "no such submission";

/**
 * Redacts one submission in one write transaction: appends the redaction record (who, when,
 * why), sets the content to zero bytes (the only update the trigger allows), and drops the row
 * from the review search index. `digest`, `size` and `seq` stay.
 *
 * @param client The migrated database.
 * @param record The receipt id, reason, operator and time.
 * @returns What happened.
 */
export async function redact(
  client: Client,
  record: { id: string; reason: string; by: string; createdAt: string },
): Promise<RedactionOutcome> {
  const transaction = await client.transaction("write");
  try {
    const exists = await transaction.execute({
      sql: "SELECT s.seq, d.seq AS redaction FROM submissions s " +
        "LEFT JOIN redactions d ON d.submission_id = s.id WHERE s.id = ?",
      args: [record.id],
    });
    const row = exists.rows[0];
    if (row === undefined || row.redaction !== null) {
      await transaction.rollback();
      return row === undefined ? "no such submission" : "already redacted";
    }
    await transaction.execute({
      sql: "INSERT INTO redactions (submission_id, reason, redacted_by, created_at) " +
        "VALUES (?, ?, ?, ?)",
      args: [record.id, record.reason, record.by, record.createdAt],
    });
    await transaction.execute({
      sql: "UPDATE submissions SET content = X'' WHERE id = ?",
      args: [record.id],
    });
    const index = await transaction.execute(
      "SELECT name FROM sqlite_master WHERE name = 'review_fts'",
    );
    if (index.rows.length > 0) {
      await transaction.execute({ sql: "DELETE FROM review_fts WHERE rowid = ?", args: [row.seq] });
    }
    await transaction.commit();
    return "redacted";
  } finally {
    transaction.close();
  }
}

/**
 * Appends a signed checkpoint.
 *
 * @param client The migrated database.
 * @param head The signed fields.
 * @param signature The Ed25519 signature (base64url).
 * @param publicKey The signer's public key (base64url).
 * @returns The checkpoint's `seq`.
 */
export async function appendCheckpoint(
  client: Client,
  head: CheckpointFields,
  signature: string,
  publicKey: string,
): Promise<number> {
  const inserted = await client.execute({
    sql: "INSERT INTO checkpoints (tree_size, root_hash, created_at, signature, public_key) " +
      "VALUES (?, ?, ?, ?, ?)",
    args: [head.treeSize, head.rootHash, head.createdAt, signature, publicKey],
  });
  return Number(inserted.lastInsertRowid);
}
