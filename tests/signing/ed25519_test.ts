/**
 * The one strict Ed25519 verifier (src/signing/ed25519.ts): RFC 8032 §5.1.7 with canonical
 * encodings and no small-order keys. Each refused case is shown to be accepted by a lenient
 * verifier (noble's ZIP215 mode, which is what some deployed verifiers do), so the refusal is the
 * Beacon's own and not an accident of the input.
 */
import { ed25519 } from "@noble/curves/ed25519.js";
import { assert, assertStrictEquals } from "../support/assert.ts";
import { verifyBytes, verifyEd25519 } from "../../src/signing/ed25519.ts";
import { verifyCheckpoint } from "../../src/signing/checkpoint.ts";
import { verifyReceipt } from "../../src/signing/receipt.ts";
import { base64url } from "../../src/bytes.ts";
import {
  fromHex,
  NON_CANONICAL_LARGE_ORDER,
  NON_CANONICAL_SMALL_ORDER,
  SMALL_ORDER_POINTS,
  zeroSignature,
} from "../support/small_order.ts";

const message = new TextEncoder().encode("beacon/0.1 test message");
const L = 2n ** 252n + 27742317777372353535851937790883648493n;

function lenientlyValid(key: Uint8Array, signature: Uint8Array): boolean {
  return ed25519.verify(signature, message, key, { zip215: true });
}

/** A fresh key pair's raw public key and its signature of `message`, made by WebCrypto. */
async function honestSignature(): Promise<
  { raw: Uint8Array<ArrayBuffer>; signature: Uint8Array<ArrayBuffer> }
> {
  const keys = await crypto.subtle.generateKey("Ed25519", true, [
    "sign",
    "verify",
  ]) as CryptoKeyPair;
  return {
    raw: new Uint8Array(await crypto.subtle.exportKey("raw", keys.publicKey)),
    signature: new Uint8Array(await crypto.subtle.sign("Ed25519", keys.privateKey, message)),
  };
}

Deno.test("an honest signature verifies, by raw bytes and by base64url", async () => {
  const { raw, signature } = await honestSignature();
  assert(await verifyEd25519(raw, message, signature));
  assert(await verifyBytes(base64url(raw), message, base64url(signature)));
  assert(!await verifyEd25519(raw, new TextEncoder().encode("other"), signature));
});

Deno.test("the neutral point verifies every message under WebCrypto alone, and is refused here", async () => {
  // The attack: key 01 00…00, signature 01 00…00 ‖ 0.
  const key = fromHex(SMALL_ORDER_POINTS[0].hex);
  const signature = zeroSignature(SMALL_ORDER_POINTS[0].hex);
  const imported = await crypto.subtle.importKey("raw", key, "Ed25519", false, ["verify"]);
  assert(await crypto.subtle.verify("Ed25519", imported, signature, message), "WebCrypto says yes");
  assertStrictEquals(await verifyEd25519(key, message, signature), false);
});

Deno.test("every small-order key, canonical or not, is refused with every small-order R", async () => {
  const keys = [...SMALL_ORDER_POINTS.map((point) => point.hex), ...NON_CANONICAL_SMALL_ORDER];
  for (const keyHex of keys) {
    for (const point of SMALL_ORDER_POINTS) {
      const key = fromHex(keyHex);
      const signature = zeroSignature(point.hex);
      assert(lenientlyValid(key, signature), `${keyHex} / ${point.hex}: lenient verifier accepts`);
      assertStrictEquals(await verifyEd25519(key, message, signature), false, keyHex);
      assertStrictEquals(await verifyBytes(base64url(key), message, base64url(signature)), false);
    }
  }
});

Deno.test("S at or above L is refused though S mod L makes a valid signature", async () => {
  const { raw, signature } = await honestSignature();
  let s = 0n;
  for (let index = 63; index >= 32; index--) s = (s << 8n) | BigInt(signature[index]);
  const malleated = signature.slice();
  let wide = s + L; // still below 2^256: a second encoding of the same S mod L
  for (let index = 32; index < 64; index++) {
    malleated[index] = Number(wide & 0xffn);
    wide >>= 8n;
  }
  assert(await verifyEd25519(raw, message, signature));
  assertStrictEquals(await verifyEd25519(raw, message, malleated), false);
});

Deno.test("a non-canonical encoding of a point of large order is refused as a key and as R", async () => {
  const noncanonical = fromHex(NON_CANONICAL_LARGE_ORDER);
  // It decodes (leniently) to a real point that is not of small order.
  assert(!ed25519.Point.fromBytes(noncanonical, true).isSmallOrder());
  const { raw } = await honestSignature();
  assertStrictEquals(await verifyEd25519(noncanonical, message, new Uint8Array(64)), false);
  assertStrictEquals(
    await verifyEd25519(raw, message, zeroSignature(NON_CANONICAL_LARGE_ORDER)),
    false,
  );
});

Deno.test("wrong lengths and undecodable text give false, never a throw", async () => {
  assertStrictEquals(await verifyEd25519(new Uint8Array(31), message, new Uint8Array(64)), false);
  assertStrictEquals(await verifyEd25519(new Uint8Array(32), message, new Uint8Array(63)), false);
  assertStrictEquals(await verifyBytes("%%%", message, "AAAA"), false);
});

Deno.test("receipts and checkpoints go through the same strict check", async () => {
  const key = base64url(fromHex(SMALL_ORDER_POINTS[0].hex));
  const signature = base64url(zeroSignature(SMALL_ORDER_POINTS[0].hex));
  const receipt = {
    id: "AZR1t2x1q4Xv3T0x0kq8T5bJm3V6eA",
    receivedAt: "2025-06-01T12:00:03.123Z",
    digest: "sha256:" + "0".repeat(64),
    size: 16,
    kind: "unstructured" as const,
  };
  assertStrictEquals(await verifyReceipt(key, receipt, signature), false);
  const head = { treeSize: 1, rootHash: "0".repeat(64), createdAt: "2025-06-01T12:00:03.123Z" };
  assertStrictEquals(await verifyCheckpoint(key, head, signature), false);
});
