/**
 * The Ed25519 primitives shared by receipts and checkpoints, on WebCrypto alone (`crypto.subtle`
 * with the Ed25519 algorithm of the Secure Curves in WebCrypto draft, which is RFC 8032 "pure"
 * Ed25519), so the same code runs on Deno, Deno Deploy, Bun, Cloudflare Workers and Node.
 * Verification adds the strict encoding and small-order checks of RFC 8032 §5.1.7 that WebCrypto
 * implementations do not all make, with `@noble/curves` for the point decoding.
 *
 * Keys and signatures travel as unpadded base64url (RFC 4648 §5): a public key is the 32 raw
 * bytes of RFC 8032 §5.1.5 (43 characters), a signature the 64 bytes of RFC 8032 §5.1.6
 * (86 characters).
 *
 * @module
 */
import { ed25519 } from "@noble/curves/ed25519.js";
import { base64url, fromBase64url, hex } from "../bytes.ts";

/** Bytes in a raw Ed25519 public key (RFC 8032 §5.1.5). */
export const PUBLIC_KEY_BYTES = 32;
/** Bytes in an Ed25519 signature (RFC 8032 §5.1.6). */
export const SIGNATURE_BYTES = 64;

/**
 * The fingerprint of a raw Ed25519 public key: `"sha256:"` and the lowercase hex SHA-256 of
 * the 32 key bytes.
 *
 * @param rawPublicKey The raw public key bytes.
 * @returns The fingerprint text.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { keyFingerprint } from "./ed25519.ts";
 *
 * assert.match(await keyFingerprint(new Uint8Array(32)), /^sha256:66687aadf862bd77[0-9a-f]{48}$/);
 * ```
 */
export async function keyFingerprint(rawPublicKey: Uint8Array<ArrayBuffer>): Promise<string> {
  return "sha256:" + hex(new Uint8Array(await crypto.subtle.digest("SHA-256", rawPublicKey)));
}

/**
 * Signs `bytes` with an Ed25519 private key and returns the signature as unpadded base64url.
 *
 * @param privateKey A WebCrypto Ed25519 private key with the `sign` usage.
 * @param bytes The exact bytes to sign.
 * @returns The 86-character base64url signature.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { signBytes } from "./ed25519.ts";
 *
 * const keys = await crypto.subtle.generateKey("Ed25519", false, ["sign", "verify"]) as CryptoKeyPair;
 * assert.equal((await signBytes(keys.privateKey, new Uint8Array([1]))).length, 86);
 * ```
 */
export async function signBytes(
  privateKey: CryptoKey,
  bytes: Uint8Array<ArrayBuffer>,
): Promise<string> {
  return base64url(new Uint8Array(await crypto.subtle.sign("Ed25519", privateKey, bytes)));
}

/** The order L of the Ed25519 base point (RFC 8032 §5.1): a canonical S is below it. */
const GROUP_ORDER = 2n ** 252n + 27742317777372353535851937790883648493n;

/** The 32 little-endian bytes of a signature's S half (RFC 8032 §5.1.6 step 6) as a number. */
function littleEndianNumber(bytes: Uint8Array): bigint {
  let value = 0n;
  for (let index = bytes.length - 1; index >= 0; index--) {
    value = (value << 8n) | BigInt(bytes[index]);
  }
  return value;
}

/**
 * Whether a raw public key and signature pass the encoding checks of RFC 8032 §5.1.7 step 1 with
 * canonical encodings, and the key is not of small order.
 *
 * - A and R decode as curve points from their canonical encoding (RFC 8032 §5.1.3: y below p, and
 *   not x = 0 with the sign bit set). WebCrypto implementations differ on whether they accept
 *   y ≥ p, so the Beacon refuses it itself.
 * - S is below L (§5.1.7 step 1: "If ... S is not in [0, L) ... the signature is invalid").
 * - A is not one of the 8 points of small order. Such a "key" (the identity `01 00…00`, say)
 *   verifies many signatures for every message, so a valid signature under it would prove nothing
 *   about who sent a message (RFC 8032 §8.4 leaves this check to the application; the key
 *   continuity claim of docs/protocol-0.1.md §7 needs it).
 *
 * The point arithmetic is `@noble/curves` (`Point.fromBytes` with `zip215 = false` is the strict
 * RFC 8032 decoding); nothing here is hand-written curve code.
 */
