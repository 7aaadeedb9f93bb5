/**
 * `review key generate|show|export|move-out`: the Beacon's signing key (docs/keys.md), the same
 * on Deno, Node and Bun.
 *
 * - `generate [--out FILE]`: a new 32-byte Ed25519 seed from the CSPRNG (RFC 8032 §5.1.5), into a
 *   new key file (mode 0600, made durably, never over an existing file: src/start/key_file.ts), or
 *   printed as the one line `BEACON_SIGNING_KEY` takes, for a platform's secret store.
 * - `show`: the public key (base64url, as the discovery document publishes it) and its
 *   fingerprint (`sha256:<hex>` of the raw public key, as for sender identities), never the
 *   private key.
 * - `export`: the private key as that one line, for a platform's secret store or a backup.
 * - `move-out`: moves a key an earlier version kept in the database's `secrets` table to a key
 *   file, then deletes it from the database and erases its bytes from the file and the WAL.
 *
 * `show` and `export` read the key from `--key-file FILE`, else `BEACON_SIGNING_KEY`, else the
 * key file beside an embedded database, else the database's `secrets` table, and say which.
 *
 * @module
 */
import {
  encodeSeed,
  parseSigningKey,
  type SigningKey,
  signingKeyFromSeed,
} from "../../src/signing/mod.ts";
import {
  createKeyFile,
  keyFileBeside,
  KeyFileError,
  readKeyFile,
} from "../../src/start/key_file.ts";
import { embeddedFilePath, isEmbedded } from "../../src/store/mod.ts";
import { checkpointWal, deleteKeptKey, fileHolds, vacuum } from "../data/appends.ts";
import { databaseConfig, openForAppending, openForReading } from "../data/database.ts";
import { keptSeed } from "../data/keys.ts";
import { CliError, type Context } from "../io.ts";
import type { OptionValues } from "./options.ts";

/** The options of `key`. */
export const KEY_OPTIONS = {
  out: { type: "string" },
  "key-file": { type: "string" },
} as const;

/** The subcommands of `key`. */
export const KEY_ACTIONS = ["generate", "show", "export", "move-out"] as const;

/** A key and where it was found, in words. */
interface FoundKey {
  readonly seed: Uint8Array;
  readonly where: string;
}

function option(values: OptionValues, name: string): string | undefined {
  const value = values[name];
  if (value === "") throw new CliError(`Cannot run key: --${name} names no file`, 2);
  return typeof value === "string" ? value : undefined;
}

/** A key file's refusal as the tool's. */
function fileError(error: unknown): never {
  if (error instanceof KeyFileError) throw new CliError(`Cannot use the key: ${error.message}`);
  throw error;
}

/** The key `show` and `export` read, in the order the module documentation gives. */
async function findKey(context: Context, values: OptionValues): Promise<FoundKey> {
  const file = option(values, "key-file");
  if (file !== undefined) {
    const seed = await readKeyFile(file).catch(fileError);
    if (seed === undefined) throw new CliError(`Cannot read the key: ${file} does not exist`);
    return { seed, where: `key file ${file}` };
  }
  const configured = context.env("BEACON_SIGNING_KEY");
  if (configured !== undefined && configured !== "") {
    try {
      return { seed: parseSigningKey(configured), where: "BEACON_SIGNING_KEY" };
    } catch (error) {
      throw new CliError((error as Error).message);
    }
  }
  const config = databaseConfig(values.database as string | undefined, context.env);
  if (config.url.startsWith("file:")) {
    const beside = keyFileBeside(config.url);
    const seed = await readKeyFile(beside).catch(fileError);
    if (seed !== undefined) return { seed, where: `key file ${beside}` };
  }
  const database = await openForReading(config);
  try {
    const seed = await keptSeed(database.client);
    if (seed !== undefined) return { seed, where: "the database's secrets table" };
  } finally {
    await database.close();
  }
  throw new CliError(
    "Cannot find a signing key: no --key-file, no BEACON_SIGNING_KEY, no key file beside the " +
      "database and none kept in it",
  );
}

/** `public key …, fingerprint sha256:…`: what may be published. */
function publicHalf(key: SigningKey): string {
  return `public key ${key.publicKey}, fingerprint ${key.fingerprint}`;
}

async function generate(context: Context, values: OptionValues): Promise<number> {
  const out = option(values, "out");
  if (out === undefined) {
    const seed = crypto.getRandomValues(new Uint8Array(32));
    await context.stdout.line(encodeSeed(seed));
    await context.stderr.line(
      `${publicHalf(await signingKeyFromSeed(seed))}. The line on standard output is the ` +
        "private key: put it in BEACON_SIGNING_KEY (a platform secret), never in a file others " +
        "can read (docs/keys.md)",
    );
    return 0;
  }
  const made = await createKeyFile(out).catch(fileError);
  if (!made.created) {
    throw new CliError(`Cannot generate: ${out} exists, and a key file is never overwritten`);
  }
  await context.stdout.line(
    `wrote a new signing key to ${out} (mode 0600); ${
      publicHalf(
        await signingKeyFromSeed(made.seed),
      )
    }`,
  );
  return 0;
}

