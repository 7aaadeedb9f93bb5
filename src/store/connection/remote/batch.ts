/**
 * One batch as SQL statements on a `@libsql/client` client, the commit the remote and in-memory
 * kinds share.
 *
 * @module
 */
import type { Client, InStatement } from "@libsql/client";
import type { BatchSignature, PendingRow } from "../../rows.ts";
import {
  BEFORE_DEADLINE,
  INSERT_BATCH_AFTER_ROWS,
  INSERT_BATCH_JSON,
  insertBatchJson,
  INSERTED_ROWS,
} from "./sql.ts";

/**
 * The rows in one insert over a JSON array, then which it inserted ({@linkcode INSERTED_ROWS}: a
 * row not inserted gets 0, as `Connection.commit` in ../connection.ts says), the batch's
 * signature right after them in the same write transaction, for exactly the rows inserted
 * ({@linkcode INSERT_BATCH_AFTER_ROWS}), and last the deadline guard ({@linkcode BEFORE_DEADLINE}):
 * a Hrana batch, sent as one pipeline request, that commits all of it before `deadline` by the
 * database's clock or nothing at all.
 */
export async function commitStatements(
  client: Client,
  rows: readonly PendingRow[],
  deadline: number,
  batch?: BatchSignature,
): Promise<number[]> {
  const statements: InStatement[] = [
    { sql: INSERT_BATCH_JSON, args: [insertBatchJson(rows)] },
    { sql: INSERTED_ROWS, args: [rows.length] },
  ];
  if (batch !== undefined) {
    statements.push({ sql: INSERT_BATCH_AFTER_ROWS, args: [batch.leaves, batch.signature] });
  }
  if (Number.isFinite(deadline)) statements.push({ sql: BEFORE_DEADLINE, args: [deadline] });
  const [, { rows: [inserted] }] = await client.batch(statements, "write");
  const last = Number(inserted[0]);
  const count = Number(inserted[1]);
  if (count === rows.length) return rows.map((_, place) => last - count + 1 + place);
  const ids: string[] = JSON.parse(String(inserted[2]));
  const seqs = new Map(ids.map((id, place) => [id, last - count + 1 + place]));
  return rows.map((row) => seqs.get(row.id) ?? 0);
}
