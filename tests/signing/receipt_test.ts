/**
 * Signed receipts (src/signing/receipt.ts): the exact canonical bytes, the round trip, and a
 * verification that uses nothing but the public key, the receipt JSON and WebCrypto, rebuilding
 * the signed bytes from the documented rule rather than from our code.
 */
import { sha256Digest } from "../../src/bytes.ts";
import { signingKeyFromSeed } from "../../src/signing/key.ts";
import {
  canonicalReceiptBytes,
  RECEIPT_CONTEXT,
  signReceipt,
  verifyReceipt,
} from "../../src/signing/receipt.ts";
import { signCheckpoint, verifyCheckpoint } from "../../src/signing/checkpoint.ts";
import { assert, assertEquals, assertStrictEquals, assertThrows } from "../support/assert.ts";
import canonicalize from "canonicalize";
import fc from "fast-check";

const RECEIPT = {
  id: "AZR1t2x1q4Xv3T0x0kq8T5bJm3V6eA",
  receivedAt: "2025-06-01T12:00:03.123Z",
  surface: "native",
  kind: "unstructured",
  size: 16,
  digest: "sha256:" + "0123456789abcdef".repeat(4),
  status: "https://beacon.example/beacon/0.1/submissions/AZR1t2x1q4Xv3T0x0kq8T5bJm3V6eA",
};

Deno.test("canonicalReceiptBytes() is the prefix line and the JCS of exactly five members", () => {
  assertStrictEquals(RECEIPT_CONTEXT, "beacon/0.1 receipt\n");
  assertStrictEquals(
    new TextDecoder().decode(canonicalReceiptBytes(RECEIPT)),
    'beacon/0.1 receipt\n{"digest":"sha256:' + "0123456789abcdef".repeat(4) +
      '","id":"AZR1t2x1q4Xv3T0x0kq8T5bJm3V6eA","kind":"unstructured",' +
      '"receivedAt":"2025-06-01T12:00:03.123Z","size":16}',
  );
  // Members outside the five do not change the bytes.
  const { surface: _surface, status: _status, ...five } = RECEIPT;
  assertStrictEquals(
    new TextDecoder().decode(canonicalReceiptBytes(five)),
    new TextDecoder().decode(
      canonicalReceiptBytes({ ...RECEIPT, identity: { x: 1 } } as typeof RECEIPT),
    ),
  );
});

Deno.test("canonicalReceiptBytes() refuses what has no single spelling", () => {
  for (const size of [1.5, -1, Number.NaN, 2 ** 53]) {
    assertThrows(() => canonicalReceiptBytes({ ...RECEIPT, size }), /size/);
  }
  assertThrows(
    () => canonicalReceiptBytes({ ...RECEIPT, id: undefined as unknown as string }),
    /id/,
  );
  assertThrows(() => canonicalReceiptBytes({ ...RECEIPT, id: "\uD800" }));
});

Deno.test("canonicalReceiptBytes() writes what an independent RFC 8785 library writes, for any strings", () => {
  // The five members are written out by hand (no object sorted per receipt); npm `canonicalize`
  // rebuilds the same text from the rule, for arbitrary well-formed strings (escapes, non-ASCII,
  // astral characters) and sizes.
  const text = fc.string({ unit: "grapheme", maxLength: 40 });
  fc.assert(
    fc.property(
      fc.record({
        id: text,
        receivedAt: text,
        digest: text,
        kind: text,
        size: fc.maxSafeNat(),
      }),
      (fields) => {
        const expected = RECEIPT_CONTEXT + canonicalize({ ...fields, extra: undefined });
        assertStrictEquals(new TextDecoder().decode(canonicalReceiptBytes(fields)), expected);
      },
    ),
    { numRuns: 500 },
  );
});

Deno.test("signReceipt() and verifyReceipt() round-trip; any change breaks the signature", async () => {
  const key = await signingKeyFromSeed(crypto.getRandomValues(new Uint8Array(32)));
  const signature = await signReceipt(key, RECEIPT);
  assertStrictEquals(signature.length, 86);
  assert(await verifyReceipt(key.publicKey, RECEIPT, signature));
  const moved = { ...RECEIPT, status: "elsewhere" };
  assert(await verifyReceipt(key.publicKey, moved, signature), "status is not signed");
  for (
    const changed of [
      { id: "q4Xv3T0x0kq8T5bJm3V6eB" },
      { receivedAt: "2025-06-01T12:00:03.124Z" },
      { kind: "structured" },
      { size: 17 },
      { digest: "sha256:" + "f".repeat(64) },
    ]
  ) {
    assertStrictEquals(
      await verifyReceipt(key.publicKey, { ...RECEIPT, ...changed }, signature),
      false,
    );
  }
  const other = await signingKeyFromSeed(crypto.getRandomValues(new Uint8Array(32)));
  assertStrictEquals(await verifyReceipt(other.publicKey, RECEIPT, signature), false);
  assertStrictEquals(await verifyReceipt("not a key", RECEIPT, signature), false);
  assertStrictEquals(await verifyReceipt(key.publicKey, RECEIPT, "AAAA"), false);
  assertStrictEquals(await verifyReceipt(key.publicKey, RECEIPT, signature + "A"), false);
  assertStrictEquals(
    await verifyReceipt(key.publicKey, { ...RECEIPT, size: 1.5 }, signature),
    false,
  );
});

