/** Rotation statements and the key history they make (src/signing/rotation.ts, key_history.ts). */
import { signingKeyFromSeed } from "../../src/signing/key.ts";
import {
  canonicalRotationBytes,
  type RotationFields,
  signRotation,
  verifyRotation,
} from "../../src/signing/rotation.ts";
import {
  followTrust,
  KeyHistory,
  RangedIntakeSignatures,
  validRotations,
} from "../../src/signing/key_history.ts";
import { signReceipts } from "../../src/signing/receipt.ts";
import { assert, assertEquals, assertStrictEquals } from "../support/assert.ts";

const key = (byte: number) => signingKeyFromSeed(new Uint8Array(32).fill(byte));
const LOG = "beacon.example/log";

function fields(previousKey: string, newKey: string, lastSeq: number): RotationFields {
  return { previousKey, newKey, lastSeq, log: LOG, createdAt: "2026-01-01T00:00:00.000Z" };
}

Deno.test("the signed bytes are domain-separated JCS, members in code-point order", async () => {
  const [a, b] = await Promise.all([key(1), key(2)]);
  const text = new TextDecoder().decode(
    canonicalRotationBytes(fields(a.publicKey, b.publicKey, 5)),
  );
  assertStrictEquals(
    text,
    `beacon/0.1 rotation\n{"createdAt":"2026-01-01T00:00:00.000Z","lastSeq":5,"log":"${LOG}",` +
      `"newKey":"${b.publicKey}","previousKey":"${a.publicKey}"}`,
  );
});

Deno.test("a statement verifies by the new key alone, and says when the previous key signed", async () => {
  const [a, b] = await Promise.all([key(1), key(2)]);
  const alone = await signRotation(fields(a.publicKey, b.publicKey, 5), b);
  assertEquals(await verifyRotation(alone), { valid: true, byPrevious: false });
  const both = await signRotation(fields(a.publicKey, b.publicKey, 5), b, a);
  assertEquals(await verifyRotation(both), { valid: true, byPrevious: true });
  // An altered boundary, or a previous signature over other bytes, makes it invalid.
  assertStrictEquals((await verifyRotation({ ...both, lastSeq: 9 })).valid, false);
  assertStrictEquals(
    (await verifyRotation({ ...alone, previousSignature: both.newSignature })).valid,
    false,
  );
});

Deno.test("the history ends at the current key; a retired key's rows and heads stop at its boundary", async () => {
  const [a, b, c] = await Promise.all([key(1), key(2), key(3)]);
  const rotations = await validRotations([
    await signRotation(fields(a.publicKey, b.publicKey, 5), b),
    await signRotation(fields(b.publicKey, c.publicKey, 9), c, b),
    // Another log's statement never counts.
    await signRotation({ ...fields(c.publicKey, a.publicKey, 12), log: "other" }, a),
  ], LOG);
  const history = KeyHistory.endingAt(c.publicKey, rotations);
  assertEquals(history.ranges.map((r) => [r.firstSeq, r.lastSeq]), [[1, 5], [6, 9], [
    10,
    Infinity,
  ]]);
  assertEquals(history.keysFor(7), [b.publicKey]);
  assert(history.mayCover(b.publicKey, 9) && !history.mayCover(b.publicKey, 10));
  assertStrictEquals(KeyHistory.endingAt(a.publicKey, rotations).ranges.length, 1);
});

Deno.test("followTrust() goes forwards only through statements the previous key signed", async () => {
  const [a, b] = await Promise.all([key(1), key(2)]);
  const cosigned = await validRotations(
    [await signRotation(fields(a.publicKey, b.publicKey, 5), b, a)],
    LOG,
  );
  const fromOld = followTrust(new Set([a.publicKey]), cosigned);
  assertEquals(fromOld.history.keys(), [a.publicKey, b.publicKey]);
  assertStrictEquals(fromOld.followed.length, 1);
  const alone = await validRotations(
    [await signRotation(fields(a.publicKey, b.publicKey, 5), b)],
    LOG,
  );
  assertEquals(followTrust(new Set([a.publicKey]), alone).history.keys(), [a.publicKey]);
  // The new key vouches for the rows before it either way.
  assertEquals(followTrust(new Set([b.publicKey]), alone).history.keys(), [
    a.publicKey,
    b.publicKey,
  ]);
});

Deno.test("a row past a retired key's boundary does not verify under it, and names it", async () => {
  const [a, b] = await Promise.all([key(1), key(2)]);
  const rotations = await validRotations(
    [await signRotation(fields(a.publicKey, b.publicKey, 1), b)],
    LOG,
  );
  const check = new RangedIntakeSignatures(KeyHistory.endingAt(b.publicKey, rotations));
  const receipt = {
    id: "r",
    receivedAt: "2026-01-01T00:00:00.000Z",
    digest: "sha256:" + "0".repeat(64),
    size: 1,
    kind: "unstructured",
  };
  const [byOld] = (await signReceipts(a, [receipt])).receipts;
  const [byNew] = (await signReceipts(b, [receipt])).receipts;
  assert(await check.verifies({ seq: 1, fields: receipt, stored: byOld }));
  assert(!await check.verifies({ seq: 2, fields: receipt, stored: byOld }));
  assert(await check.verifies({ seq: 2, fields: receipt, stored: byNew }));
  assertEquals(
    await check.verifiesAll([1, 2, 3].map((seq) => ({ seq, fields: receipt, stored: byOld }))),
    [true, false, false],
  );
  assertStrictEquals(
    (await check.retiredSigner({ seq: 2, fields: receipt, stored: byOld }))?.publicKey,
    a.publicKey,
  );
});
