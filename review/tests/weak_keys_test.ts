/**
 * A small-order "key" proves nothing (docs/threat-model.md): through the real
 * handler and intake, a message signed under any of the 8 small-order points (canonical or not)
 * with a signature a lenient verifier accepts is stored, and its receipt says `verified: false`;
 * the review tool shows it as not verified. The submission is not refused: a signature that does
 * not verify never makes a message invalid (docs/protocol-0.1.md §7).
 */
import { ed25519 } from "@noble/curves/ed25519.js";
import { assert, assertMatch, assertStrictEquals } from "../../tests/support/assert.ts";
import { base64url } from "../../src/bytes.ts";
import { canonicalMessageBytes } from "../../src/message/canonical.ts";
import type { BeaconMessage } from "../../src/message/schema.ts";
import {
  fromHex,
  NON_CANONICAL_SMALL_ORDER,
  SMALL_ORDER_POINTS,
  zeroSignature,
} from "../../tests/support/small_order.ts";
import { fill, message, review, tempDatabase } from "./support.ts";

Deno.test("small-order keys get verified:false receipts and review shows them unverified", async () => {
  const keys = [...SMALL_ORDER_POINTS.map((point) => point.hex), ...NON_CANONICAL_SMALL_ORDER];
  const samples = keys.map((keyHex, index) => {
    const fields = {
      beacon: "0.1",
      subject: `Forged ${index}`,
      body: `A different body from a different sender, ${index}.`,
      intent: "information",
      sender: { name: "Test agent" },
    } as const;
    const signature = zeroSignature(SMALL_ORDER_POINTS[index % 8].hex);
    const identity = {
      algorithm: "Ed25519" as const,
      publicKey: base64url(fromHex(keyHex)),
      signature: base64url(signature),
    };
    const bytes = canonicalMessageBytes({ ...fields, identity } as BeaconMessage);
    // The forgery is real: a lenient (ZIP215) verifier accepts it for this exact message.
    assert(ed25519.verify(signature, bytes, fromHex(keyHex), { zip215: true }), keyHex);
    return message({ ...fields, identity });
  });
  const database = await tempDatabase();
  try {
    const receipts = await fill(database, samples);
    for (const receipt of receipts) {
      const identity = receipt.identity as { verified: boolean; fingerprint: string };
      assertStrictEquals(identity.verified, false, JSON.stringify(receipt));
      assertMatch(identity.fingerprint, /^sha256:[0-9a-f]{64}$/);
    }
    const listed = await review(database, ["list", "--limit", String(keys.length)]);
    assertStrictEquals(listed.code, 0, listed.stderr);
    const rows = listed.stdout.split("\n").filter((line) => / NO /.test(line));
    assertStrictEquals(rows.length, keys.length, listed.stdout);
    assert(!/ ok /.test(listed.stdout), listed.stdout);
    const shown = await review(database, ["show", String(receipts[0].id)]);
    assertStrictEquals(shown.code, 0, shown.stderr);
    assertMatch(shown.stdout, /did NOT verify at intake/);
    assert(!shown.stdout.includes("the holder of this key sent it"), shown.stdout);
  } finally {
    await Deno.remove(database.directory, { recursive: true });
  }
});
