/**
 * The message's public face for the Beacon's own tools (the reviewer's package in `review/`):
 * the one schema check and the one identity check the intake runs, so a reviewer sees a stored
 * message judged exactly as it was judged on arrival, and the strict UTF-8 and JSON helpers they
 * rest on.
 *
 * @example Check a message as the intake does
 * ```ts
 * import assert from "node:assert/strict";
 * import { checkMessage } from "./mod.ts";
 *
 * assert.equal(checkMessage({ beacon: "0.1", body: "hello" }).ok, false);
 * ```
 *
 * @module
 */
export { checkIdentity, type IdentityCheck } from "./identity.ts";
export { keyFingerprint } from "../signing/ed25519.ts";
export { type BeaconMessage, checkMessage, type MessageCheck } from "./schema.ts";
export { decodeUtf8Strict } from "../json/utf8.ts";
export { parseStrictJson } from "../json/strict_json.ts";
export { isJsonObject, type JsonObject, type JsonValue } from "../json/value.ts";
