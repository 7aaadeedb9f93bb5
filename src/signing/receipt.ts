/**
 * Signed receipts: the Beacon signs what it acknowledged, so a submitter can later prove,
 * offline and to anyone, that the Beacon stored these exact bytes at this time.
 *
 * ## Signed bytes
 *
 * ```text
 * signed bytes = UTF-8( "beacon/0.1 receipt" LF || JCS({digest, id, kind, receivedAt, size}) )
 * ```
 *
 * 1. Take exactly five members of the receipt, and no others (not `surface`, `status`,
 *    `identity` or anything added later):
 *    - `id` (string): the receipt id;
 *    - `receivedAt` (string): the ISO 8601 UTC time exactly as sent, e.g.
 *      `2025-06-01T12:00:03.123Z`;
 *    - `digest` (string): `sha256:` and 64 lowercase hex digits of the stored bytes;
 *    - `size` (integer): the number of stored bytes, `0 ≤ size ≤ 2^53 − 1`;
 *    - `kind` (string): `structured` or `unstructured`.
 * 2. Serialise that object with the JSON Canonicalization Scheme, RFC 8785 (JCS): members in
 *    the order `digest`, `id`, `kind`, `receivedAt`, `size` (sorted by UTF-16 code units,
 *    §3.2.3), no whitespace (§3.2.1), strings as ECMAScript `JSON.stringify` writes them
 *    (§3.2.2.2), the integer in plain decimal without exponent, sign or leading zeros
 *    (§3.2.2.3).
 * 3. Prefix the 18 ASCII characters `beacon/0.1 receipt` and one line feed (U+000A), and encode
 *    everything as UTF-8. The prefix separates domains: these bytes can never equal a signed
 *    checkpoint (`beacon/0.1 checkpoint`), a signed message (`beacon/0.1 message`) or any bare
 *    JSON document signed by the same key.
 *
 * Example: the receipt `{"id":"AZR1t2x1q4Xv3T0x0kq8T5bJm3V6eA","receivedAt":"2025-06-01T12:00:03.123Z",
 * "surface":"native","kind":"unstructured","size":16,"digest":"sha256:<64 hex>"}` is signed as
 *
 * ```text
 * beacon/0.1 receipt
 * {"digest":"sha256:<64 hex>","id":"AZR1t2x1q4Xv3T0x0kq8T5bJm3V6eA","kind":"unstructured","receivedAt":"2025-06-01T12:00:03.123Z","size":16}
 * ```
 *
 * with no line feed after the closing brace.
 *
 * ## Signature
 *
 * Ed25519 (RFC 8032 §5.1.6, "pure", no pre-hash, no context) by the Beacon's key
 * (`key.ts`), as 64 bytes in unpadded base64url (RFC 4648 §5, 86 characters). The public key is
 * the raw 32 bytes in unpadded base64url (43 characters), published in the discovery document.
 * A verifier needs nothing else: rebuild the bytes above from the receipt, decode key and
 * signature, and call `crypto.subtle.verify("Ed25519", key, signature, bytes)`.
 *
 * ## Batch signatures
 *
 * Under load, the receipts committed together are signed together, with one Ed25519 signature
 * over the Merkle tree head of the batch, in the manner of Certificate Transparency's signed tree
 * heads (RFC 6962 §3.5): one signature costs as much as a whole submission's other work, and a
 * batch of n receipts needs one instead of n. Such a receipt carries `batch`, its inclusion
 * proof:
 *
 * ```text
 * leaf        = SHA-256( 0x00 || the signed bytes above )                 (RFC 6962 §2.1)
 * root        = the Merkle tree hash of the batch's leaves, in batch order (RFC 6962 §2.1)
 * signed bytes = UTF-8( "beacon/0.1 receipt batch" LF || JCS({"root": base64url(root), "size": n}) )
 * batch       = { "size": n, "index": i, "path": [base64url(hash), …] }   (RFC 6962 §2.1.1)
 * ```
 *
 * A verifier recomputes the leaf from the receipt, folds the path into the root
 * (RFC 9162 §2.1.3.2), and verifies `signature` over the batch bytes; WebCrypto's SHA-256 and
 * Ed25519 are all it needs. A receipt without `batch` is in the single form above: a batch of one
 * is always sent that way, and verifiers must keep accepting it.
 *
 * What a valid signature proves: the holder of the Beacon's key acknowledged storing content
 * with this digest and size under this id at this time. It says nothing about what the content
 * means, who sent it, or whether anyone has read it.
 *
 * @module
 */
