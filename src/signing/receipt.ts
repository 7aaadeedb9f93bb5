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
 * What a valid signature proves: the holder of the Beacon's key acknowledged storing content
 * with this digest and size under this id at this time. It says nothing about what the content
 * means, who sent it, or whether anyone has read it.
 *
 * @module
 */
import { canonicalJson } from "../message/canonical.ts";
import { signBytes, verifyBytes } from "./ed25519.ts";
import type { SigningKey } from "./key.ts";

/** The domain separation prefix of signed receipt bytes. */
export const RECEIPT_CONTEXT = "beacon/0.1 receipt\n";

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
  const signed = {
    digest: receipt.digest,
    id: receipt.id,
    kind: receipt.kind,
    receivedAt: receipt.receivedAt,
    size: receipt.size,
  };
  return new TextEncoder().encode(RECEIPT_CONTEXT + canonicalJson(signed));
}

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

/**
 * Verifies a receipt signature with nothing but the Beacon's public key. Never throws: a
 * malformed key, signature or receipt gives `false`.
 *
 * @param publicKey The Beacon's raw public key, unpadded base64url.
 * @param receipt The receipt as received.
 * @param signature The receipt's signature, unpadded base64url.
 * @returns Whether the Beacon's key signed exactly these five members.
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
): Promise<boolean> {
  let bytes: Uint8Array<ArrayBuffer>;
  try {
    bytes = canonicalReceiptBytes(receipt);
  } catch {
    return false;
  }
  return await verifyBytes(publicKey, bytes, signature);
}
