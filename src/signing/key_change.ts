/**
 * A key change is never silent. Heads of one key extend each other (protocol §6.5), so a start
 * under another key than the one that signed the store's latest tree head would sign nothing
 * over the old rows: their intake signatures do not verify under the new key, and the log stops
 * at size 0 for good, which looks like a database writer's doing. So a change that is not a
 * rotation (the previous key named in `BEACON_PREVIOUS_SIGNING_KEYS`, recorded in a signed
 * statement: src/transparency/key_rotation.ts) is refused, naming the previous key's fingerprint
 * and that setting (docs/keys.md, "When the key changes").
 *
 * Nor is a new key made for a store whose heads some key signed (its key file lost, or a backup
 * restored without it): that start is refused too, before anything is written.
 *
 * Only a head whose signature verifies under the key it names counts: a row a database writer
 * made up without any key is skipped, as the tree-head signer skips it (src/tree_heads.ts).
 *
 * @module
 */
import { fromBase64url } from "../bytes.ts";
import { checkpointFromRow, verifyCheckpoint } from "./checkpoint.ts";
import { keyFingerprint } from "./ed25519.ts";
import type { SigningKey } from "./key.ts";

/** How many of the newest heads are looked at for one that verifies. */
const NEWEST_HEADS = 16;

/** Reads the newest tree heads; the store's `LogRows` (src/store/log_rows.ts) fits. */
export interface HeadReader {
  /** Up to `limit` rows of `checkpoints`, newest first, as `checkpointFromRow` maps them. */
  newestHeads(limit: number): Promise<readonly Record<string, unknown>[]>;
}

/**
 * The refusal of a start whose key is not the one that signed the latest tree head. Its message
 * is the one line the server prints; fingerprints are public, so it may name them.
 */
export class SigningKeyChanged extends Error {
  /** Marks a refusal the server reports in one line and exits 2 for (src/start/serve.ts). */
  readonly refusesStart = true;
  /** `sha256:<hex>` of the key that signed the latest head. */
  readonly previousFingerprint: string;

  constructor(previousFingerprint: string, currentFingerprint: string, why?: string) {
    super(
      `Cannot start: the signing key changed: the latest tree head was signed by ` +
        `${previousFingerprint}, not by the configured key ${currentFingerprint}` +
        (why === undefined ? "" : ` (${why})`) + "; start with the previous key, or rotate: " +
        "name it (its public key, or its seed to co-sign the rotation) in " +
        "BEACON_PREVIOUS_SIGNING_KEYS (docs/keys.md)",
    );
    this.name = "SigningKeyChanged";
    this.previousFingerprint = previousFingerprint;
  }
}

/**
 * The refusal of a start that would make a new key for a store whose heads another key signed:
 * its key file was lost or not restored with it (a restored backup, a new machine). A new key
 * would only be refused next (a key change), and kept, so none is made.
 */
export class SigningKeyNotFound extends Error {
  /** Marks a refusal the server reports in one line and exits 2 for (src/start/serve.ts). */
  readonly refusesStart = true;
  /** `sha256:<hex>` of the key that signed the latest head. */
  readonly previousFingerprint: string;

  constructor(previousFingerprint: string) {
    super(
      `Cannot start: no signing key, but the store's latest tree head was signed by ` +
        `${previousFingerprint}; restore that key (its key file beside the database, or ` +
        "BEACON_SIGNING_KEY) from your backup; no new key was made (docs/keys.md)",
    );
    this.name = "SigningKeyNotFound";
    this.previousFingerprint = previousFingerprint;
  }
}

/**
 * The public key of the newest tree head whose signature verifies under the key it names, and
 * its fingerprint; undefined for a store without one.
 *
 * @param reader Reads the `checkpoints` table.
 */
export async function latestHeadKey(
  reader: HeadReader,
): Promise<{ publicKey: string; fingerprint: string } | undefined> {
  const rows = await reader.newestHeads(NEWEST_HEADS);
  for (const row of rows) {
    const head = checkpointFromRow(row);
    if (!await verifyCheckpoint(head.publicKey, head, head.signature).catch(() => false)) continue;
    const raw = fromBase64url(head.publicKey);
    if (raw === undefined) continue;
    return { publicKey: head.publicKey, fingerprint: await keyFingerprint(raw) };
  }
  return undefined;
}

/**
 * Throws {@linkcode SigningKeyChanged} when the newest tree head that verifies was signed by
 * another key than `key`. A store without heads (a new one) passes.
 *
 * @param reader Reads the `checkpoints` table.
 * @param key The key this start signs with.
 */
export async function refuseKeyChange(reader: HeadReader, key: SigningKey): Promise<void> {
  const previous = await latestHeadKey(reader);
  if (previous !== undefined && previous.publicKey !== key.publicKey) {
    throw new SigningKeyChanged(previous.fingerprint, key.fingerprint);
  }
}

/**
 * Throws {@linkcode SigningKeyNotFound} when the store has a tree head that verifies: called
 * before a new key is made, which such a store must never get silently.
 *
 * @param reader Reads the `checkpoints` table.
 */
export async function refuseNewKeyForSignedStore(reader: HeadReader): Promise<void> {
  const previous = await latestHeadKey(reader);
  if (previous !== undefined) throw new SigningKeyNotFound(previous.fingerprint);
}
