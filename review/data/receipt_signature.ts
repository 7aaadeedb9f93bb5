/**
 * What a row's stored receipt signature proves, as `show` and the console report it.
 * The signature is the one the intake made and stored with the row (migration 9,
 * `receipt_signatures`); it is checked against the published key with the algorithms of
 * docs/protocol-0.1.md §6.3-6.4, exactly as a submitter's verifier would. No review tool signs a
 * receipt: a signature made now, by whoever holds the key, would vouch for any row a database
 * writer inserted.
 *
 * @module
 */
import {
  fromBase64url,
  intakeSignaturesFrom,
  receiptLeafHash,
  type SignedReceiptFields,
  verifyReceipt,
} from "../../src/signing/mod.ts";
import { keyFingerprint } from "../../src/message/mod.ts";
import { INTAKE_SIGNATURES_FROM, SHADOWED_BATCHES } from "../../src/store/mod.ts";
import type { ReviewDatabase } from "./database.ts";
import type { SubmissionRow } from "./queries.ts";

/** The verdict on a row's stored receipt signature. */
export type ReceiptSignatureState = "verifies" | "does-not-verify" | "none" | "no-key";

/** The verdict and the one line that says it. */
export interface ReceiptSignatureReport {
  readonly state: ReceiptSignatureState;
  /** For people: what the stored signature proves. */
  readonly text: string;
}

/** The five members of a row's receipt that its signature covers (protocol §6.1). */
export function signedFieldsOf(row: SubmissionRow): SignedReceiptFields {
  return {
    id: row.id,
    receivedAt: row.receivedAt,
    digest: row.digest,
    size: row.size,
    kind: row.kind,
  };
}

/** The line for a row without a stored signature. */
export const NO_INTAKE_SIGNATURE =
  "no intake signature stored (a row written before this version, or not written through the " +
  "Beacon)";

/**
 * Checks `row`'s stored receipt signature against `publicKey`.
 *
 * @param row The submission, with its stored signature.
 * @param publicKey The published key (raw Ed25519, base64url), if known.
 * @returns The verdict and its line.
 */
export async function receiptSignatureReport(
  row: SubmissionRow,
  publicKey: string | undefined,
): Promise<ReceiptSignatureReport> {
  const stored = row.receiptSignature;
  if (stored === null) return { state: "none", text: NO_INTAKE_SIGNATURE };
  const form = stored.batch === undefined
    ? "single form"
    : `batch of ${stored.batch.size}, index ${stored.batch.index}`;
  const raw = publicKey === undefined ? undefined : fromBase64url(publicKey);
  if (publicKey === undefined || raw === undefined || raw.length !== 32) {
    return {
      state: "no-key",
      text: `signed at intake (${form}); not checked: no published key is known`,
    };
  }
  const fingerprint = await keyFingerprint(new Uint8Array(raw));
  return await verifyReceipt(publicKey, signedFieldsOf(row), stored.signature, stored.batch)
    ? {
      state: "verifies",
      text: `signed at intake (${form}); verifies against the published key ${fingerprint}`,
    }
    : {
      state: "does-not-verify",
      text: `stored signature (${form}) does NOT verify against the published key ${fingerprint}`,
    };
}

/**
 * The first `seq` that must carry a verifying intake signature (src/signing/log_audit.ts), as the
 * server reads it; `Infinity` for a store older than version 9.
 */
export async function intakeSignaturesStart(database: ReviewDatabase): Promise<number> {
  if (!database.schema.receiptSignatures) return Infinity;
  // A store the server has not upgraded yet reads as it was written: no record before version
  // 10, no batch rows before version 11.
  const row = (await database.client.execute(
    database.schema.receiptBatches
      ? INTAKE_SIGNATURES_FROM
      : `SELECT ${
        database.schema.logSettings
          ? "(SELECT value FROM log_settings WHERE name = 'intake_signatures_from')"
          : "NULL"
      } AS recorded, (SELECT MIN(seq) FROM receipt_signatures) AS first_signed`,
  )).rows[0];
  return intakeSignaturesFrom(row?.recorded, row?.first_signed);
}

/**
 * A batch row whose range names `seq`s that now read a later batch row (`SHADOWED_BATCHES`,
 * src/store/rows.ts): the rows from `takenFrom` to `lastSeq` are checked against their own batch,
 * never against this one.
 */
export interface ShadowedBatch {
  /** Its `seq` in `receipt_batches`. */
  readonly seq: number;
  readonly firstSeq: number;
  readonly lastSeq: number;
  /** The first `seq` of its range that a later batch row starts at. */
  readonly takenFrom: number;
  /** The receipts' leaf hashes it signed, 32 bytes each. */
  readonly leaves: Uint8Array;
}

/** The store's {@linkcode ShadowedBatch}es, by `first_seq`; none before schema version 11. */
export async function shadowedBatches(database: ReviewDatabase): Promise<ShadowedBatch[]> {
  if (!database.schema.receiptBatches) return [];
  const rows = (await database.client.execute(SHADOWED_BATCHES)).rows;
  return rows.map((row) => ({
    seq: Number(row.seq),
    firstSeq: Number(row.first_seq),
    lastSeq: Number(row.last_seq),
    takenFrom: Number(row.taken_from),
    leaves: bytesOf(row.leaves as unknown),
  }));
}

function bytesOf(value: unknown): Uint8Array {
  if (value instanceof Uint8Array) return value;
  if (value instanceof ArrayBuffer) return new Uint8Array(value);
  return new Uint8Array(0);
}

/** Whether `batch` signed the receipt `row` reads as now: its leaf is among the batch's leaves. */
export function batchSigned(batch: ShadowedBatch, row: SubmissionRow): boolean {
  let leaf: Uint8Array;
  try {
    leaf = receiptLeafHash(signedFieldsOf(row));
  } catch {
    return false; // a member with no JCS form was never signed
  }
  for (let at = 0; at + 32 <= batch.leaves.length; at += 32) {
    if (leaf.every((byte, i) => byte === batch.leaves[at + i])) return true;
  }
  return false;
}
