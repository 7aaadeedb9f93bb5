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

const [STATUS_BEFORE_ID, STATUS_AFTER_ID] = STATUS_PATH.split("{id}");

/** The status URL of a receipt id. */
export function statusUrl(origin: string, id: string): string {
  return origin + STATUS_BEFORE_ID + id + STATUS_AFTER_ID;
}

/**
 * Builds the receipt body for an origin: the receipt's members in their order, then `status`.
 * One literal of one shape rather than a spread of the receipt (every response builds one); an
 * absent optional member is `undefined`, which JSON leaves out.
 */
export function nativeReceipt(receipt: Receipt, origin: string): ReceiptBody {
  const { id, receivedAt, surface, kind, size, digest, identity, signature, batch } = receipt;
  const status = statusUrl(origin, id);
  return {
    receipt: { id, receivedAt, surface, kind, size, digest, identity, signature, batch, status },
  };
}
