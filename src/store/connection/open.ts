/**
 * Picks the {@linkcode Connection} kind from the database URL (src/store/client.ts has the URL
 * rules). The embedded kind is imported only when it is the one: runtimes without native modules
 * (Workers, Deno Deploy) never load the native driver.
 *
 * @module
 */
import type { Client } from "@libsql/client";
import { type DatabaseConfig, isEmbedded } from "../client.ts";
import type { Connection } from "./connection.ts";
import { memoryConnection } from "./memory.ts";
import { remoteConnection } from "./remote/remote.ts";

/**
 * The connection for `config.url`; `client` is the general-purpose client already open on the
 * same database (the in-memory kind works through it; its opener closes it).
 */
export async function openConnection(config: DatabaseConfig, client: Client): Promise<Connection> {
  if (!isEmbedded(config.url)) return await remoteConnection(config);
  if (config.url === ":memory:") return memoryConnection(client);
  const { embeddedConnection } = await import("./embedded/embedded.ts");
  return await embeddedConnection(config);
}