function strictlyEncoded(rawKey: Uint8Array, rawSignature: Uint8Array): boolean {
  if (littleEndianNumber(rawSignature.subarray(32)) >= GROUP_ORDER) return false;
  try {
    const key = ed25519.Point.fromBytes(rawKey, false);
    ed25519.Point.fromBytes(rawSignature.subarray(0, 32), false);
    return !key.isSmallOrder();
  } catch {
    return false; // not a canonical encoding of a curve point
  }
}

/**
 * The one home of "does this Ed25519 signature verify", strictly: the encoding and small-order
 * checks of {@linkcode strictlyEncoded} first, then the group equation of RFC 8032 §5.1.7 by the
 * runtime's WebCrypto (the same result on Deno, Node, Bun and Workers once the encodings are
 * canonical, and ten times faster than computing it in JavaScript). Never throws: anything that
 * does not decode or that the runtime refuses gives `false`, because to a verifier all of those
 * mean "not signed by this key".
 *
 * @param rawKey The raw public key (must be 32 bytes).
 * @param bytes The bytes that were signed.
 * @param rawSignature The raw signature (must be 64 bytes).
 * @returns Whether the signature is a valid one by this key.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { verifyEd25519 } from "./ed25519.ts";
 *
 * // The neutral point `01 00…00` as the key and as R, with S = 0: WebCrypto alone says "valid"
 * // for every message; here it is refused, as a key of small order.
 * const neutral = new Uint8Array(32);
 * neutral[0] = 1;
 * const signature = new Uint8Array(64);
 * signature[0] = 1;
 * assert.equal(await verifyEd25519(neutral, new Uint8Array([1]), signature), false);
 * ```
 */
export async function verifyEd25519(
  rawKey: Uint8Array<ArrayBuffer>,
  bytes: Uint8Array<ArrayBuffer>,
  rawSignature: Uint8Array<ArrayBuffer>,
): Promise<boolean> {
  if (rawKey.length !== PUBLIC_KEY_BYTES || rawSignature.length !== SIGNATURE_BYTES) return false;
  if (!strictlyEncoded(rawKey, rawSignature)) return false;
  try {
    const key = await crypto.subtle.importKey("raw", rawKey, { name: "Ed25519" }, false, [
      "verify",
    ]);
    return await crypto.subtle.verify("Ed25519", key, rawSignature, bytes);
  } catch {
    // Runtimes differ on whether a malformed key fails at import or at verify; both are "no".
    return false;
  }
}

/**
 * {@linkcode verifyEd25519} for a key and signature in unpadded base64url, as receipts,
 * checkpoints and redaction records carry them.
 *
 * @param publicKey The raw 32-byte public key, unpadded base64url.
 * @param bytes The bytes that were signed.
 * @param signature The 64-byte signature, unpadded base64url.
 * @returns Whether the signature is valid.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { verifyBytes } from "./ed25519.ts";
 *
 * assert.ok(!await verifyBytes("not a key", new Uint8Array(), "x"));
 * ```
 */
export async function verifyBytes(
  publicKey: string,
  bytes: Uint8Array<ArrayBuffer>,
  signature: string,
): Promise<boolean> {
  const rawKey = fromBase64url(publicKey);
  const rawSignature = fromBase64url(signature);
  if (rawKey === undefined || rawSignature === undefined) return false;
  return await verifyEd25519(rawKey, bytes, rawSignature);
}