Deno.test("a receipt verifies offline with only the public key, the receipt and WebCrypto", async () => {
  // What the Beacon hands out: a receipt with its signature, and its public key published in
  // the discovery document. Produced here by our code...
  const key = await signingKeyFromSeed(crypto.getRandomValues(new Uint8Array(32)));
  const content = new TextEncoder().encode("Hello, reviewer.");
  const receipt = { ...RECEIPT, size: content.length, digest: await sha256Digest(content) };
  const published = {
    publicKey: key.publicKey,
    receiptJson: JSON.stringify({
      receipt: { ...receipt, signature: await signReceipt(key, receipt) },
    }),
  };

  // ...and checked below by a stranger with none of it: base64url decoding, the signed bytes
  // rebuilt from the documented rule, and crypto.subtle.verify.
  const fromBase64url = (text: string) =>
    Uint8Array.from(atob(text.replaceAll("-", "+").replaceAll("_", "/")), (c) => c.charCodeAt(0));
  const got = JSON.parse(published.receiptJson).receipt;
  const signed = "beacon/0.1 receipt\n" +
    `{"digest":${JSON.stringify(got.digest)},"id":${JSON.stringify(got.id)},` +
    `"kind":${JSON.stringify(got.kind)},"receivedAt":${JSON.stringify(got.receivedAt)},` +
    `"size":${got.size}}`;
  const publicKey = await crypto.subtle.importKey(
    "raw",
    fromBase64url(published.publicKey),
    { name: "Ed25519" },
    false,
    ["verify"],
  );
  assert(
    await crypto.subtle.verify(
      "Ed25519",
      publicKey,
      fromBase64url(got.signature),
      new TextEncoder().encode(signed),
    ),
  );
  // And the digest in it is the SHA-256 of what the submitter sent.
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", content));
  assertStrictEquals(
    got.digest,
    "sha256:" + Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join(""),
  );
});

Deno.test("receipt and checkpoint signatures cannot stand in for each other", async () => {
  const key = await signingKeyFromSeed(crypto.getRandomValues(new Uint8Array(32)));
  const head = {
    treeSize: 16,
    rootHash: "0123456789abcdef".repeat(4),
    createdAt: "2025-06-01T12:00:03.123Z",
  };
  const checkpointSignature = await signCheckpoint(key, head);
  const receiptSignature = await signReceipt(key, RECEIPT);
  assert(await verifyCheckpoint(key.publicKey, head, checkpointSignature));
  assertStrictEquals(await verifyReceipt(key.publicKey, RECEIPT, checkpointSignature), false);
  assertStrictEquals(await verifyCheckpoint(key.publicKey, head, receiptSignature), false);
});

Deno.test("signReceipts() signs one receipt in the single form and several with one batch signature", async () => {
  const { signReceipts } = await import("../../src/signing/receipt.ts");
  const key = await signingKeyFromSeed(new Uint8Array(32).fill(7));
  const [alone] = (await signReceipts(key, [RECEIPT])).receipts;
  assertEquals(alone.batch, undefined);
  assert(await verifyReceipt(key.publicKey, RECEIPT, alone.signature));
  const receipts = Array.from({ length: 7 }, (_, i) => ({ ...RECEIPT, size: i }));
  const signed = (await signReceipts(key, receipts)).receipts;
  assertEquals(new Set(signed.map((s) => s.signature)).size, 1);
  for (const [i, { signature, batch }] of signed.entries()) {
    assertEquals(batch?.index, i);
    assert(await verifyReceipt(key.publicKey, receipts[i], signature, batch));
    // The batch signature does not verify as a single receipt, nor for another receipt.
    assertEquals(await verifyReceipt(key.publicKey, receipts[i], signature), false);
    assertEquals(
      await verifyReceipt(key.publicKey, { ...receipts[i], size: 99 }, signature, batch),
      false,
    );
  }
  const batch = signed[0].batch!;
  assertEquals(
    await verifyReceipt(key.publicKey, receipts[0], signed[0].signature, { ...batch, path: ["x"] }),
    false,
  );
});
