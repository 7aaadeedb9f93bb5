/**
 * The canonical form of a beacon/0.1 message: the exact bytes an Ed25519 identity signs.
 *
 * ## Signed bytes
 *
 * ```text
 * signed bytes = UTF-8( "beacon/0.1 message" LF  ||  JCS(message without identity.signature) )
 * ```
 *
 * 1. Start from the message exactly as submitted (every member, optional ones included when
 *    present). Remove the single member `identity.signature`. `identity.algorithm` and
 *    `identity.publicKey` stay in, so the signature also binds the key and the algorithm: a
 *    signature cannot be moved onto the same text under another key.
 * 2. Serialise the result with the JSON Canonicalization Scheme, RFC 8785 (JCS):
 *    - object members sorted by their names compared as arrays of UTF-16 code units
 *      (RFC 8785 §3.2.3), at every level;
 *    - no whitespace between tokens (RFC 8785 §3.2.1);
 *    - strings as ECMAScript `JSON.stringify` writes them (RFC 8785 §3.2.2.2): `"` and `\` are
 *      escaped, U+0008, U+0009, U+000A, U+000C and U+000D become `\b`, `\t`, `\n`, `\f`, `\r`, the
 *      other characters below U+0020 become `\u00xx` with lowercase hex, and every other
 *      character, U+007F, U+2028 and non-ASCII included, is written as itself;
 *    - `true`, `false`, `null` as literals; numbers (not used by beacon/0.1) as ECMAScript
 *      Number-to-String (RFC 8785 §3.2.2.3).
 * 3. Prefix the 18 ASCII characters `beacon/0.1 message` and one line feed (U+000A), 19 bytes
 *    in all, and encode the whole string as UTF-8. The prefix is a domain separator: these
 *    bytes can never be confused with the JCS form of another document signed by the same key.
 *
 * Example: the message `{"beacon":"0.1","subject":"Hi","body":"Hello","intent":"other",
 * "sender":{"name":"A"},"identity":{"algorithm":"Ed25519","publicKey":"<43 chars>",
 * "signature":"<86 chars>"}}` is signed as the UTF-8 bytes of
 *
 * ```text
 * beacon/0.1 message
 * {"beacon":"0.1","body":"Hello","identity":{"algorithm":"Ed25519","publicKey":"<43 chars>"},"intent":"other","sender":{"name":"A"},"subject":"Hi"}
 * ```
 *
 * with no line feed after the closing brace.
 *
 * Strings must be well-formed Unicode: RFC 8785 builds on I-JSON, which forbids surrogate code
 * points (RFC 7493 §2.1), and a lone surrogate has no UTF-8 encoding. The message schema already
 * refuses them; `canonicalJson` (`src/json/canonical.ts`) throws on them rather than guess.
 *
 * @module
 */

import { canonicalJson } from "../json/canonical.ts";
import type { BeaconMessage } from "./schema.ts";

/**
 * The domain separation prefix of the signed bytes of a beacon/0.1 message.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { SIGNING_CONTEXT } from "./canonical.ts";
 *
 * assert.equal(SIGNING_CONTEXT, "beacon/0.1 message\n");
 * ```
 */
export const SIGNING_CONTEXT = "beacon/0.1 message\n";

/**
 * The bytes an Ed25519 identity signs for `message`: {@linkcode SIGNING_CONTEXT} followed by
 * the RFC 8785 form of the message without `identity.signature`, encoded as UTF-8 (see the
 * module documentation for the exact rule).
 *
 * Works on messages with or without `identity`; without it the whole message is serialised.
 *
 * @param message A message that passed `checkMessage`.
 * @returns The signed bytes.
 * @throws {TypeError} Only for input that bypassed `checkMessage` and holds non-JSON values.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { canonicalMessageBytes } from "./canonical.ts";
 *
 * const bytes = canonicalMessageBytes({
 *   beacon: "0.1",
 *   subject: "Hi",
 *   body: "Hello",
 *   intent: "other",
 *   sender: { name: "A" },
 * });
 * assert.equal(
 *   new TextDecoder().decode(bytes),
 *   'beacon/0.1 message\n{"beacon":"0.1","body":"Hello","intent":"other","sender":{"name":"A"},"subject":"Hi"}',
 * );
 * ```
 */
export function canonicalMessageBytes(message: BeaconMessage): Uint8Array<ArrayBuffer> {
  let signed: Record<string, unknown> = message;
  if (message.identity !== undefined) {
    const { signature: _signature, ...identityWithoutSignature } = message.identity;
    signed = { ...message, identity: identityWithoutSignature };
  }
  return new TextEncoder().encode(SIGNING_CONTEXT + canonicalJson(signed));
}
