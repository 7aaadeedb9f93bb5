/**
 * Chooses and opens the libSQL client from the database URL. The module for each kind is imported
 * lazily, so a runtime without native modules (Workers, Deno Deploy) never loads the embedded one:
 *
 * - `file:` and `:memory:` — the embedded database (`@libsql/client`, native), one connection so
 *   the durability PRAGMAs below hold for every statement (version 0.18 pools several connections
 *   per file client otherwise, and `synchronous` is per connection);
 * - `libsql:`, `https:`, `http:`, `wss:`, `ws:` — Turso / `sqld` over the network
 *   (`@libsql/client/web`, fetch or WebSocket only).
 *
 * @module
 */
import type { Client } from "@libsql/client";
import { missingIndexProblem } from "./file_guard.ts";

/** Where the database is and how to authenticate. */
export interface DatabaseConfig {
  /** A libSQL URL: `file:data/beacon.db`, `:memory:`, `libsql://…`, `https://…`. */
  readonly url: string;
  /** The Turso / sqld token for remote URLs. */
  readonly authToken?: string;
  /**
   * Commit an embedded file database on a separate thread (a Web Worker) so fsyncs do not block
   * request handling. Ignored for remote and in-memory databases and where Workers are missing.
   */
  readonly writerThread?: boolean;
  /**
   * Remote URLs only: how many requests the client sends at once; more wait in its queue.
   * Default 20. The Workers entry lifts the bound: a queued request would be sent from the
   * request that freed the slot, and workerd cancels that work once that request has answered.
   */
  readonly concurrency?: number;
  /**
   * Deadline of every database call in milliseconds (default 10000): a call that has not
   * answered by then fails the request with `503 unavailable`, and nothing is acknowledged.
   */
  readonly timeoutMs?: number;
  /**
   * Embedded file databases only: the largest the write-ahead log grows before a commit copies it
   * back into the database file, in bytes (default {@linkcode DEFAULT_WAL_LIMIT_BYTES}, about
   * 80 MiB). After that copy the log file is cut back to this size too (`journal_size_limit`), so
   * on a small disk the log never takes more than about this much.
   */
  readonly walLimitBytes?: number;
}

/** The default {@linkcode DatabaseConfig.walLimitBytes}: 20,000 pages of 4 KiB. */
export const DEFAULT_WAL_LIMIT_BYTES = 20_000 * 4096;

/** Whether the URL names an embedded database (file or memory). */
export function isEmbedded(url: string): boolean {
  return url.startsWith("file:") || url === ":memory:";
}

/**
 * Durability per connection (SQLite "PRAGMA synchronous", WAL mode): with WAL and FULL, a
 * committed transaction survives power loss because the WAL is synced at every commit; NORMAL
 * would only survive an application crash.
 */
export const DURABILITY_PRAGMAS = [
  "PRAGMA journal_mode = WAL",
  "PRAGMA synchronous = FULL",
  "PRAGMA foreign_keys = ON",
] as const;

/**
 * Every embedded connection erases what it frees (https://sqlite.org/pragma.html#pragma_secure_delete):
 * when a B-tree page splits or rebalances, SQLite moves cells and, with this flag off, leaves
 * their old bytes in the page's free space. A redaction then erases the row but not those
 * copies, which a later checkpoint writes into the database file. The flag is per connection,
 * so the server's, the review tool's and the console's connections all set it; it costs a
 * zeroing of freed bytes, no extra I/O.
 */
export const ERASE_FREED_PRAGMA = "PRAGMA secure_delete = ON";

/**
 * The client's own connection (migrations, secrets, the shared rate limiter) may wait for a lock:
 * it is used at start and off the submission path. Submissions go through
 * `EmbeddedConnection`, which never blocks its thread on a lock.
 */
const EMBEDDED_PRAGMAS = [...DURABILITY_PRAGMAS, ERASE_FREED_PRAGMA, "PRAGMA busy_timeout = 5000"];

/**
 * Opens a client for `config.url`, creating the embedded database's folder if needed. Every
 * process but the server (`server: true`) refuses, with a one-line message, an embedded database
 * whose `-shm` index was removed under a running server ({@linkcode missingIndexProblem}): opening
 * it would build a second index and lose writes.
 */
export async function openClient(
  config: DatabaseConfig,
  options: { server?: boolean } = {},
): Promise<Client> {
  if (isEmbedded(config.url)) {
    if (config.url !== ":memory:") {
      await ensureFolder(config.url);
      const problem = options.server === true
        ? undefined
        : await missingIndexProblem(embeddedFilePath(config.url));
      if (problem !== undefined) throw new Error(problem);
    }
    const { createClient } = await import("@libsql/client");
    const client = createClient({ url: config.url, concurrency: 1, intMode: "number" });
    for (const pragma of EMBEDDED_PRAGMAS) await client.execute(pragma);
    return client;
  }
  const { createClient } = await import("@libsql/client/web");
  return createClient({
    url: config.url,
    authToken: config.authToken,
    intMode: "number",
    concurrency: config.concurrency,
  });
}

/**
 * The file path of a `file:` database URL, as the libSQL client reads it: without the query,
 * with `file:///abs` meaning `/abs`, percent-escapes decoded.
 */
export function embeddedFilePath(url: string): string {
  let path = url.slice("file:".length).split("?")[0];
  if (path.startsWith("//")) path = path.slice(2); // file:///abs/path
  return decodeURIComponent(path);
}

async function ensureFolder(url: string): Promise<void> {
  const path = embeddedFilePath(url);
  const slash = path.lastIndexOf("/");
  if (slash <= 0) return;
  // node:fs is available on every runtime that can load the embedded client (Deno, Bun, Node).
  const { mkdir, stat } = await import("node:fs/promises");
  const folder = path.slice(0, slash);
  // Only a missing folder is created: `mkdir` of an existing one still needs permission to write
  // the folder itself, which a reader need not have. Node 20's permission model, for one, denies
  // it when another granted path shares the folder's name as a prefix (an export file beside the
  // database), although it allows every file inside.
  if (await stat(folder).then((found) => found.isDirectory(), () => false)) return;
  await mkdir(folder, { recursive: true });
}
