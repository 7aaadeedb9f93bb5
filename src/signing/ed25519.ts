/**
 * The Ed25519 primitives shared by receipts and checkpoints, on WebCrypto alone (`crypto.subtle`
 * with the Ed25519 algorithm of the Secure Curves in WebCrypto draft, which is RFC 8032 "pure"
 * Ed25519), so the same code runs on Deno, Deno Deploy, Bun, Cloudflare Workers and Node.
 *
 * Keys and signatures travel as unpadded base64url (RFC 4648 §5): a public key is the 32 raw
 * bytes of RFC 8032 §5.1.5 (43 characters), a signature the 64 bytes of RFC 8032 §5.1.6
 * (86 characters).
 *
 * @module
 */
import { base64url, fromBase64url } from "../bytes.ts";

/** Bytes in a raw Ed25519 public key (RFC 8032 §5.1.5). */
export const PUBLIC_KEY_BYTES = 32;
/** Bytes in an Ed25519 signature (RFC 8032 §5.1.6). */
export const SIGNATURE_BYTES = 64;

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

/**
 * Verifies an Ed25519 signature by a raw public key. Never throws: a key or signature that does
 * not decode, has the wrong length, or that WebCrypto refuses (not a curve point) gives `false`,
 * because to a verifier all of those mean "not signed by this key".
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
  if (rawKey?.length !== PUBLIC_KEY_BYTES || rawSignature?.length !== SIGNATURE_BYTES) {
    return false;
  }
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
