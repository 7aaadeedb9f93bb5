/**
 * Receipt and context ids (src/ids.ts): the 48-bit time prefix at the edges of its range, and one
 * draw of randomness for both ids of a submission giving exactly what the two separate mints give.
 */
import { fromBase64url } from "../src/bytes.ts";
import { isReceiptId, newContextId, newReceiptId, newSubmissionIds } from "../src/ids.ts";
import { assert, assertEquals } from "./support/assert.ts";

/** `randomBytes` that hands out `bytes` in order, so two mints can be given the same bits. */
function fixedRandom(bytes: Uint8Array): (length: number) => Uint8Array<ArrayBuffer> {
  let at = 0;
  return (length) => {
    const out = bytes.slice(at, at + length);
    at += length;
    return out;
  };
}

Deno.test("a submission's ids: the receipt id's prefix is the time, and one draw gives what two mints give", () => {
  const random = crypto.getRandomValues(new Uint8Array(32));
  for (const now of [0, 1, 2 ** 32 - 1, 2 ** 32, 2 ** 47 + 12345, Date.now(), 2 ** 48 - 1]) {
    const both = newSubmissionIds(now, fixedRandom(random));
    const apart = fixedRandom(random);
    assertEquals(both, { id: newReceiptId(now, apart), contextId: newContextId(apart) });
    assert(isReceiptId(both.id), both.id);
    const bytes = fromBase64url(both.id)!;
    let time = 0;
    for (let i = 0; i < 6; i++) time = time * 256 + bytes[i];
    assertEquals(time, now);
    assertEquals(bytes.subarray(6), random.subarray(0, 16));
  }
});
