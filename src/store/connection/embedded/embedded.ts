/**
 * The embedded kind of {@linkcode Connection} (a `file:` database): reads and commits on a
 * checked connection (`EmbeddedConnection`, checked_connection.ts), and with
 * `DatabaseConfig.writerThread`, where the runtime has Workers, commits on the writer thread
 * instead (writer_thread.ts), the same checked commit on a connection of its own.
 * Loaded only for embedded URLs, so runtimes without native modules (Workers) never load it.
 *
 * @module
 */
import { type DatabaseConfig, embeddedFilePath } from "../../client.ts";
import { EmbeddedConnection } from "./checked_connection.ts";
import { WriterThread } from "./writer_thread.ts";
import type { Connection } from "../connection.ts";

/** The connection of the embedded database at `config.url`. */
export async function embeddedConnection(config: DatabaseConfig): Promise<Connection> {
  const connection = await EmbeddedConnection.open(config.url, {
    walLimitBytes: config.walLimitBytes,
  });
  let thread: WriterThread | undefined;
  try {
    if (config.writerThread === true && WriterThread.available()) {
      thread = await WriterThread.start(config.url, config.walLimitBytes);
    }
  } catch (error) {
    connection.close();
    throw error;
  }
  const file = fileOf(config.url);
  return {
    read: (sql, args) => connection.all(sql, args),
    commit: thread !== undefined
      ? (rows, _deadline, batch) => thread.commit(rows, batch)
      : (rows, _deadline, batch) => connection.commit(rows, batch),
    file,
    readFileOnDisk: file === undefined
      ? undefined
      : (sql) => EmbeddedConnection.readFile(file, sql),
    close: async () => {
      await thread?.close();
      connection.close();
    },
  };
}

/** The file a `file:` URL names, or undefined when it names an in-memory database. */
function fileOf(url: string): string | undefined {
  if (/(^|[?&])mode=memory(&|$)/.test(url)) return undefined;
  const path = embeddedFilePath(url);
  return path === "" || path === ":memory:" ? undefined : path;
}
