/**
 * Receipt ids (= A2A task ids) and context ids: their format and their minting, in one place.
 *
 * A receipt id is 22 bytes in unpadded base64url (30 characters): a 48-bit big-endian count of
 * milliseconds, then 128 bits from a CSPRNG. The random part makes it unguessable (it is a
 * capability: knowing it is the only authorisation to read its status); the time prefix makes
 * ids minted close together sort close together, so inserting into the id index touches a few
 * adjacent pages per commit instead of one random page per row (which doubled commit time at
 * 100,000 rows and grows with the table). The time is no secret: the receipt states it.
 *
 * @module
 */
import { base64url } from "./bytes.ts";

/** Random bits in every id: 128 (RFC 4086 §8: unguessable against online guessing). */
const RANDOM_BYTES = 16;

/** The shape of a receipt id: 30 base64url characters. */
export const RECEIPT_ID = /^[A-Za-z0-9_-]{30}$/;

/**
 * Whether `text` has the shape of a receipt id: a lookup of anything else can skip the database.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { isReceiptId } from "./ids.ts";
 *
 * assert.ok(isReceiptId("AaIrGCdOK4OaiC42zQN_YmZcIR8nHA"));
 * assert.ok(!isReceiptId("../etc/passwd"));
 * ```
 */
export function isReceiptId(text: string): boolean {
  return RECEIPT_ID.test(text);
}

/** The ids a new submission gets: its receipt id (= A2A task id) and its A2A context id. */
export interface SubmissionIds {
  readonly id: string;
  readonly contextId: string;
}

/**
 * Fresh ids for a submission received at `now`: its receipt id (the 48-bit millisecond time, then
 * 128 random bits, base64url: 30 characters) and its A2A context id (128 random bits, base64url:
 * 22 characters), both random parts from one draw of `randomBytes` (on the submission path a
 * CSPRNG call costs about as much as the rest of the minting).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { isReceiptId, newSubmissionIds } from "./ids.ts";
 *
 * const random = (n: number) => crypto.getRandomValues(new Uint8Array(n));
 * const { id, contextId } = newSubmissionIds(Date.now(), random);
 * assert.ok(isReceiptId(id));
 * assert.equal(contextId.length, 22);
 * assert.ok(newSubmissionIds(1, random).id < newSubmissionIds(2, random).id);
 * ```
 */
export function newSubmissionIds(
  now: number,
  randomBytes: (length: number) => Uint8Array<ArrayBuffer>,
): SubmissionIds {
  const random = randomBytes(2 * RANDOM_BYTES);
  return {
    id: receiptIdOf(now, random.subarray(0, RANDOM_BYTES)),
    contextId: base64url(random.subarray(RANDOM_BYTES, 2 * RANDOM_BYTES)),
  };
}

/**
 * The receipt id of time `now` and {@linkcode RANDOM_BYTES} random bytes. The time is written
 * byte by byte rather than through a `DataView`, which costs more to create than the whole id.
 */
function receiptIdOf(now: number, random: Uint8Array): string {
  const bytes = new Uint8Array(6 + RANDOM_BYTES);
  // The 48-bit big-endian millisecond count: 16 bits above 2^32, then the low 32 bits.
  const high = Math.floor(now / 2 ** 32);
  const low = now >>> 0;
  bytes[0] = (high >>> 8) & 255;
  bytes[1] = high & 255;
  bytes[2] = low >>> 24;
  bytes[3] = (low >>> 16) & 255;
  bytes[4] = (low >>> 8) & 255;
  bytes[5] = low & 255;
  bytes.set(random, 6);
  return base64url(bytes);
}
