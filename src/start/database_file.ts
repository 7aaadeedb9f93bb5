/**
 * The start-up check of an embedded database file: a remote database that is down may
 * come up later, so the server listens and retries; a local file that cannot be created or opened
 * will not, so the start is refused at once, naming the path and the operating system's reason.
 *
 * It runs in the server process, with the server's own permissions (on Deno, write access to the
 * database folder only), through `node:fs`, which Deno, Bun and Node all provide.
 *
 * @module
 */
import { embeddedFilePath } from "../store/client.ts";
import { StartupError } from "./config.ts";
import { describeDatabaseError } from "../database_error.ts";

/**
 * Creates the folder of a `file:` database and opens (creating if missing, never truncating) its
 * file for reading and writing, then closes it. Throws a {@linkcode StartupError} naming the path
 * and the reason when either fails. Other URLs are left alone.
 */
export async function checkDatabaseFile(url: string): Promise<void> {
  if (!url.startsWith("file:")) return;
  const path = embeddedFilePath(url);
  const { open } = await import("node:fs/promises");
  try {
    const slash = path.lastIndexOf("/");
    if (slash > 0) await createFolder(path.slice(0, slash));
    const file = await open(path, "a+");
    await file.close();
  } catch (error) {
    throw new StartupError(
      `Cannot start: the database file ${
        JSON.stringify(path)
      } (BEACON_DATABASE_URL) cannot be opened or ` +
        `created: ${describeDatabaseError(error)}`,
    );
  }
}

function code(error: unknown): unknown {
  return (error as { code?: unknown })?.code;
}

/**
 * `mkdir -p`, one level at a time from the deepest. Not `mkdir(…, { recursive: true })`: on
 * Node 20 that never returns for a folder under `/proc` (it retries the parent for ever), which
 * is how `file:/proc/x/beacon.db` used to hang the start. An ancestor the runtime's own sandbox
 * does not let this process create (Deno grants write access to the database folder only) is
 * left to the runtime's recursive `mkdir`, which creates it under that folder's grant.
 */
async function createFolder(folder: string): Promise<void> {
  const { mkdir, stat } = await import("node:fs/promises");
  try {
    await mkdir(folder);
    return;
  } catch (error) {
    if (code(error) === "EEXIST") {
      if ((await stat(folder)).isDirectory()) return;
      throw Object.assign(new Error("not a directory"), { code: "ENOTDIR" });
    }
    if (code(error) !== "ENOENT") throw error;
  }
  const slash = folder.lastIndexOf("/");
  if (slash <= 0) throw Object.assign(new Error("no such directory"), { code: "ENOENT" });
  try {
    await createFolder(folder.slice(0, slash));
  } catch (error) {
    if ((error as Error)?.name !== "NotCapable") throw error;
    await mkdir(folder, { recursive: true });
    return;
  }
  await mkdir(folder).catch((error) => {
    if (code(error) !== "EEXIST") throw error;
  });
}
