/**
 * The signing key's file: one line, the 43 base64url characters of the 32-byte Ed25519 seed
 * (the `BEACON_SIGNING_KEY` form, src/signing/key.ts), readable by its owner only (mode 0600).
 * An embedded database keeps its key in such a file beside it (`data/beacon.db` →
 * `data/beacon.key`), never in the database; `BEACON_SIGNING_KEY_FILE` names one for any database.
 * The review tool's key commands write and read the same files (review/commands/key.ts).
 *
 * A new file is made so that no reader ever sees half of it and no start ever signs with a key
 * that a crash could lose: the line is written to a temporary file created with mode 0600 and
 * `O_EXCL`, flushed (`fsync`), then hard-linked to its name, which fails if the name exists (so
 * two first starts racing on one database both end up with the first one's key, never two keys),
 * and the folder is flushed too, so the new name survives a power cut (POSIX `fsync`: a file's
 * directory entry is durable only once its folder is). Only then is anything signed with it.
 *
 * Through `node:fs/promises`, which Deno, Node and Bun all provide (Workers never run it).
 *
 * @module
 */
import { encodeSeed, generateSeed, parseSigningKey } from "../signing/mod.ts";
import { embeddedFilePath } from "../store/mod.ts";

/** The mode of a key file: read and write for its owner only. */
export const KEY_FILE_MODE = 0o600;

/**
 * The key file beside an embedded database: its path with `.db` replaced by `.key` (or `.key`
 * added), so two databases in one folder never share a key.
 *
 * @param databaseUrl A `file:` URL.
 * @returns The key file's path, relative when the database's is.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { keyFileBeside } from "./key_file.ts";
 *
 * assert.equal(keyFileBeside("file:data/beacon.db"), "data/beacon.key");
 * assert.equal(keyFileBeside("file:/srv/store"), "/srv/store.key");
 * ```
 */
export function keyFileBeside(databaseUrl: string): string {
  return embeddedFilePath(databaseUrl).replace(/\.db$/, "") + ".key";
}

/** Why a key file could not be read or made, in words; `path` is quoted, never the key. */
export class KeyFileError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "KeyFileError";
  }
}

function code(error: unknown): unknown {
  return (error as { code?: unknown })?.code;
}

/** The operating system's reason in fixed words (never the error's own text). */
function reason(error: unknown): string {
  switch (code(error)) {
    case "ENOENT":
      return "no such file or folder";
    case "EACCES":
    case "EPERM":
      return "permission denied";
    case "EROFS":
      return "read-only file system";
    case "ENOTDIR":
      return "a part of the path is not a folder";
    case "EISDIR":
      return "it is a folder";
  }
  return (error as Error)?.name === "NotCapable"
    ? "the runtime's permissions do not cover it"
    : `error ${String(code(error) ?? (error as Error)?.name ?? "unknown")}`;
}

/**
 * Reads a key file's seed. Refuses a file other users may read or write (as OpenSSH refuses a
 * private key file they can read: a copy of it signs receipts).
 *
 * @param path The key file.
 * @returns The seed, or undefined when there is no such file.
 * @throws {KeyFileError} When it cannot be read, is open to others, or does not hold a key.
 */
export async function readKeyFile(path: string): Promise<Uint8Array<ArrayBuffer> | undefined> {
  const { readFile, stat } = await import("node:fs/promises");
  let text: string;
  try {
    const mode = (await stat(path)).mode & 0o777;
    if ((mode & 0o077) !== 0) {
      throw new KeyFileError(
        `the key file ${JSON.stringify(path)} may be read or written by other users (mode ` +
          `0${mode.toString(8)}); make it its owner's only: chmod 600 ${JSON.stringify(path)}`,
      );
    }
    text = await readFile(path, "utf8");
  } catch (error) {
    if (error instanceof KeyFileError) throw error;
    if (code(error) === "ENOENT") return undefined;
    throw new KeyFileError(
      `the key file ${JSON.stringify(path)} cannot be read: ${reason(error)}`,
    );
  }
  try {
    return parseSigningKey(text, `the key file ${JSON.stringify(path)}`);
  } catch (error) {
    throw new KeyFileError((error as Error).message.replace(/^Cannot use /, ""));
  }
}

/** Flushes a folder, so the names just made in it survive a crash. */
async function syncFolder(folder: string): Promise<void> {
  const { open } = await import("node:fs/promises");
  const handle = await open(folder, "r");
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/**
 * Makes the key file `path` holding `seed` (a new one from the CSPRNG when not given), durably,
 * unless a file already has that name: then that file's key is returned and nothing is written.
 *
 * @param path Where the key file goes; its folder must exist.
 * @param seed The seed to keep (default: a new one).
 * @returns The seed now in the file, and whether this call created the file.
 * @throws {KeyFileError} When it cannot be made, or the file found there cannot be read.
 */
export async function createKeyFile(
  path: string,
  seed: Uint8Array = generateSeed(),
): Promise<{ seed: Uint8Array; created: boolean }> {
  const { link, open, unlink } = await import("node:fs/promises");
  const slash = path.lastIndexOf("/");
  const folder = slash < 0 ? "." : slash === 0 ? "/" : path.slice(0, slash);
  const suffix = Array.from(
    crypto.getRandomValues(new Uint8Array(8)),
    (byte) => byte.toString(16).padStart(2, "0"),
  ).join("");
  const temporary = `${path}.${suffix}.tmp`;
  let linked = false;
  try {
    const handle = await open(temporary, "wx", KEY_FILE_MODE);
    try {
      await handle.writeFile(`${encodeSeed(seed)}\n`);
      await handle.sync();
    } finally {
      await handle.close();
    }
    try {
      await link(temporary, path);
      linked = true;
    } catch (error) {
      if (code(error) !== "EEXIST") throw error;
    }
    await unlink(temporary);
    await syncFolder(folder);
  } catch (error) {
    await unlink(temporary).catch(() => {});
    throw new KeyFileError(
      `the key file ${JSON.stringify(path)} cannot be created: ${reason(error)}`,
    );
  }
  if (linked) return { seed, created: true };
  const found = await readKeyFile(path);
  if (found === undefined) {
    throw new KeyFileError(`the key file ${JSON.stringify(path)} vanished while it was made`);
  }
  return { seed: found, created: false };
}
