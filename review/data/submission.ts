/**
 * One submission with everything `show`, `next` and `triage` print beside it: its review
 * history, what its stored receipt signature proves (receipt_signature.ts), and, for a signed
 * native message, whether the sender's signature still verifies over the bytes stored now, so a
 * row changed after intake shows.
 *
 * @module
 */
import { checkIdentity, checkMessage } from "../../src/message/mod.ts";
import type { ReviewDatabase } from "./database.ts";
import { type ReviewEvent, reviewEvents } from "./events.ts";
import type { SubmissionRow } from "./queries.ts";
import { type ReceiptSignatureReport, receiptSignatureReport } from "./receipt_signature.ts";

/** The sender's signature checked again over the stored bytes. */
export type IdentityRecheck = "verified" | "not-verified" | "not-a-message" | "unparsable";

/** A submission and what is known about it. */
export interface SubmissionView {
  readonly row: SubmissionRow;
  /** Its review events, oldest first. */
  readonly events: readonly ReviewEvent[];
  /** What its stored receipt signature proves under the published key. */
  readonly receiptSignature: ReceiptSignatureReport;
  /** The sender's signature checked again, for a signed native message not redacted. */
  readonly identityNow: IdentityRecheck | undefined;
}

async function recheckIdentity(row: SubmissionRow): Promise<IdentityRecheck | undefined> {
  if (row.identityFingerprint === null || row.redaction !== null) return undefined;
  if (row.surface !== "native" || row.kind !== "structured") return undefined;
  try {
    const checked = checkMessage(JSON.parse(new TextDecoder().decode(row.content)));
    if (!checked.ok) return "not-a-message";
    const identity = await checkIdentity(checked.message);
    return identity?.verified === true ? "verified" : "not-verified";
  } catch {
    return "unparsable";
  }
}

/**
 * A submission with its history and both signature checks.
 *
 * @param database The open database.
 * @param row The submission.
 * @param publicKey The published key its stored receipt signature is checked against.
 * @returns What `show` prints about it.
 */
export async function submissionView(
  database: Pick<ReviewDatabase, "client" | "schema">,
  row: SubmissionRow,
  publicKey: string | undefined,
): Promise<SubmissionView> {
  return {
    row,
    events: await reviewEvents(database.client, database.schema, row.id),
    receiptSignature: await receiptSignatureReport(row, publicKey),
    identityNow: await recheckIdentity(row),
  };
}
