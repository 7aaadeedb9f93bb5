/**
 * One commit batch as SQL statements, the commit the remote and in-memory kinds share: on a
 * `@libsql/client` client, or on a Hrana stream kept open across commits.
 *
 * @module
 */
import type { Client, InStatement } from "@libsql/client";
import * as hrana from "@libsql/hrana-client";
import type { BatchSignature, PendingRow } from "../../rows.ts";
import {
  BEFORE_DEADLINE,
  INSERT_BATCH_AFTER_ROWS,
  INSERT_BATCH_JSON,
  insertBatchJson,
  INSERTED_ROWS,
} from "./sql.ts";

/** One statement of the batch and its positional arguments. */
interface Statement {
  readonly sql: string;
  readonly args: (string | number | Uint8Array)[];
}

/**
 * The rows in one insert over a JSON array, then which it inserted ({@linkcode INSERTED_ROWS}: a
 * row not inserted gets 0, as `Connection.commit` in ../connection.ts says), the batch's
 * signature right after them in the same write transaction, for exactly the rows inserted
 * ({@linkcode INSERT_BATCH_AFTER_ROWS}), and last the deadline guard ({@linkcode BEFORE_DEADLINE}):
 * a Hrana batch, sent as one pipeline request, that commits all of it before `deadline` by the
 * database's clock or nothing at all.
 */
function commitBatch(
  rows: readonly PendingRow[],
  deadline: number,
  batch?: BatchSignature,
): Statement[] {
  const statements: Statement[] = [
    { sql: INSERT_BATCH_JSON, args: [insertBatchJson(rows)] },
    { sql: INSERTED_ROWS, args: [rows.length] },
  ];
  if (batch !== undefined) {
    statements.push({ sql: INSERT_BATCH_AFTER_ROWS, args: [batch.leaves, batch.signature] });
  }
  if (Number.isFinite(deadline)) statements.push({ sql: BEFORE_DEADLINE, args: [deadline] });
  return statements;
}

/** Each row's `seq` (0: not inserted) from the one row of {@linkcode INSERTED_ROWS}. */
function insertedSeqs(rows: readonly PendingRow[], inserted: ArrayLike<unknown>): number[] {
  const last = Number(inserted[0]);
  const count = Number(inserted[1]);
  if (count === rows.length) return rows.map((_, place) => last - count + 1 + place);
  const ids: string[] = JSON.parse(String(inserted[2]));
  const seqs = new Map(ids.map((id, place) => [id, last - count + 1 + place]));
  return rows.map((row) => seqs.get(row.id) ?? 0);
}

/** The commit batch ({@linkcode commitBatch}) as one `@libsql/client` write batch. */
export async function commitStatements(
  client: Client,
  rows: readonly PendingRow[],
  deadline: number,
  batch?: BatchSignature,
): Promise<number[]> {
  const statements: InStatement[] = commitBatch(rows, deadline, batch);
  const results = await client.batch(statements, "write");
  return insertedSeqs(rows, results[1].rows[0]);
}

/**
 * The commit batch ({@linkcode commitBatch}) on a Hrana stream kept open across commits:
 * `BEGIN IMMEDIATE`, each statement only if the one before it succeeded, `COMMIT` likewise, and
 * `ROLLBACK` unless the commit succeeded, in one pipeline request, as `@libsql/client` builds a
 * write batch on the Hrana version it speaks over HTTP. sqld gives each stream a SQLite connection
 * of its own, so a stream kept open spares it opening one, and parsing the whole schema, for every
 * commit (bench/README.md, "The signed log beside the floor with heads").
 */
export async function commitOnStream(
  stream: hrana.Stream,
  rows: readonly PendingRow[],
  deadline: number,
  batch?: BatchSignature,
): Promise<number[]> {
  const steps = stream.batch(false);
  const after = (previous: hrana.BatchStep) => steps.step().condition(hrana.BatchCond.ok(previous));
  const begin = steps.step();
  const begun = begin.run("BEGIN IMMEDIATE");
  let last = begin;
  const answers = commitBatch(rows, deadline, batch).map(({ sql, args }) => {
    last = after(last);
    return last.query(new hrana.Stmt(sql).bindIndexes(args));
  });
  const commit = after(last);
  const committed = commit.run("COMMIT");
  steps.step().condition(hrana.BatchCond.not(hrana.BatchCond.ok(commit))).run("ROLLBACK")
    .catch(() => undefined);
  await steps.execute();
  await begun;
  const [, inserted] = await Promise.all(answers);
  if (inserted === undefined || await committed === undefined) {
    throw new Error("The commit batch was not executed");
  }
  return insertedSeqs(rows, inserted.rows[0]);
}
