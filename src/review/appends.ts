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
import type { RedactionFields } from "../signing/redaction.ts";
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
export type RedactionOutcome =
  | "redacted"
  | "already redacted"
  | "no such submission"
  | "the clock is before the submission's receipt time";

/** The signed record of a redaction, as {@linkcode redact} asks its signer for it. */
export type RedactionSigner = (
  record: RedactionFields,
) => Promise<{ signature: string; publicKey: string }>;

/**
 * Redacts one submission in one write transaction: appends the signed redaction record (which
 * row and its digest, who, when, why: src/signing/redaction.ts), sets the content to zero bytes
 * (the only update the trigger allows), and drops the row from the review search index.
 * `digest`, `size` and `seq` stay.
 *
 * Then it erases what the update left behind (docs/review.md "Redaction"): `secure_delete` makes
 * SQLite overwrite freed page space with zeros, the FTS5 index is merged into one segment
 * (`optimize`, https://sqlite.org/fts5.html §6.9) so the deleted terms leave the index's pages,
 * and the WAL is checkpointed with TRUNCATE so the old page images leave the `-wal` file.
 *
 * @param client The migrated database.
 * @param record The receipt id, reason, operator and time.
 * @param sign Signs the record (the Beacon's key).
 * @returns What happened, and whether the WAL checkpoint completed (it cannot while another
 *   process, such as a running server, holds a read open; then run the one command that
 *   docs/review.md names: stop the server).
 */
export async function redact(
  client: Client,
  record: { id: string; reason: string; by: string; createdAt: string },
  sign: RedactionSigner,
): Promise<{ outcome: RedactionOutcome; checkpointed: boolean }> {
  const transaction = await client.transaction("write");
  try {
    // A connection flag: it covers this transaction's freed pages (https://sqlite.org/pragma.html#pragma_secure_delete).
    await transaction.execute("PRAGMA secure_delete = ON");
    const exists = await transaction.execute({
      sql: "SELECT s.seq, s.digest, s.received_at, d.seq AS redaction FROM submissions s " +
        "LEFT JOIN redactions d ON d.submission_id = s.id WHERE s.id = ?",
      args: [record.id],
    });
    const row = exists.rows[0];
    if (row === undefined || row.redaction !== null) {
      await transaction.rollback();
      return {
        outcome: row === undefined ? "no such submission" : "already redacted",
        checkpointed: false,
      };
    }
    if (!(Date.parse(record.createdAt) >= Date.parse(String(row.received_at)))) {
      await transaction.rollback();
      return { outcome: "the clock is before the submission's receipt time", checkpointed: false };
    }
    const signed = await sign({ ...record, digest: String(row.digest) });
    await transaction.execute({
      sql: "INSERT INTO redactions " +
        "(submission_id, reason, redacted_by, created_at, signature, public_key) " +
        "VALUES (?, ?, ?, ?, ?, ?)",
      args: [
        record.id,
        record.reason,
        record.by,
        record.createdAt,
        signed.signature,
        signed.publicKey,
      ],
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
      await transaction.execute("INSERT INTO review_fts (review_fts) VALUES ('optimize')");
    }
    await transaction.commit();
  } finally {
    transaction.close();
  }
  return { outcome: "redacted", checkpointed: await checkpointWal(client) };
}

/**
 * `PRAGMA wal_checkpoint(TRUNCATE)` (https://sqlite.org/pragma.html#pragma_wal_checkpoint):
 * copies every page of the WAL into the database and empties the `-wal` file. It reports
 * `busy = 1` when a reader kept it from finishing; a remote database (sqld) may refuse the
 * pragma. Both are `false`: the caller says what to run.
 */
async function checkpointWal(client: Client): Promise<boolean> {
  try {
    await client.execute("PRAGMA secure_delete = ON");
    const result = await client.execute("PRAGMA wal_checkpoint(TRUNCATE)");
    const busy = result.rows[0]?.busy ?? result.rows[0]?.[0];
    return Number(busy) === 0;
  } catch {
    return false;
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
