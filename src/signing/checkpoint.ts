/**
 * Signed checkpoints: a Merkle tree head (RFC 6962 §2.1, see `merkle.ts`) over the
 * first `treeSize` submissions, signed by the Beacon's key, in the spirit of the signed tree head
 * of Certificate Transparency (RFC 6962 §3.5). A checkpoint commits to every submission it
 * covers: changing, removing or reordering any of them changes the root. The server signs them
 * itself (`src/tree_heads.ts`) and publishes the latest at `/beacon/0.1/tree-head`; `review
 * verify` signs one too when it is given `BEACON_SIGNING_KEY`.
 *
 * ## Signed bytes
 *
 * ```text
 * signed bytes = UTF-8( "beacon/0.1 checkpoint" LF || JCS({createdAt, rootHash, treeSize}) )
 * ```
 *
 * - `createdAt` (string): ISO 8601 UTC time of the checkpoint, as stored
 *   (`2025-06-01T12:00:03.123Z`);
 * - `rootHash` (string): the Merkle tree head, 64 lowercase hex digits (the 32 bytes of
 *   SHA-256);
 * - `treeSize` (integer): the number of leaves, `0 ≤ treeSize ≤ 2^53 − 1`;
 * - serialised with RFC 8785 (JCS): members in the order `createdAt`, `rootHash`, `treeSize`,
 *   no whitespace, the integer in plain decimal; prefixed by the 21 ASCII characters
 *   `beacon/0.1 checkpoint` and a line feed; encoded as UTF-8. The prefix keeps a checkpoint
 *   signature from ever being valid as a receipt signature and the reverse.
 *
 * Example: `beacon/0.1 checkpoint` LF
 * `{"createdAt":"2025-06-01T12:00:03.123Z","rootHash":"e3b0…b855","treeSize":0}`.
 *
 * The signature is Ed25519 (RFC 8032), unpadded base64url, as for receipts (`receipt.ts`).
 *
 * @module
 */
import { statementBytes } from "./statement.ts";
import { signBytes, verifyBytes } from "./ed25519.ts";
import type { SigningKey } from "./key.ts";

/** The domain separation prefix of signed checkpoint bytes. */
export const CHECKPOINT_CONTEXT = "beacon/0.1 checkpoint\n";

/** The signed members of a checkpoint. */
export interface CheckpointFields {
  /** Number of submissions (leaves) covered, in `seq` order from the first. */
  readonly treeSize: number;
  /** RFC 6962 Merkle tree head over them, 64 lowercase hex digits. */
  readonly rootHash: string;
  /** ISO 8601 UTC time the checkpoint was made. */
  readonly createdAt: string;
}

/** A checkpoint as recorded in the `checkpoints` table: the signed fields, signature and key. */
export interface CheckpointRow extends CheckpointFields {
  /** Order of appending (the table's `seq`). */
  readonly seq: number;
  /** Ed25519 signature over {@linkcode canonicalCheckpointBytes}, unpadded base64url. */
  readonly signature: string;
  /** The signer's raw public key, unpadded base64url. */
  readonly publicKey: string;
}

/**
 * A row of `checkpoints` (selected with `CHECKPOINT_COLUMNS`, src/store/log_rows.ts) as a
 * checkpoint.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { checkpointFromRow } from "./checkpoint.ts";
 *
 * const row = { seq: 1, tree_size: 0, root_hash: "r", created_at: "t", signature: "s", public_key: "k" };
 * assert.equal(checkpointFromRow(row).treeSize, 0);
 * ```
 */
export function checkpointFromRow(row: Record<string, unknown>): CheckpointRow {
  return {
    seq: Number(row.seq),
    treeSize: Number(row.tree_size),
    rootHash: String(row.root_hash),
    createdAt: String(row.created_at),
    signature: String(row.signature),
    publicKey: String(row.public_key),
  };
}

const ROOT_HASH = /^[0-9a-f]{64}$/;

/**
 * The exact bytes signed for a checkpoint (see the module documentation).
 *
 * @param checkpoint Tree size, root hash and time.
 * @returns The signed bytes.
 * @throws {TypeError} When `treeSize` is not a non-negative safe integer, `rootHash` is not 64
 *   lowercase hex digits, or `createdAt` is not a string.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { canonicalCheckpointBytes } from "./checkpoint.ts";
 *
 * const text = new TextDecoder().decode(canonicalCheckpointBytes({
 *   treeSize: 0,
 *   rootHash: "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
 *   createdAt: "2025-06-01T12:00:03.123Z",
 * }));
 * assert.equal(
 *   text,
 *   'beacon/0.1 checkpoint\n{"createdAt":"2025-06-01T12:00:03.123Z",' +
 *     '"rootHash":"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855","treeSize":0}',
 * );
 * ```
 */
export function canonicalCheckpointBytes(checkpoint: CheckpointFields): Uint8Array<ArrayBuffer> {
  if (!Number.isSafeInteger(checkpoint.treeSize) || checkpoint.treeSize < 0) {
    throw new TypeError("Cannot sign checkpoint: treeSize must be a non-negative integer");
  }
  if (typeof checkpoint.rootHash !== "string" || !ROOT_HASH.test(checkpoint.rootHash)) {
    throw new TypeError("Cannot sign checkpoint: rootHash must be 64 lowercase hex digits");
  }
  if (typeof checkpoint.createdAt !== "string") {
    throw new TypeError("Cannot sign checkpoint: createdAt must be a string");
  }
  const signed = {
    createdAt: checkpoint.createdAt,
    rootHash: checkpoint.rootHash,
    treeSize: checkpoint.treeSize,
  };
  return statementBytes(CHECKPOINT_CONTEXT, signed);
}

/**
 * Signs a checkpoint with the Beacon's key.
 *
 * @param key The Beacon's signing key.
 * @param checkpoint Tree size, root hash and time.
 * @returns The Ed25519 signature, unpadded base64url.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { signingKeyFromSeed } from "./key.ts";
 * import { signCheckpoint, verifyCheckpoint } from "./checkpoint.ts";
 *
 * const key = await signingKeyFromSeed(new Uint8Array(32));
 * const head = {
 *   treeSize: 0,
 *   rootHash: "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
 *   createdAt: "2025-06-01T00:00:00.000Z",
 * };
 * assert.ok(await verifyCheckpoint(key.publicKey, head, await signCheckpoint(key, head)));
 * ```
 */
export async function signCheckpoint(
  key: Pick<SigningKey, "privateKey">,
  checkpoint: CheckpointFields,
): Promise<string> {
  return await signBytes(key.privateKey, canonicalCheckpointBytes(checkpoint));
}

/**
 * Verifies a checkpoint signature by a raw public key. Never throws.
 *
 * @param publicKey Raw 32-byte Ed25519 public key, unpadded base64url.
 * @param checkpoint Tree size, root hash and time as recorded.
 * @param signature The recorded signature, unpadded base64url.
 * @returns Whether that key signed exactly these members.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { verifyCheckpoint } from "./checkpoint.ts";
 *
 * const head = { treeSize: 0, rootHash: "0".repeat(64), createdAt: "" };
 * assert.ok(!await verifyCheckpoint("A".repeat(43), head, ""));
 * ```
 */
export async function verifyCheckpoint(
  publicKey: string,
  checkpoint: CheckpointFields,
  signature: string,
): Promise<boolean> {
  let bytes: Uint8Array<ArrayBuffer>;
  try {
    bytes = canonicalCheckpointBytes(checkpoint);
  } catch {
    return false;
  }
  return await verifyBytes(publicKey, bytes, signature);
}