import { base64url, fromBase64url, sameBytes } from "../bytes.ts";
import { canonicalString } from "../json/canonical.ts";
import { statementBytes } from "./statement.ts";
import { signBytes, verifyBytes } from "./ed25519.ts";
import type { SigningKey } from "./key.ts";
import { leafHash, rootFromPath, treeWithPaths } from "./merkle.ts";

/** The domain separation prefix of signed receipt bytes. */
export const RECEIPT_CONTEXT = "beacon/0.1 receipt\n";
/** The domain separation prefix of a signed batch of receipts. */
export const RECEIPT_BATCH_CONTEXT = "beacon/0.1 receipt batch\n";

/** Where a receipt sits in the batch its signature covers (an RFC 6962 inclusion proof). */
export interface ReceiptBatchProof {
  /** Receipts in the batch. */
  readonly size: number;
  /** This receipt's position in it, from 0. */
  readonly index: number;
  /** The audit path from this receipt's leaf to the root: SHA-256 hashes, base64url. */
  readonly path: readonly string[];
}

/** A receipt's signature and, for a batch signature, the receipt's inclusion proof. */
export interface ReceiptSignature {
  /** Ed25519, unpadded base64url: over the receipt, or over its batch's root with `batch`. */
  readonly signature: string;
  readonly batch?: ReceiptBatchProof;
}

/** The receipt members covered by the signature; a full receipt object fits. */
export interface SignedReceiptFields {
  /** The receipt id. */
  readonly id: string;
  /** ISO 8601 UTC time of receipt, exactly as sent. */
  readonly receivedAt: string;
  /** `sha256:<hex>` of the stored bytes. */
  readonly digest: string;
  /** Number of stored bytes. */
  readonly size: number;
  /** `structured` or `unstructured`. */
  readonly kind: string;
}

/**
 * The exact bytes signed for a receipt (see the module documentation): `beacon/0.1 receipt`,
 * a line feed, and the RFC 8785 form of the five signed members.
 *
 * @param receipt The receipt; members other than the five are ignored.
 * @returns The signed bytes.
 * @throws {TypeError} When a member is missing or of the wrong type, `size` is not a
 *   non-negative safe integer, or a string holds an unpaired surrogate.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { canonicalReceiptBytes } from "./receipt.ts";
 *
 * const bytes = canonicalReceiptBytes({
 *   id: "AZR1t2x1q4Xv3T0x0kq8T5bJm3V6eA",
 *   receivedAt: "2025-06-01T12:00:03.123Z",
 *   digest: "sha256:" + "0".repeat(64),
 *   size: 16,
 *   kind: "unstructured",
 * });
 * assert.equal(new TextDecoder().decode(bytes).split("\n")[0], "beacon/0.1 receipt");
 * ```
 */
export function canonicalReceiptBytes(receipt: SignedReceiptFields): Uint8Array<ArrayBuffer> {
  return encoder.encode(canonicalReceiptText(receipt));
}

/**
 * A receipt's leaf in its batch's tree (RFC 6962 §2.1: SHA-256 of 0x00 and its signed bytes),
 * hashed from {@linkcode canonicalReceiptBytes}'s text without the bytes as an array of their own.
 *
 * @throws {TypeError} As {@linkcode canonicalReceiptBytes}.
 */
export function receiptLeafHash(receipt: SignedReceiptFields): Uint8Array<ArrayBuffer> {
  return leafHash(canonicalReceiptText(receipt));
}

