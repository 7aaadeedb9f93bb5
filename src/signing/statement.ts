/**
 * The bytes the Beacon signs as JSON statements: a domain-separation prefix (`beacon/0.1 receipt`,
 * `… receipt batch`, `… checkpoint`, `… redaction`, `… rotation`, each ending in a line feed)
 * followed by the RFC 8785 form of the signed members, as UTF-8. The prefix keeps a signature of
 * one kind from ever verifying as another. (Checkpoint notes are signed as C2SP signed notes
 * instead, note.ts: a note's body cannot start with one of these prefixes, since its first line
 * is the log's origin, which holds no space.)
 *
 * @module
 */
import { canonicalJson } from "../json/canonical.ts";

const encoder = new TextEncoder();

/**
 * UTF-8 of `context` followed by the JCS (RFC 8785) serialisation of `members`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { statementBytes } from "./statement.ts";
 *
 * const bytes = statementBytes("beacon/0.1 receipt batch\n", { size: 2, root: "x" });
 * assert.equal(new TextDecoder().decode(bytes), 'beacon/0.1 receipt batch\n{"root":"x","size":2}');
 * ```
 */
export function statementBytes(
  context: string,
  members: Record<string, unknown>,
): Uint8Array<ArrayBuffer> {
  return encoder.encode(context + canonicalJson(members));
}
