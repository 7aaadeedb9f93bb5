/**
 * Signed redaction records. A redaction empties one submission's content (docs/review.md); the
 * record of it (which submission, its digest, when, why, who) is signed by the Beacon's key, so a
 * database writer without the key cannot invent, change or backdate one: `review verify`
 * checks each record against the trusted key (review/commands/verify.ts).
 *
 * Signed bytes: `beacon/0.1 redaction\n` followed by the RFC 8785 form of
 * `{by, createdAt, digest, id, reason}` (src/signing/statement.ts), so the signature can never
 * stand in for a receipt or a checkpoint.
 *
 * @module
 */
import { statementBytes } from "./statement.ts";
import { signBytes, verifyBytes } from "./ed25519.ts";
import type { SigningKey } from "./key.ts";

/** The domain separation prefix of signed redaction records. */
export const REDACTION_CONTEXT = "beacon/0.1 redaction\n";

/** The signed members of a redaction record. */
export interface RedactionFields {
  /** The receipt id of the redacted submission. */
  readonly id: string;
  /** The submission's digest as received (`sha256:<hex>`), binding the record to that row. */
  readonly digest: string;
  /** The legal ground given. */
  readonly reason: string;
  /** Who redacted it. */
  readonly by: string;
  /** ISO 8601 UTC time of the redaction; never before the submission's `receivedAt`. */
  readonly createdAt: string;
}

/**
 * The exact bytes signed for a redaction record.
 *
 * @param record The record.
 * @returns The context prefix and the JCS of the five members.
 * @throws {TypeError} When a member is not a string or holds an unpaired surrogate.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { canonicalRedactionBytes } from "./redaction.ts";
 *
 * const bytes = canonicalRedactionBytes({
 *   id: "a", digest: "sha256:00", reason: "order 1", by: "ana", createdAt: "2026-01-01T00:00:00.000Z",
 * });
 * assert.ok(new TextDecoder().decode(bytes).startsWith('beacon/0.1 redaction\n{"by":"ana",'));
 * ```
 */
export function canonicalRedactionBytes(record: RedactionFields): Uint8Array<ArrayBuffer> {
  const { by, createdAt, digest, id, reason } = record;
  for (const value of [by, createdAt, digest, id, reason]) {
    if (typeof value !== "string") throw new TypeError("Cannot sign redaction: not a string");
  }
  return statementBytes(REDACTION_CONTEXT, { by, createdAt, digest, id, reason });
}

/**
 * Signs a redaction record.
 *
 * @param key The Beacon's signing key.
 * @param record The record.
 * @returns The Ed25519 signature, unpadded base64url.
 */
export async function signRedaction(
  key: Pick<SigningKey, "privateKey">,
  record: RedactionFields,
): Promise<string> {
  return await signBytes(key.privateKey, canonicalRedactionBytes(record));
}

/**
 * Verifies a redaction record's signature strictly (src/signing/ed25519.ts). Never throws.
 *
 * @param publicKey The raw public key, base64url.
 * @param record The record as stored, with the row's id and digest.
 * @param signature The stored signature.
 * @returns Whether it is a valid signature of exactly this record by this key.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { verifyRedaction } from "./redaction.ts";
 *
 * const record = { id: "a", digest: "d", reason: "r", by: "b", createdAt: "t" };
 * assert.equal(await verifyRedaction("AAAA", record, "AAAA"), false);
 * ```
 */
export async function verifyRedaction(
  publicKey: string,
  record: RedactionFields,
  signature: string,
): Promise<boolean> {
  let bytes: Uint8Array<ArrayBuffer>;
  try {
    bytes = canonicalRedactionBytes(record);
  } catch {
    return false;
  }
  return await verifyBytes(publicKey, bytes, signature);
}
