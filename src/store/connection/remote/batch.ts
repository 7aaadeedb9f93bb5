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
} from "./sql.ts";

/**
 * The rows in one `INSERT … RETURNING` over a JSON array (`RETURNING` names the rows inserted and
 * their `seq`s; a row not named gets 0, as `Connection.commit` in ../connection.ts says), the
 * batch's signature right after it in the same write transaction, for exactly the rows it
 * inserted ({@linkcode INSERT_BATCH_AFTER_ROWS}), and last the deadline guard
 * ({@linkcode BEFORE_DEADLINE}): a Hrana batch, sent as one pipeline request, that commits all of
 * it before `deadline` by the database's clock or nothing at all.
 */
export async function commitStatements(
  client: Client,
  rows: readonly PendingRow[],
  deadline: number,
  batch?: BatchSignature,
): Promise<number[]> {
  const statements: InStatement[] = [{ sql: INSERT_BATCH_JSON, args: [insertBatchJson(rows)] }];
  if (batch !== undefined) {
    statements.push({ sql: INSERT_BATCH_AFTER_ROWS, args: [batch.leaves, batch.signature] });
  }
  if (Number.isFinite(deadline)) statements.push({ sql: BEFORE_DEADLINE, args: [deadline] });
  const [result] = await client.batch(statements, "write");
  const seqs = new Map(result.rows.map((row) => [String(row[0]), Number(row[1])]));
  return rows.map((row) => seqs.get(row.id) ?? 0);
}