/** {@linkcode canonicalReceiptBytes} before UTF-8. */
function canonicalReceiptText(receipt: SignedReceiptFields): string {
  for (const name of ["id", "receivedAt", "digest", "kind"] as const) {
    if (typeof receipt[name] !== "string") {
      throw new TypeError(`Cannot sign receipt: ${name} must be a string`);
    }
  }
  // Integers only: JCS would serialise 1.5 or 1e21 faithfully, but a byte count is an integer
  // and accepting anything else would give one receipt several plausible spellings.
  if (!Number.isSafeInteger(receipt.size) || receipt.size < 0) {
    throw new TypeError("Cannot sign receipt: size must be a non-negative integer");
  }
  // The RFC 8785 form written out: five members of known names and types, so their order is
  // fixed (§3.2.3) and each string is what `JSON.stringify` writes (§3.2.2.2), as `canonicalJson`
  // would produce it, without an object to sort per receipt (every batch hashes one per row).
  // tests/signing/receipt_test.ts checks it against `canonicalJson` and an independent JCS library.
  return RECEIPT_CONTEXT + '{"digest":' + canonicalString(receipt.digest) + ',"id":' +
    canonicalString(receipt.id) +
    ',"kind":' + canonicalString(receipt.kind) + ',"receivedAt":' +
    canonicalString(receipt.receivedAt) +
    ',"size":' + String(receipt.size) + "}";
}

const encoder = new TextEncoder();

/**
 * Signs a receipt with the Beacon's key.
 *
 * @param key The Beacon's signing key (`loadSigningKey`), or any object with an Ed25519
 *   `privateKey`.
 * @param receipt The receipt to sign.
 * @returns The Ed25519 signature, unpadded base64url (86 characters).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { signingKeyFromSeed } from "./key.ts";
 * import { signReceipt, verifyReceipt } from "./receipt.ts";
 *
 * const key = await signingKeyFromSeed(crypto.getRandomValues(new Uint8Array(32)));
 * const receipt = {
 *   id: "AZR1t2x1q4Xv3T0x0kq8T5bJm3V6eA",
 *   receivedAt: "2025-06-01T12:00:03.123Z",
 *   digest: "sha256:" + "0".repeat(64),
 *   size: 16,
 *   kind: "unstructured",
 * };
 * const signature = await signReceipt(key, receipt);
 * assert.ok(await verifyReceipt(key.publicKey, receipt, signature));
 * ```
 */
export async function signReceipt(
  key: Pick<SigningKey, "privateKey">,
  receipt: SignedReceiptFields,
): Promise<string> {
  return await signBytes(key.privateKey, canonicalReceiptBytes(receipt));
}

/** The exact bytes signed for a batch: its prefix, and the RFC 8785 form of root and size. */
export function canonicalBatchBytes(root: Uint8Array, size: number): Uint8Array<ArrayBuffer> {
  return statementBytes(RECEIPT_BATCH_CONTEXT, { root: base64url(root), size });
}

/**
 * Receipts signed together, as {@linkcode signReceipts} makes them: what each receipt carries,
 * and what the store keeps for the whole batch (schema version 11: the leaves and the one
 * signature, from which {@linkcode receiptSignatureInBatch} gives any receipt's proof again).
 */
export interface SignedBatch {
  /** One per receipt, in batch order: its signature and, in a batch of several, its proof. */
  readonly receipts: readonly ReceiptSignature[];
  /** The one signature: over the receipt itself for a batch of one, over the root otherwise. */
  readonly signature: string;
  /** The receipts' leaf hashes (RFC 6962 §2.1), 32 bytes each, in batch order. */
  readonly leaves: Uint8Array<ArrayBuffer>;
}

/**
 * Signs receipts committed together: one receipt alone in the single form, several with one
 * batch signature and an inclusion proof each (see the module documentation).
 *
 * @param key The Beacon's signing key.
 * @param receipts The receipts, in batch order (at least one).
 * @returns Each receipt's signature, in order, and the batch's leaves and signature.
 *
 * @example
 * ```ts
 * import { signingKeyFromSeed } from "./key.ts";
 * import { signReceipts, verifyReceipt } from "./receipt.ts";
 * const key = await signingKeyFromSeed(crypto.getRandomValues(new Uint8Array(32)));
 * const receipts = [1, 2, 3].map((size) => ({
 *   id: "AZR1t2x1q4Xv3T0x0kq8T5bJm3V6e" + size,
 *   receivedAt: "2025-06-01T12:00:03.123Z",
 *   digest: "sha256:" + "0".repeat(64),
 *   size,
 *   kind: "unstructured",
 * }));
 * const signed = await signReceipts(key, receipts);
 * const third = signed.receipts[2];
 * if (third.batch?.size !== 3) throw new Error("expected a batch of three");
 * if (!await verifyReceipt(key.publicKey, receipts[2], third.signature, third.batch)) {
 *   throw new Error("a batch receipt must verify");
 * }
 * ```
 */
