/**
 * The log's origin: the first line of every checkpoint and the name of its note key
 * (c2sp.org/tlog-checkpoint: "the origin line SHOULD be the schema-less URL of the log
 * prefix"). It is fixed for the life of the log: the first signer records it
 * (`LogRows.origin`), and every later start reads it back, whatever its own configuration says.
 *
 * @module
 */
import { LOG_PATH } from "../routes.ts";

/**
 * The origin a new log takes: the host and path of the public URL's log prefix
 * (`beacon.example/beacon/0.1/log`), or, without a public URL, a name under the reserved
 * `.invalid` top-level domain (RFC 2606) with 64 random bits, unique to this log, that says it
 * names no reachable address.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { newLogOrigin } from "./origin.ts";
 *
 * assert.equal(newLogOrigin("https://beacon.example", () => new Uint8Array(8)), "beacon.example/beacon/0.1/log");
 * assert.equal(newLogOrigin("https://x.example/in", () => new Uint8Array(8)), "x.example/in/beacon/0.1/log");
 * assert.equal(newLogOrigin(undefined, () => new Uint8Array(8).fill(171)), "abababababababab.beacon.invalid/beacon/0.1/log");
 * ```
 */
export function newLogOrigin(
  publicOrigin: string | undefined,
  randomBytes: (length: number) => Uint8Array,
): string {
  if (publicOrigin !== undefined) {
    const url = new URL(publicOrigin);
    return url.host + url.pathname.replace(/\/+$/, "") + LOG_PATH;
  }
  const tag = Array.from(randomBytes(8), (byte) => byte.toString(16).padStart(2, "0")).join("");
  return `${tag}.beacon.invalid${LOG_PATH}`;
}
