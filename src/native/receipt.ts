/**
 * The native receipt body: `{"receipt": {...}}` with the status URL added. Shared by the native
 * submit response and the A2A task metadata, so both protocols acknowledge in the same terms.
 *
 * @module
 */
import type { Receipt } from "../intake/accept.ts";
import { STATUS_PATH } from "../routes.ts";

/** A receipt as sent: the stored facts plus where to look up the status. */
export interface ReceiptBody {
  readonly receipt: Receipt & { readonly status: string };
}

/** The status URL of a receipt id. */
export function statusUrl(origin: string, id: string): string {
  return origin + STATUS_PATH.replace("{id}", id);
}

/** Builds the receipt body for an origin. */
export function nativeReceipt(receipt: Receipt, origin: string): ReceiptBody {
  return { receipt: { ...receipt, status: statusUrl(origin, receipt.id) } };
}
