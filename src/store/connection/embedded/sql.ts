/**
 * The statements of the embedded kind's commit (checked_connection.ts): each row inserted on its
 * own prepared statement, reused across commits, then the batch's signature by the `seq`s the
 * inserts returned.
 *
 * @module
 */
import { INSERT_COLUMNS, type PendingRow } from "../../rows.ts";

const PLACEHOLDERS = "?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?";
/** {@linkcode PLACEHOLDERS} numbered, for a statement that refers to the values again. */
const NUMBERED_PLACEHOLDERS = Array.from({ length: 14 }, (_, i) => `?${i + 1}`).join(", ");

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
 * start. The key check there is `KEY_USED_SEQS` (src/store/rows.ts) with numbered parameters that name the
 * row's own hash (14), source hash (10) and key (13), so each value is bound once: the driver
 * converts every bound string on every insert, and the key and source hash are the longest of
 * them.
 */
export function keyedInsertArgs(row: PendingRow): (string | number | null | Uint8Array)[] {
  return [...row.values, row.keySince![3]];
}

/**
 * Stores a batch's signature (`BatchSignature`, src/store/rows.ts) in the transaction that inserted its
 * rows, `first_seq` to `last_seq`. Never `OR REPLACE` (see src/store/migrations.ts).
 */
export const INSERT_BATCH =
  "INSERT INTO receipt_batches (first_seq, last_seq, leaves, signature) VALUES (?, ?, ?, ?)";
