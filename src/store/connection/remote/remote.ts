/**
 * The remote kind of {@linkcode Connection} (sqld or Turso, Hrana over HTTP): commits and reads
 * on droppable clients of their own (droppable_client.ts), each dropped for a fresh one when a
 * call on it passes its deadline, so one dark socket holds at most one call, and commits never
 * queue behind reads in the client.
 *
 * @module
 */
import type { DatabaseConfig } from "../../client.ts";
import { IndeterminateError } from "../../faults.ts";
import type { BatchSignature, PendingRow } from "../../rows.ts";
import { RemoteConnection } from "./droppable_client.ts";
import { commitStatements } from "./batch.ts";
import type { Connection } from "../connection.ts";

/** The connection of the remote database at `config.url`. */
export async function remoteConnection(config: DatabaseConfig): Promise<Connection> {
  const writer = await RemoteConnection.open(config);
  const reader = await RemoteConnection.open(config);
  return {
    read: async (sql, args) =>
      (await reader.client.execute({ sql, args })).rows as unknown as Record<string, unknown>[],
    commit: (rows, deadline, batch) => commitRemote(writer, rows, deadline, batch),
    abandonRead: () => reader.drop(),
    abandonCommit: () => writer.drop(),
    close: () => {
      writer.close();
      reader.close();
      return Promise.resolve();
    },
  };
}

/**
 * The batch ({@linkcode commitStatements}) on the writer's current client. A failure is reported
 * as {@linkcode IndeterminateError} unless it is known that nothing was applied: the request was
 * never sent, the connection was refused, or the server answered it with an error (the batch is
 * one transaction, so a refused one stored nothing). A 5xx may come from a gateway in front of
 * the database that did forward it, so it proves nothing.
 */
async function commitRemote(
  connection: RemoteConnection,
  rows: readonly PendingRow[],
  deadline: number,
  batch: BatchSignature | undefined,
): Promise<number[]> {
  const before = connection.lastSend;
  try {
    return await commitStatements(connection.client, rows, deadline, batch);
  } catch (error) {
    const sent = connection.lastSend;
    const nothingApplied = sent === before || sent.connectFailed ||
      (sent.status >= 400 && sent.status < 500);
    // A statement without an answer leaves its client behind: the next goes out on a fresh one,
    // with no pooled connection a runtime could resend on (droppable_client.ts).
    if (sent !== before && sent.status === 0) connection.drop();
    throw nothingApplied ? error : new IndeterminateError(error);
  }
}
