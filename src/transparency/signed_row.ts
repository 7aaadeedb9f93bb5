/**
 * A submission row read with its stored intake signature (`LogRows.signedRows`,
 * src/store/log_rows.ts) as signing checks it: the store keeps a batch's signature as the batch
 * row holds it, and signing rebuilds the receipt's own signature from that.
 *
 * @module
 */
import type { SignedRow } from "../signing/key_history.ts";
import { receiptSignatureOf } from "../signing/receipt.ts";
import { signedFieldsOf, storedSignatureOf } from "../store/rows.ts";

/** The row's `seq`, its five signed members as it reads now, and its receipt's signature. */
export function signedRowOf(row: Record<string, unknown>): SignedRow {
  const fields = signedFieldsOf(row);
  return {
    seq: Number(row.seq),
    fields,
    stored: receiptSignatureOf(fields, storedSignatureOf(row)),
  };
}
