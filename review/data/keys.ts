/**
 * The review tool's keys: the one given on purpose with `BEACON_SIGNING_KEY`, the public half of
 * the key the server keeps (its key file, or the database of an earlier version), and the key a
 * stored receipt signature is checked against. `verify`, `show`, `next`, `triage`, `redact`,
 * `key` and the console all ask here, so every command finds a key the same way. Deleting a kept
 * key is a write: data/appends.ts `deleteKeptKey`.
 *
 * @module
 */
import { keyFileBeside, readKeyFile } from "../../src/start/key_file.ts";
import {
  fromBase64url,
  parseSigningKey,
  rotationFromRow,
  type RotationStatement,
  SIGNING_KEY_SECRET,
  type SigningKey,
  signingKeyFromSeed,
} from "../../src/signing/mod.ts";
import { ROTATION_COLUMNS } from "../../src/store/mod.ts";
import type { Client } from "@libsql/client";
import type { ReviewDatabase } from "./database.ts";
import { CliError, type Context } from "../io.ts";

/** The key given on purpose with `BEACON_SIGNING_KEY`, the only one the tool signs with. */
export async function configuredKey(context: Context): Promise<SigningKey | undefined> {
  const configured = context.env("BEACON_SIGNING_KEY");
  if (configured === undefined || configured === "") return undefined;
  try {
    return await signingKeyFromSeed(parseSigningKey(configured));
  } catch (error) {
    throw new CliError((error as Error).message);
  }
}

/**
 * The public half of the server's own key, found without any key in the environment: the key
 * file beside an embedded database (docs/keys.md), else a key an earlier version kept in the
 * database. Never creates one; a key file that cannot be used counts as none.
 */
export async function storedPublicKey(database: ReviewDatabase): Promise<string | undefined> {
  if (database.url.startsWith("file:")) {
    const seed = await readKeyFile(keyFileBeside(database.url)).catch(() => undefined);
    if (seed !== undefined) return (await signingKeyFromSeed(seed)).publicKey;
  }
  const seed = await keptSeed(database.client);
  if (seed === undefined || seed.byteLength !== 32) return undefined;
  return (await signingKeyFromSeed(seed)).publicKey;
}

/** The seed an earlier version kept in the database, or undefined (nothing is created). */
export async function keptSeed(client: Client): Promise<Uint8Array | undefined> {
  const tables = await client.execute(
    "SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'secrets'",
  );
  if (tables.rows.length === 0) return undefined;
  const rows = (await client.execute({
    sql: "SELECT value FROM secrets WHERE name = ?",
    args: [SIGNING_KEY_SECRET],
  })).rows as { value?: unknown }[];
  const value = rows[0]?.value;
  return value instanceof ArrayBuffer ? new Uint8Array(value) : undefined;
}

/**
 * The key a stored receipt signature is checked against: `--trust KEY` (the key the Beacon
 * publishes in its discovery document), else the public half of `BEACON_SIGNING_KEY` (used for
 * nothing else here: no review tool signs a receipt), else that of the key the server stored.
 *
 * @param context The environment.
 * @param database The open database.
 * @param trust The `--trust` value, if given.
 * @returns The raw Ed25519 public key, base64url, if known.
 */
export async function publishedKey(
  context: Context,
  database: ReviewDatabase,
  trust?: unknown,
): Promise<string | undefined> {
  if (typeof trust === "string") {
    if (fromBase64url(trust)?.length !== 32) {
      throw new CliError(
        "Cannot parse --trust: give a raw Ed25519 public key in base64url (43 characters)",
        2,
      );
    }
    return trust;
  }
  return (await configuredKey(context))?.publicKey ?? await storedPublicKey(database);
}

/**
 * The store's key rotation statements (schema version 14), oldest first, and the log's origin
 * they are signed under; none on a store older than either table.
 */
export async function storedRotations(
  database: ReviewDatabase,
): Promise<{ origin?: string; statements: RotationStatement[] }> {
  const tables = (await database.client.execute(
    "SELECT name FROM sqlite_master WHERE type = 'table' AND name IN ('key_rotations', 'log_names')",
  )).rows.map((row) => String(row.name));
  if (!tables.includes("key_rotations") || !tables.includes("log_names")) return { statements: [] };
  const origin = (await database.client.execute(
    "SELECT value FROM log_names WHERE name = 'origin'",
  )).rows[0]?.value;
  const statements = (await database.client.execute(
    `SELECT ${ROTATION_COLUMNS} FROM key_rotations ORDER BY seq`,
  )).rows.map((row) => rotationFromRow(row as unknown as Record<string, unknown>));
  return origin === undefined || origin === null
    ? { statements: [] }
    : { origin: String(origin), statements };
}
