/**
 * The statements of the remote kind's commit (batch.ts, which the in-memory kind shares): the
 * whole batch as one insert over a JSON array, the batch's signature for the rows it inserted,
 * and the deadline guard, sent as one Hrana batch.
 *
 * @module
 */
import { hex } from "../../../bytes.ts";
import { INSERT_COLUMNS, type PendingRow } from "../../rows.ts";

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
 * The key check is `KEY_USED_SEQS` (src/store/rows.ts) on the element's own members. Rows are
 * inserted in array order, so they get consecutive `seq`s in batch order;
 * {@linkcode INSERTED_ROWS} says which.
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
  ORDER BY r.key`;

/**
 * What the insert just before it ({@linkcode INSERT_BATCH_JSON}) stored, as one row: the last
 * `seq` and how many rows, and only when the key check skipped some (fewer than the parameter),
 * the ids inserted, in `seq` order. One row of two integers, not a `RETURNING` row per
 * submission: each row of a Hrana result is JSON the client parses and turns into an object,
 * the cost `bench/readback_bench.ts` prices (bench/README.md "Figures behind constants"). The
 * numbers are SQLite's `last_insert_rowid()` and `changes()`, which a `SELECT` does not change and
 * which count no trigger's rows (sqlite.org/lang_corefunc.html); the rows of one statement get
 * consecutive `seq`s in array order.
 */
export const INSERTED_ROWS = `SELECT last_insert_rowid() AS last, changes() AS inserted,
  CASE WHEN changes() < ? THEN (SELECT json_group_array(id) FROM (SELECT id FROM submissions
    WHERE seq BETWEEN last_insert_rowid() - changes() + 1 AND last_insert_rowid() ORDER BY seq))
  END AS ids`;

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

/**
 * The embedded kind's `INSERT_BATCH` (../embedded/sql.ts) for the rows the statement just before it inserted (one multi-row
 * insert, {@linkcode INSERT_BATCH_JSON}), without knowing their `seq`s: SQLite numbers the rows of
 * one statement consecutively, `last_insert_rowid()` is the last one's and `changes()` counts
 * them (neither counts rows written by triggers: sqlite.org/lang_corefunc.html#changes). When the
 * key check skipped every row, nothing was acknowledged and no batch row is stored.
 */
export const INSERT_BATCH_AFTER_ROWS =
  "INSERT INTO receipt_batches (first_seq, last_seq, leaves, signature) " +
  "SELECT last_insert_rowid() - changes() + 1, last_insert_rowid(), ?, ? WHERE changes() > 0";
