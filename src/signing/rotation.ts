/**
 * Key rotation statements: the signed record that the log's signing key changed, and up to which
 * row the previous key vouches (docs/keys.md, "Rotating the key"; protocol §6.5).
 *
 * ## Signed bytes
 *
 * ```text
 * signed bytes = UTF-8( "beacon/0.1 rotation" LF || JCS({createdAt, lastSeq, log, newKey, previousKey}) )
 * ```
 *
 * - `previousKey`, `newKey`: raw Ed25519 public keys, unpadded base64url;
 * - `lastSeq`: the last submission `seq` whose intake signature the previous key vouches for (the
 *   boundary); rows after it are vouched for by the new key only;
 * - `log`: the log's origin (every checkpoint's first line), so a statement of one log is never
 *   one of another;
 * - `createdAt`: ISO 8601 UTC time it was made.
 *
 * The new key always signs it (the key that continues the log says where it took over); the
 * previous key signs it too when its holder still has it, which lets a verifier that pinned only
 * the previous key follow the rotation (`review verify --trust <previous key>`). The prefix, as
 * for receipts and checkpoints (./statement.ts), keeps a rotation signature from ever verifying
 * as another kind.
 *
 * @module
 */
import { signBytes, verifyBytes } from "./ed25519.ts";
import type { SigningKey } from "./key.ts";
import { statementBytes } from "./statement.ts";

/** The domain separation prefix of signed rotation bytes. */
export const ROTATION_CONTEXT = "beacon/0.1 rotation\n";

/** The signed members of a rotation statement. */
export interface RotationFields {
  readonly previousKey: string;
  readonly newKey: string;
  /** The last `seq` the previous key vouches for. */
  readonly lastSeq: number;
  /** The log's origin. */
  readonly log: string;
  readonly createdAt: string;
}

/** A rotation statement with its signatures, as recorded in `key_rotations` (migration 14). */
export interface RotationStatement extends RotationFields {
  /** By the new key, unpadded base64url. */
  readonly newSignature: string;
  /** By the previous key, when its seed was given; undefined otherwise. */
  readonly previousSignature?: string;
}

/** The bytes both keys sign. */
export function canonicalRotationBytes(fields: RotationFields): Uint8Array<ArrayBuffer> {
  return statementBytes(ROTATION_CONTEXT, {
    createdAt: fields.createdAt,
    lastSeq: fields.lastSeq,
    log: fields.log,
    newKey: fields.newKey,
    previousKey: fields.previousKey,
  });
}

/**
 * Signs a rotation statement with the new key, and with the previous key when given.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { signingKeyFromSeed } from "./key.ts";
 * import { signRotation, verifyRotation } from "./rotation.ts";
 *
 * const old = await signingKeyFromSeed(new Uint8Array(32).fill(1));
 * const next = await signingKeyFromSeed(new Uint8Array(32).fill(2));
 * const fields = {
 *   previousKey: old.publicKey,
 *   newKey: next.publicKey,
 *   lastSeq: 5,
 *   log: "beacon.example/log",
 *   createdAt: "2026-01-01T00:00:00.000Z",
 * };
 * const statement = await signRotation(fields, next, old);
 * assert.deepEqual(await verifyRotation(statement), { valid: true, byPrevious: true });
 * assert.equal((await verifyRotation({ ...statement, lastSeq: 6 })).valid, false);
 * ```
 */
export async function signRotation(
  fields: RotationFields,
  newKey: Pick<SigningKey, "privateKey" | "publicKey">,
  previousKey?: Pick<SigningKey, "privateKey" | "publicKey">,
): Promise<RotationStatement> {
  if (newKey.publicKey !== fields.newKey || previousKey?.publicKey === fields.newKey) {
    throw new TypeError("Cannot sign a rotation: the keys do not match its fields");
  }
  if (previousKey !== undefined && previousKey.publicKey !== fields.previousKey) {
    throw new TypeError("Cannot sign a rotation: the previous key does not match its fields");
  }
  const bytes = canonicalRotationBytes(fields);
  return {
    ...fields,
    newSignature: await signBytes(newKey.privateKey, bytes),
    ...(previousKey === undefined
      ? {}
      : { previousSignature: await signBytes(previousKey.privateKey, bytes) }),
  };
}

/**
 * Whether a statement holds: the new key's signature verifies, and the previous key's does too
 * when there is one (a signature that is there but does not verify makes the whole statement
 * invalid: it was altered). `byPrevious` says whether the previous key signed it. Never throws.
 */
export async function verifyRotation(
  statement: RotationStatement,
): Promise<{ valid: boolean; byPrevious: boolean }> {
  const invalid = { valid: false, byPrevious: false };
  if (
    !Number.isSafeInteger(statement.lastSeq) || statement.lastSeq < 0 ||
    statement.previousKey === statement.newKey
  ) return invalid;
  let bytes: Uint8Array<ArrayBuffer>;
  try {
    bytes = canonicalRotationBytes(statement);
  } catch {
    return invalid;
  }
  if (!await verifyBytes(statement.newKey, bytes, statement.newSignature)) return invalid;
  if (statement.previousSignature === undefined) return { valid: true, byPrevious: false };
  if (!await verifyBytes(statement.previousKey, bytes, statement.previousSignature)) {
    return invalid;
  }
  return { valid: true, byPrevious: true };
}

/**
 * A row of `key_rotations` (selected with `ROTATION_COLUMNS`, src/store/log_rows.ts) as a
 * statement.
 */
export function rotationFromRow(row: Record<string, unknown>): RotationStatement {
  return {
    previousKey: String(row.previous_key),
    newKey: String(row.new_key),
    lastSeq: Number(row.last_seq),
    log: String(row.log),
    createdAt: String(row.created_at),
    newSignature: String(row.new_signature),
    ...(row.previous_signature === null || row.previous_signature === undefined
      ? {}
      : { previousSignature: String(row.previous_signature) }),
  };
}
