/**
 * The in-memory kind of {@linkcode Connection} (`:memory:`): reads and commits go through the
 * general-purpose client, because its database is private to that client's connection (nothing
 * else can hold its lock, and a second connection would see another, empty database). A commit
 * is the remote kind's one client batch (remote/batch.ts), on this client.
 *
 * @module
 */
import type { Client } from "@libsql/client";
import { commitStatements } from "./remote/batch.ts";
import type { Connection } from "./connection.ts";

/** The connection of a `:memory:` database, on `client`, which its opener closes. */
export function memoryConnection(client: Client): Connection {
  return {
    read: async (sql, args) =>
      (await client.execute({ sql, args })).rows as unknown as Record<string, unknown>[],
    commit: (rows, deadline, batch) => commitStatements(client, rows, deadline, batch),
    close: () => Promise.resolve(),
  };
}