export async function signReceipts(
  key: Pick<SigningKey, "privateKey">,
  receipts: readonly SignedReceiptFields[],
): Promise<SignedBatch> {
  if (receipts.length === 0) throw new RangeError("Cannot sign an empty batch of receipts");
  const leaves = new Uint8Array(32 * receipts.length);
  const hashes: Uint8Array[] = [];
  let single: Uint8Array<ArrayBuffer> | undefined;
  for (let i = 0; i < receipts.length; i++) {
    if (receipts.length === 1) single = canonicalReceiptBytes(receipts[i]);
    const leaf = single === undefined ? receiptLeafHash(receipts[i]) : leafHash(single);
    leaves.set(leaf, 32 * i);
    hashes.push(leaf);
  }
  if (single !== undefined) {
    const signature = await signBytes(key.privateKey, single);
    return { receipts: [{ signature }], signature, leaves };
  }
  const { root, paths } = treeWithPaths(hashes);
  const signature = await signBytes(key.privateKey, canonicalBatchBytes(root, hashes.length));
  return { receipts: proofsOf(signature, paths), signature, leaves };
}

/** Each receipt's signature with its proof; an interior hash in many paths is encoded once. */
function proofsOf(
  signature: string,
  paths: readonly (readonly Uint8Array[])[],
): ReceiptSignature[] {
  const encoded = new Map<Uint8Array, string>();
  const text = (hash: Uint8Array) => {
    let value = encoded.get(hash);
    if (value === undefined) encoded.set(hash, value = base64url(hash));
    return value;
  };
  return paths.map((path, index) => ({
    signature,
    batch: { size: paths.length, index, path: path.map(text) },
  }));
}

/**
 * A row's receipt signature as the store keeps it (src/store/rows.ts `StoredSignature`): in its
 * own row, as the receipt carried it; or as its batch's row, with the `seq`s of the batch's first
 * and last stored rows and of this row.
 */
export type StoredReceiptSignature =
  | { readonly form: "receipt"; readonly signature: string; readonly batch?: ReceiptBatchProof }
  | {
    readonly form: "batch";
    readonly signature: string;
    readonly leaves: Uint8Array;
    readonly firstSeq: number;
    readonly lastSeq: number;
    readonly seq: number;
  };

/**
 * The signature `receipt` carried, from its row's signature as the store keeps it. A per-receipt
 * signature is as stored. A batch's is rebuilt from its leaves for this receipt
 * ({@linkcode receiptSignatureInBatch}); when the receipt is not among them (its row changed
 * since it was signed), it comes back with no place in the batch, so that it verifies nowhere.
 *
 * @param receipt The five signed members as the row reads now.
 * @param stored The row's stored signature, if any.
 * @returns The receipt's signature, or undefined when nothing is stored. Never throws.
 */
export function receiptSignatureOf(
  receipt: SignedReceiptFields,
  stored: StoredReceiptSignature | undefined,
): ReceiptSignature | undefined {
  if (stored === undefined) return undefined;
  if (stored.form === "receipt") {
    return stored.batch === undefined
      ? { signature: stored.signature }
      : { signature: stored.signature, batch: stored.batch };
  }
  const offset = stored.seq - stored.firstSeq;
  const rows = stored.lastSeq - stored.firstSeq + 1;
  // Receipts turned away in the same commit have leaves and no rows: a row's place is at least
  // its offset among the rows, and at most that many places further.
  const found = receiptSignatureInBatch(
    receipt,
    stored,
    offset,
    offset + stored.leaves.length / 32 - rows,
  );
  return found ?? { signature: stored.signature, batch: { size: 0, index: -1, path: [] } };
}

/** The last batch whose proofs were rebuilt: the rows of one batch are read together. */
let rebuilt: { signature: string; leaves: Uint8Array; proofs: ReceiptSignature[] } | undefined;

