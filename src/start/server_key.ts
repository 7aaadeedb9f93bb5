/**
 * Where a server entry's signing key comes from (docs/keys.md), decided before the Beacon opens:
 *
 * - `BEACON_SIGNING_KEY`: the environment (a platform secret);
 * - `BEACON_SIGNING_KEY_FILE`: that file, read now; a start is refused when it is missing,
 *   unreadable, open to other users, or does not hold a key;
 * - an embedded database: the key file beside it (src/start/key_file.ts), read now when it
 *   exists, else made durably on the first open that finds no key of an earlier version in the
 *   database (so a store that kept its key in `secrets` keeps it until it is moved out);
 * - `:memory:`: a new key each start, kept in memory only;
 * - a remote database without either variable: refused once reached, unless it holds an earlier
 *   version's key (src/start/config.ts sets `newSigningKey: "refuse"`).
 *
 * @module
 */
import type { BeaconOptions } from "../types.ts";
import { DEFAULT_DATABASE_URL } from "../defaults.ts";
import { type ServerConfig, StartupError } from "./config.ts";
import { createKeyFile, keyFileBeside, KeyFileError, readKeyFile } from "./key_file.ts";

/** The key options for the Beacon, and where the key is, for the start's log line. */
export interface ServerKey {
  readonly options: Pick<BeaconOptions, "signingKey" | "newSigningKey">;
  /** Where the key is kept, in words: never the key. */
  readonly where: string;
  /** A key is given (environment, key file) rather than found in the database or made. */
  readonly configured: boolean;
  /** `:memory:`: a new key at each start, gone with the process. */
  readonly ephemeral: boolean;
}

/** A key file refusal as a start-up refusal: one line, exit 2. */
function refusal(error: unknown): never {
  if (error instanceof KeyFileError) throw new StartupError(`Cannot start: ${error.message}`);
  throw error;
}

/**
 * Resolves the server's key options from its configuration.
 *
 * @throws {StartupError} When the configured key file cannot be used.
 */
export async function serverSigningKey(config: ServerConfig): Promise<ServerKey> {
  const url = config.options.database?.url ?? DEFAULT_DATABASE_URL;
  if (config.options.signingKey !== undefined) {
    return { options: {}, where: "BEACON_SIGNING_KEY", configured: true, ephemeral: false };
  }
  if (config.signingKeyFile !== undefined) {
    const path = config.signingKeyFile;
    const seed = await readKeyFile(path).catch(refusal);
    if (seed === undefined) {
      throw new StartupError(
        `Cannot start: the key file ${JSON.stringify(path)} (BEACON_SIGNING_KEY_FILE) does not ` +
          "exist; make one with `deno task review key generate --out FILE` (docs/keys.md)",
      );
    }
    return {
      options: { signingKey: seed },
      where: `key file ${path} (BEACON_SIGNING_KEY_FILE)`,
      configured: true,
      ephemeral: false,
    };
  }
  if (url.startsWith("file:")) {
    const path = keyFileBeside(url);
    const seed = await readKeyFile(path).catch(refusal);
    const where = `key file ${path}`;
    if (seed !== undefined) {
      return { options: { signingKey: seed }, where, configured: true, ephemeral: false };
    }
    return {
      options: { newSigningKey: () => createKeyFile(path).catch(refusal) },
      where,
      configured: false,
      ephemeral: false,
    };
  }
  if (url === ":memory:") {
    return {
      options: {},
      where: "memory (a new key at each start)",
      configured: false,
      ephemeral: true,
    };
  }
  // A remote database: refused once reached unless it keeps an earlier version's key.
  return { options: {}, where: "BEACON_SIGNING_KEY", configured: false, ephemeral: false };
}