async function moveOut(context: Context, values: OptionValues): Promise<number> {
  const config = databaseConfig(values.database as string | undefined, context.env);
  const embedded = isEmbedded(config.url) && config.url !== ":memory:";
  const target = option(values, "key-file") ?? (embedded ? keyFileBeside(config.url) : undefined);
  if (target === undefined) {
    throw new CliError(
      "Cannot move the key out of a remote database without --key-file FILE: write it to a " +
        "file, then give the servers BEACON_SIGNING_KEY_FILE or BEACON_SIGNING_KEY",
      2,
    );
  }
  // Appending applies migration 13, the one that lets the kept key be deleted.
  const database = await openForAppending(config, context.now);
  let seed: Uint8Array | undefined;
  try {
    seed = await keptSeed(database.client);
    if (seed === undefined) {
      await context.stdout.line("nothing to move: the database keeps no signing key");
      return 0;
    }
    // The file first, durably: the key is deleted only once a copy is safe outside.
    const filed = await createKeyFile(target, seed).catch(fileError);
    if (!filed.created && encodeSeed(filed.seed) !== encodeSeed(seed)) {
      throw new CliError(
        `Cannot move the key out: ${target} holds another key; nothing was deleted (docs/keys.md)`,
      );
    }
    await deleteKeptKey(database.client, seed, embedded);
  } finally {
    await database.close();
  }
  await context.stdout.line(
    `moved the signing key to ${target} (mode 0600) and deleted it from the database; ` +
      publicHalf(await signingKeyFromSeed(seed)),
  );
  if (!embedded) {
    await context.stdout.line(
      "the database is remote: its freed pages are on the database server. Give every " +
        `server BEACON_SIGNING_KEY_FILE=${target} (or BEACON_SIGNING_KEY) before its next start`,
    );
    return 0;
  }
  return await reportErasure(context, config.url, seed);
}

/**
 * After the delete: the WAL checkpointed with TRUNCATE (the old page images leave the `-wal`
 * file), then the database file looked through for the seed, raw and as base64url; VACUUM
 * rewrites the file when a copy is left in free space from before (https://sqlite.org/lang_vacuum.html).
 */
async function reportErasure(context: Context, url: string, seed: Uint8Array): Promise<number> {
  const path = embeddedFilePath(url);
  const needles = [seed, new TextEncoder().encode(encodeSeed(seed))];
  const holds = async () => {
    for (const needle of needles) if (await fileHolds(path, needle)) return true;
    return false;
  };
  const database = await openForAppending({ url }, context.now);
  try {
    if (!await checkpointWal(database.client)) {
      await context.stdout.line(
        "the WAL checkpoint did not complete (another process has the database open): the old " +
          "bytes stay in the -wal file until it does; stop the server, whose close checkpoints " +
          "and removes it, then run move-out again to check",
      );
      return 1;
    }
    if (await holds()) {
      await vacuum(database.client);
      await checkpointWal(database.client);
    }
    if (await holds()) {
      await context.stdout.line(
        "a copy of the key remains in the database file: stop the server and run move-out again",
      );
      return 1;
    }
  } finally {
    await database.close();
  }
  await context.stdout.line("no copy of the private key is left in the database file or its WAL");
  return 0;
}

/**
 * Runs `key <action>`.
 *
 * @param context Outputs, environment, clock.
 * @param values Parsed options.
 * @param action One of {@linkcode KEY_ACTIONS}.
 * @returns The exit status.
 */
export async function keyCommand(
  context: Context,
  values: OptionValues,
  action: string,
): Promise<number> {
  switch (action) {
    case "generate":
      return await generate(context, values);
    case "show": {
      const found = await findKey(context, values);
      await context.stdout.line(
        `${publicHalf(await signingKeyFromSeed(found.seed))} (from ${found.where})`,
      );
      return 0;
    }
    case "export": {
      const found = await findKey(context, values);
      await context.stdout.line(encodeSeed(found.seed));
      await context.stderr.line(`the private signing key, from ${found.where}: keep it secret`);
      return 0;
    }
    case "move-out":
      return await moveOut(context, values);
  }
  throw new CliError(
    `Cannot run key: say what to do: ${KEY_ACTIONS.join(", ")} (not ${
      JSON.stringify(action.slice(0, 40))
    })`,
    2,
  );
}