/**
 * The signature a receipt carried, rebuilt from its batch as the store keeps it
 * ({@linkcode SignedBatch}: the leaves and the one signature). The receipt's place is where its
 * own leaf is, searched from `from` (its row's offset in the batch: receipts turned away in the
 * same commit have a leaf and no row, so a row's place is at or after it) to `to`.
 *
 * @returns The receipt's signature and proof, or undefined when its leaf is not there (a row
 *   changed since it was signed, or never signed in this batch). Never throws.
 */
export function receiptSignatureInBatch(
  receipt: SignedReceiptFields,
  batch: { readonly leaves: Uint8Array; readonly signature: string },
  from = 0,
  to = batch.leaves.length / 32 - 1,
): ReceiptSignature | undefined {
  const size = batch.leaves.length / 32;
  if (!Number.isInteger(size) || size < 1) return undefined;
  let leaf: Uint8Array;
  try {
    leaf = receiptLeafHash(receipt);
  } catch {
    return undefined;
  }
  let index = -1;
  for (let at = Math.max(0, from); at <= Math.min(to, size - 1) && index < 0; at++) {
    if (sameBytes(batch.leaves, 32 * at, leaf)) index = at;
  }
  if (index < 0) return undefined;
  if (size === 1) return { signature: batch.signature };
  if (
    rebuilt === undefined || rebuilt.signature !== batch.signature ||
    rebuilt.leaves.length !== batch.leaves.length || !sameBytes(rebuilt.leaves, 0, batch.leaves)
  ) {
    const hashes: Uint8Array[] = [];
    for (let at = 0; at < size; at++) hashes.push(batch.leaves.subarray(32 * at, 32 * at + 32));
    rebuilt = {
      signature: batch.signature,
      leaves: batch.leaves.slice(),
      proofs: proofsOf(batch.signature, treeWithPaths(hashes).paths),
    };
  }
  return rebuilt.proofs[index];
}

/**
 * The root a batch proof leads to from this receipt, or undefined for a malformed proof (or
 * receipt): what a batch signature must have been made over. Never throws.
 */
export function receiptBatchRoot(
  receipt: SignedReceiptFields,
  batch: ReceiptBatchProof,
): Uint8Array<ArrayBuffer> | undefined {
  if (!Array.isArray(batch.path) || batch.path.length > 64) return undefined;
  const path: Uint8Array[] = [];
  for (const text of batch.path) {
    const hash = typeof text === "string" ? fromBase64url(text) : undefined;
    if (hash === undefined || hash.length !== 32) return undefined;
    path.push(hash);
  }
  let leaf: Uint8Array;
  try {
    leaf = receiptLeafHash(receipt);
  } catch {
    return undefined; // members of the wrong type, or a string with no JCS form
  }
  return rootFromPath(leaf, batch.index, batch.size, path);
}

/**
 * Verifies a receipt signature with nothing but the Beacon's public key. Never throws: a
 * malformed key, signature or receipt gives `false`.
 *
 * @param publicKey The Beacon's raw public key, unpadded base64url.
 * @param receipt The receipt as received.
 * @param signature The receipt's signature, unpadded base64url.
 * @param batch The receipt's `batch` member, when it has one (a batch signature).
 * @returns Whether the Beacon's key signed exactly these five members (alone, or in a batch
 *   whose root the proof leads to).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { verifyReceipt } from "./receipt.ts";
 *
 * const receipt = {
 *   id: "x",
 *   receivedAt: "2025-06-01T12:00:03.123Z",
 *   digest: "sha256:00",
 *   size: 1,
 *   kind: "unstructured",
 * };
 * assert.ok(!await verifyReceipt("A".repeat(43), receipt, "A".repeat(86)));
 * ```
 */
export async function verifyReceipt(
  publicKey: string,
  receipt: SignedReceiptFields,
  signature: string,
  batch?: ReceiptBatchProof,
): Promise<boolean> {
  let bytes: Uint8Array<ArrayBuffer>;
  try {
    if (batch === undefined) bytes = canonicalReceiptBytes(receipt);
    else {
      const root = receiptBatchRoot(receipt, batch);
      if (root === undefined) return false;
      bytes = canonicalBatchBytes(root, batch.size);
    }
  } catch {
    return false;
  }
  return await verifyBytes(publicKey, bytes, signature);
}
