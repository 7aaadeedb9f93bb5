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
import {
  type CheckpointFields,
  type RedactionFields,
  SIGNING_KEY_SECRET,
} from "../../src/signing/mod.ts";
import type { ReviewStatus } from "./queries.ts";
import { CliError } from "../io.ts";

/** Longest note, in UTF-16 code units. */
export const MAX_NOTE = 4000;
/** Longest reviewer name or redaction reason. */
export const MAX_REVIEWER = 200;
/** Longest redaction reason. */
export const MAX_REASON = 2000;

/**
 * Checks a note and a reviewer name before they are appended (`mark`, `triage`, the console).
 *
 * @param note The note, if any.
 * @param reviewer The name, if any.
 * @throws {CliError} Status 2 when either is too long or not well-formed text.
 */
export function checkNoteAndReviewer(note?: string, reviewer?: string): void {
  if (note !== undefined && (note.length > MAX_NOTE || !note.isWellFormed() || note === "")) {
    throw new CliError(
      `Cannot mark: the note must be well-formed text of 1 to ${MAX_NOTE} characters`,
      2,
    );
  }
  if (reviewer !== undefined && (reviewer.length > MAX_REVIEWER || !reviewer.isWellFormed())) {
    throw new CliError(
      `Cannot mark: the reviewer name must be at most ${MAX_REVIEWER} characters`,
      2,
    );
  }
}

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

/** How far a redaction's erasure of the database files went (see {@linkcode redact}). */
export type Erasure = "complete" | "wal busy" | "remote" | "none";

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
 * A remote database (sqld, Turso) takes neither pragma over its protocol (sqld refuses them as
 * unsupported statements and closes the transaction), so there only the index merge runs, and the
 * files are the database server's to erase (docs/review.md names how).
 *
 * @param client The migrated database.
 * @param record The receipt id, reason, operator and time.
 * @param sign Signs the record (the Beacon's key).
 * @param embedded Whether the database is an embedded file (the pragmas apply).
 * @returns What happened, the content it removed (for the caller's look for copies left in the
 *   file: {@linkcode fileHolds}), and how far the erasure went: `complete`, `wal busy` (the checkpoint
 *   could not finish while another process, such as a running server, reads the database; stop
 *   the server, docs/review.md) or `remote`.
 */
export async function redact(
  client: Client,
  record: { id: string; reason: string; by: string; createdAt: string },
  sign: RedactionSigner,
  embedded: boolean,
): Promise<{ outcome: RedactionOutcome; erased: Erasure; removed?: Uint8Array }> {
  const transaction = await client.transaction("write");
  let removed: Uint8Array | undefined;
  try {
    // A connection flag, so set on the transaction's own connection: it covers the pages this
    // transaction frees (https://sqlite.org/pragma.html#pragma_secure_delete).
    if (embedded) await transaction.execute("PRAGMA secure_delete = ON");
    const exists = await transaction.execute({
      sql:
        "SELECT s.seq, s.digest, s.received_at, s.content, d.seq AS redaction FROM submissions s " +
        "LEFT JOIN redactions d ON d.submission_id = s.id WHERE s.id = ?",
      args: [record.id],
    });
    const row = exists.rows[0];
    if (row === undefined || row.redaction !== null) {
      await transaction.rollback();
      return {
        outcome: row === undefined ? "no such submission" : "already redacted",
        erased: "none",
      };
    }
    if (!(Date.parse(record.createdAt) >= Date.parse(String(row.received_at)))) {
      await transaction.rollback();
      return { outcome: "the clock is before the submission's receipt time", erased: "none" };
    }
    removed = row.content instanceof ArrayBuffer ? new Uint8Array(row.content) : undefined;
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
  if (!embedded) return { outcome: "redacted", erased: "remote" };
  return {
    outcome: "redacted",
    erased: await checkpointWal(client) ? "complete" : "wal busy",
    removed: removed,
  };
}

/**
 * `PRAGMA wal_checkpoint(TRUNCATE)` (https://sqlite.org/pragma.html#pragma_wal_checkpoint):
 * copies every page of the WAL into the database and empties the `-wal` file. It reports
 * `busy = 1` when a reader kept it from finishing: `false`, and the caller says what to do.
 */
export async function checkpointWal(client: Client): Promise<boolean> {
  try {
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

/**
 * Whether the file at `path` holds `needle` anywhere: after a complete checkpoint, the look for
 * copies of a redacted content that a writer without `secure_delete` left in free page space
 * (src/store/client.ts, `ERASE_FREED_PRAGMA`). Reads 1 MiB at a time, overlapping by the
 * needle's length.
 */
export async function fileHolds(path: string, needle: Uint8Array): Promise<boolean> {
  const { open } = await import("node:fs/promises");
  const { Buffer } = await import("node:buffer");
  const file = await open(path, "r");
  try {
    const chunk = Buffer.alloc(1 << 20);
    const keep = needle.length - 1;
    let position = 0;
    let carried = 0;
    for (;;) {
      const { bytesRead } = await file.read(chunk, carried, chunk.length - carried, position);
      if (bytesRead === 0) return false;
      const filled = carried + bytesRead;
      if (chunk.subarray(0, filled).indexOf(needle) !== -1) return true;
      position += bytesRead;
      carried = Math.min(keep, filled);
      chunk.copy(chunk, 0, filled - carried, filled);
    }
  } finally {
    await file.close();
  }
}

/**
 * Deletes the signing key an earlier version kept in the `secrets` table (review key move-out), in
 * one transaction whose connection erases what it frees
 * (https://sqlite.org/pragma.html#pragma_secure_delete), and only if it is still that key.
 */
export async function deleteKeptKey(
  client: Client,
  seed: Uint8Array,
  embedded: boolean,
): Promise<void> {
  const transaction = await client.transaction("write");
  try {
    if (embedded) await transaction.execute("PRAGMA secure_delete = ON");
    await transaction.execute({
      sql: "DELETE FROM secrets WHERE name = ? AND value = ?",
      args: [SIGNING_KEY_SECRET, seed],
    });
    await transaction.commit();
  } finally {
    transaction.close();
  }
}

/**
 * Rewrites the database file (https://sqlite.org/lang_vacuum.html), so no copy of deleted bytes
 * is left in its free pages; the caller checkpoints the WAL after it.
 */
export async function vacuum(client: Client): Promise<void> {
  await client.execute("VACUUM");
}
