/**
 * The Beacon's Ed25519 signatures: its key (`key.ts`), signed receipts (`receipt.ts`), signed
 * checkpoints (`checkpoint.ts`) and redaction records (`redaction.ts`), the RFC 6962 Merkle tree
 * they commit to (`merkle.ts`), and the encodings digests and signatures travel in (`bytes.ts`).
 * This is also the public face the reviewer's package (`review/`) imports them through.
 *
 * @example Sign and verify a receipt
 * ```ts
 * import assert from "node:assert/strict";
 * import { Database } from "../store/database.ts";
 * import { loadSigningKey, signReceipt, verifyReceipt } from "./mod.ts";
 *
 * const database = await Database.open({ url: ":memory:" });
 * const key = await loadSigningKey(database, Date.now);
 * const receipt = {
 *   id: "AZR1t2x1q4Xv3T0x0kq8T5bJm3V6eA",
 *   receivedAt: "2025-06-01T12:00:03.123Z",
 *   digest: "sha256:" + "0".repeat(64),
 *   size: 16,
 *   kind: "unstructured",
 * };
 * assert.ok(await verifyReceipt(key.publicKey, receipt, await signReceipt(key, receipt)));
 * await database.close();
 * ```
 *
 * @module
 */
export {
  encodeSeed,
  generateSeed,
  loadSigningKey,
  type NewSigningKey,
  parseSigningKey,
  type SecretStore,
  SIGNING_KEY_SECRET,
  type SigningKey,
  signingKeyFromSeed,
  SigningKeyMissing,
} from "./key.ts";
export { keyFingerprint } from "./ed25519.ts";
export {
  followTrust,
  KeyHistory,
  type KeyRange,
  type PreviousKey,
  RangedIntakeSignatures,
  type SignedRow,
  type ValidRotations,
  validRotations,
} from "./key_history.ts";
export {
  canonicalRotationBytes,
  ROTATION_CONTEXT,
  type RotationFields,
  rotationFromRow,
  type RotationStatement,
  signRotation,
  verifyRotation,
} from "./rotation.ts";
export {
  type HeadReader,
  latestHeadKey,
  refuseKeyChange,
  refuseNewKeyForSignedStore,
  SigningKeyChanged,
  SigningKeyNotFound,
} from "./key_change.ts";
export {
  canonicalBatchBytes,
  canonicalReceiptBytes,
  RECEIPT_BATCH_CONTEXT,
  RECEIPT_CONTEXT,
  type ReceiptBatchProof,
  receiptBatchRoot,
  receiptLeafHash,
  type ReceiptSignature,
  receiptSignatureOf,
  type SignedReceiptFields,
  signReceipt,
  signReceipts,
  type StoredReceiptSignature,
  verifyReceipt,
} from "./receipt.ts";
export {
  canonicalCheckpointBytes,
  CHECKPOINT_CONTEXT,
  type CheckpointFields,
  checkpointFromRow,
  type CheckpointRow,
  signCheckpoint,
  verifyCheckpoint,
} from "./checkpoint.ts";
export {
  canonicalRedactionBytes,
  REDACTION_CONTEXT,
  type RedactionFields,
  signRedaction,
  verifyRedaction,
} from "./redaction.ts";
export {
  consistencyProof,
  IntakeSignatures,
  intakeSignaturesFrom,
  type LogRow,
  LogWalk,
  type RootRecord,
  type RowFinding,
  type SubtreeHash,
  verifyConsistency,
} from "./log_audit.ts";
export {
  type LeafFields,
  leafHash,
  MerkleAccumulator,
  rootFromPath,
  submissionLeafData,
  submissionLeafHash,
  treeRoot,
  treeWithPaths,
} from "./merkle.ts";
export {
  checkpointBody,
  checkpointNote,
  isNoteName,
  noteKeyId,
  noteVerifierKey,
  openCheckpointNote,
  signCheckpointNote,
  verifyNoteSignature,
} from "./note.ts";
export {
  entriesAt,
  inclusionProof,
  rangeHash,
  type Tile,
  TILE_WIDTH,
  TileLog,
  tilePath,
  verifyInclusion,
} from "./tiles.ts";
export {
  base64,
  base64url,
  fromBase64,
  fromBase64url,
  fromHex,
  hex,
  sha256,
  sha256Digest,
} from "../bytes.ts";
