/**
 * One batch as SQL statements on a `@libsql/client` client, the commit the remote and in-memory
 * kinds share.
 *
 * @module
 */
import type { Client } from "@libsql/client";
import { BEFORE_DEADLINE, insertBatch, insertSignaturesSql, type PendingRow } from "../rows.ts";

/**
 * The rows in one multi-row `INSERT … RETURNING` (`RETURNING` names the rows inserted), their
 * receipt signatures in a second statement of the same write transaction, each only where its
 * row now exists, and last the deadline guard ({@linkcode BEFORE_DEADLINE}): a Hrana batch, sent
 * as one pipeline request, that commits all of it before `deadline` by the database's clock or
 * nothing at all.
 */
export async function commitStatements(
  client: Client,
  rows: readonly PendingRow[],
  deadline: number,
): Promise<boolean[]> {
  const statements = [insertBatch(rows)];
  const signed = rows.filter((row) => row.signature !== undefined);
  if (signed.length > 0) {
    statements.push({
      sql: insertSignaturesSql(signed.length),
      args: signed.flatMap((row) => [...row.signature!, row.id]),
    });
  }
  if (Number.isFinite(deadline)) statements.push({ sql: BEFORE_DEADLINE, args: [deadline] });
  const [result] = await client.batch(statements, "write");
  const inserted = new Set(result.rows.map((row) => String(row[0])));
  return rows.map((row) => inserted.has(row.id));
}
