/**
 * The start-up check of an embedded database file (issue 20): a remote database that is down may
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
import { describeDatabaseError } from "./database_error.ts";

/**
 * Creates the folder of a `file:` database and opens (creating if missing, never truncating) its
 * file for reading and writing, then closes it. Throws a {@linkcode StartupError} naming the path
 * and the reason when either fails. Other URLs are left alone.
 */
export async function checkDatabaseFile(url: string): Promise<void> {
  if (!url.startsWith("file:")) return;
  const path = embeddedFilePath(url);
  const { mkdir, open } = await import("node:fs/promises");
  try {
    const slash = path.lastIndexOf("/");
    if (slash > 0) await mkdir(path.slice(0, slash), { recursive: true });
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
