/**
 * Optional Ed25519 identity of a beacon/0.1 message, checked by the one strict Ed25519 verifier
 * (`src/signing/ed25519.ts`: RFC 8032 with canonical encodings, no small-order keys), so the
 * same check runs on Deno, Deno Deploy, Bun, Cloudflare Workers and Node.
 *
 * A verified signature proves key continuity only: the message was signed by whoever holds the
 * private key of `identity.publicKey`. Cryptographic identity does not establish autonomy,
 * consciousness or personhood (design principle 5). A signature that does not verify never
 * makes a message invalid; it is recorded as unverified.
 *
 * The signed bytes are defined in `canonical.ts`.
 *
 * @module
 */

import { base64url, fromBase64url } from "../bytes.ts";
import { keyFingerprint, PUBLIC_KEY_BYTES, verifyEd25519 } from "../signing/ed25519.ts";
import { canonicalMessageBytes } from "./canonical.ts";
import type { BeaconMessage } from "./schema.ts";

/**
 * What {@linkcode checkIdentity} learned about a signed message.
 *
 * `fingerprint` is `"sha256:"` followed by the 64 lowercase hex digits of SHA-256 over the raw
 * 32-byte public key: a short, stable name for the key whether or not the signature verified.
 * It is `""` only when `identity.publicKey` does not decode to 32 bytes, which a message that
 * passed `checkMessage` cannot have.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import type { IdentityCheck } from "./identity.ts";
 *
 * const seen: IdentityCheck = { fingerprint: "sha256:" + "0".repeat(64), verified: false };
 * assert.equal(seen.verified, false);
 * ```
 */
export interface IdentityCheck {
  /** `sha256:<hex>` of the raw Ed25519 public key (see {@linkcode keyFingerprint}). */
  readonly fingerprint: string;
  /** Whether the signature over the canonical message verified. */
  readonly verified: boolean;
}

/**
 * Checks the optional identity of a validated message: computes the key fingerprint and
 * verifies the Ed25519 signature over the canonical bytes (`canonical.ts`).
 *
 * Never throws for anything a submitter controls: a key that is not a canonical curve point or
 * is of small order (the neutral point `01 00…00` "verifies" every message under WebCrypto
 * alone), a non-canonical signature (S ≥ L), one of the wrong size or one that does not match
 * all give `verified: false`, and the message is still accepted and stored (principle: a bad
 * signature never makes a message invalid). Verification is the strict RFC 8032 §5.1.7 of
 * `verifyEd25519` (`src/signing/ed25519.ts`), the same as for receipts and checkpoints.
 *
 * @param message A message that passed `checkMessage`.
 * @returns `undefined` when the message has no `identity`, otherwise the fingerprint and
 *   whether the signature verified.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { checkIdentity } from "./identity.ts";
 * import { exampleMessages } from "./examples.ts";
 *
 * assert.equal(await checkIdentity(exampleMessages[0]), undefined); // unsigned
 * assert.equal((await checkIdentity(exampleMessages[1]))?.verified, true);
 * ```
 */
export async function checkIdentity(message: BeaconMessage): Promise<IdentityCheck | undefined> {
  const identity = message.identity;
  if (identity === undefined) return undefined;
  const rawKey = fromBase64url(identity.publicKey);
  if (rawKey === undefined || rawKey.length !== PUBLIC_KEY_BYTES) {
    return { fingerprint: "", verified: false };
  }
  const fingerprint = await keyFingerprint(rawKey);
  const signature = fromBase64url(identity.signature);
  if (identity.algorithm !== "Ed25519" || signature === undefined) {
    return { fingerprint, verified: false };
  }
  let bytes: Uint8Array<ArrayBuffer>;
  try {
    bytes = canonicalMessageBytes(message);
  } catch {
    return { fingerprint, verified: false }; // no canonical form (an unpaired surrogate): unsigned
  }
  return { fingerprint, verified: await verifyEd25519(rawKey, bytes, signature) };
}

/**
 * Signs a message as a sender would: sets `identity` to the key pair's public key and the
 * Ed25519 signature over the canonical bytes. Any `identity` already present is replaced.
 * The Beacon itself never signs; this is for clients, documentation examples and tests.
 *
 * @param message The message to sign (with or without `identity`).
 * @param keys An Ed25519 key pair whose public key is extractable (WebCrypto always makes
 *   generated public keys extractable).
 * @returns A new message carrying `identity`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { checkIdentity, signMessage } from "./identity.ts";
 *
 * const keys = await crypto.subtle.generateKey("Ed25519", false, ["sign", "verify"]);
 * const signed = await signMessage({
 *   beacon: "0.1",
 *   subject: "Hi",
 *   body: "Hello",
 *   intent: "other",
 *   sender: { name: "A" },
 * }, keys as CryptoKeyPair);
 * assert.equal((await checkIdentity(signed))?.verified, true);
 * ```
 */
export async function signMessage(
  message: BeaconMessage,
  keys: CryptoKeyPair,
): Promise<BeaconMessage> {
  const rawKey = new Uint8Array(await crypto.subtle.exportKey("raw", keys.publicKey));
  const identity = { algorithm: "Ed25519" as const, publicKey: base64url(rawKey) };
  // canonicalMessageBytes drops `signature`, so its placeholder value never reaches the bytes.
  const bytes = canonicalMessageBytes({ ...message, identity: { ...identity, signature: "" } });
  const signature = new Uint8Array(await crypto.subtle.sign("Ed25519", keys.privateKey, bytes));
  return { ...message, identity: { ...identity, signature: base64url(signature) } };
}
