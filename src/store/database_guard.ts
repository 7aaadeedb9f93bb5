/**
 * The file guard of an embedded database as the Beacon uses it (src/store/file_guard.ts): which
 * URLs name a file worth guarding, and how a change is reported.
 *
 * @module
 */
import { type DatabaseConfig, embeddedFilePath, isEmbedded } from "./client.ts";
import {
  type FileChange,
  type FileGuard,
  guardDatabaseFile,
  type IdentityStamp,
} from "./file_guard.ts";

/** Why the Beacon stopped acknowledging, as the error name its `onError` hook receives. */
const FILE_CHANGE_ERRORS: Readonly<Record<FileChange, string>> = {
  database_removed: "DatabaseFileRemoved",
  database_replaced: "DatabaseFileReplaced",
  database_overwritten: "DatabaseFileOverwritten",
  wal_removed: "DatabaseWalRemoved",
  wal_replaced: "DatabaseWalReplaced",
  shm_removed: "DatabaseShmRemoved",
  shm_replaced: "DatabaseShmReplaced",
};

/**
 * Guards an embedded database file (src/store/file_guard.ts); reports the change once, through
 * `onError`, with an error whose name says what happened (the message is fixed text).
 */
export async function guardFile(
  database: DatabaseConfig,
  onError: ((error: unknown) => void) | undefined,
  identity: IdentityStamp | undefined,
): Promise<FileGuard | undefined> {
  if (!isEmbedded(database.url) || /(^|[?&])mode=memory(&|$)/.test(database.url)) return;
  const path = embeddedFilePath(database.url);
  if (path === "" || path === ":memory:") return;
  try {
    return await guardDatabaseFile(path, {
      identity,
      onChange(change) {
        const error = new Error(
          "The database file changed under the running Beacon; it answers 503 until restarted",
        );
        error.name = FILE_CHANGE_ERRORS[change];
        onError?.(error);
      },
    });
  } catch (error) {
    onError?.(error); // no permission to stat the file: run unguarded rather than not at all
    return undefined;
  }
}
