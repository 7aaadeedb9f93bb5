/**
 * A row as `SubmissionStore.append` would hand it to a connection, for the store tests that
 * commit rows directly: an unstructured native submission whose content is its id.
 *
 * @module
 */
import { type ReceiptSignature, receiptSignatureOf } from "../../src/signing/receipt.ts";
import {
  type NewSubmission,
  signatureColumns,
  signatureJoin,
  type SignedFields,
  storedSignatureOf,
} from "../../src/store/rows.ts";

/** A submission `id`; `overrides` replace any field (the idempotency key, the source hash, …). */
export function newSubmission(id: string, overrides: Partial<NewSubmission> = {}): NewSubmission {
  return {
    id,
    contextId: "ctx-" + id,
    receivedAt: new Date(0).toISOString(),
    surface: "native",
    kind: "unstructured",
    contentType: "text/plain; charset=utf-8",
    content: new TextEncoder().encode(id),
    digest: "sha256:00",
    sourceHash: "source",
    ...overrides,
  };
}

/**
 * Every row's stored receipt signature by receipt id, from either stored form, as the receipt
 * carried it and as the server and the review tools read it (`storedSignatureOf`, then signing's
 * `receiptSignatureOf`); rows without one are absent.
 */
export async function storedSignatures(
  read: (sql: string) => Promise<readonly Record<string, unknown>[]>,
): Promise<Map<string, { fields: SignedFields; stored: ReceiptSignature }>> {
  const rows = await read(
    `SELECT s.id, s.received_at, s.digest, s.size, s.kind, ${signatureColumns("s")} ` +
      `FROM submissions s ${signatureJoin("s")} ORDER BY s.seq`,
  );
  const found = new Map<string, { fields: SignedFields; stored: ReceiptSignature }>();
  for (const row of rows) {
    const fields = {
      id: String(row.id),
      receivedAt: String(row.received_at),
      digest: String(row.digest),
      size: Number(row.size),
      kind: row.kind as SignedFields["kind"],
    };
    const stored = receiptSignatureOf(fields, storedSignatureOf(row));
    if (stored === undefined) continue;
    found.set(fields.id, { fields, stored });
  }
  return found;
}
