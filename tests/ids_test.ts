/**
 * Receipt and context ids (src/ids.ts): the 48-bit time prefix at the edges of its range, and the
 * random bits of one draw laid out as the format says: the receipt id's 16 after the time, the
 * context id the next 16, each base64url.
 */
import { base64url, fromBase64url } from "../src/bytes.ts";
import { isReceiptId, newSubmissionIds } from "../src/ids.ts";
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

Deno.test("a submission's ids: the receipt id's prefix is the time, then the draw's first 16 bytes; the context id the next 16", () => {
  const random = crypto.getRandomValues(new Uint8Array(32));
  for (const now of [0, 1, 2 ** 32 - 1, 2 ** 32, 2 ** 47 + 12345, Date.now(), 2 ** 48 - 1]) {
    const both = newSubmissionIds(now, fixedRandom(random));
    assertEquals(both.contextId, base64url(random.subarray(16, 32)));
    assert(isReceiptId(both.id), both.id);
    const bytes = fromBase64url(both.id)!;
    let time = 0;
    for (let i = 0; i < 6; i++) time = time * 256 + bytes[i];
    assertEquals(time, now);
    assertEquals(bytes.subarray(6), random.subarray(0, 16));
  }
});
