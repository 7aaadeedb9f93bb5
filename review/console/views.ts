/**
 * The console's JSON views of stored rows. Submitted text leaves here only as segments made by
 * the shared renderer (render/mod.ts): the page gets text that is already inert, with each escape
 * marked, and puts it into the document with `textContent`.
 *
 * @module
 */
import { canonicalReceiptBytes, sha256Digest } from "../../src/signing/mod.ts";
import type { ReviewEvent } from "../data/events.ts";
import type { SubmissionRow } from "../data/queries.ts";
import { type ReceiptSignatureReport, signedFieldsOf } from "../data/receipt_signature.ts";
import { interpretContent, messageOf, previewOf, renderContent } from "../render/content.ts";
import { Findings, safeSegments, type Segment } from "../render/mod.ts";
import { readsAs as readsAsWords } from "../search/reads_as.ts";

/** The width text is laid out at: the page wraps it itself. */
const WIDE = 1_000;

type Lines = Segment[][];

function segments(text: string, findings: Findings, newlines: "keep" | "escape" = "escape"): Lines {
  return safeSegments(text, findings, { width: WIDE, newlines });
}

function excerpt(text: string, findings: Findings): Segment[] {
  return segments(text.slice(0, 300), findings)[0] ?? [];
}

/** What the look-alike words of `text` read as (search/reads_as.ts), rendered inertly. */
function readsAs(text: string, findings: Findings): Segment[][] {
  return readsAsWords(text).map((word) => excerpt(word, findings));
}

/**
 * One entry of the queue: the row's facts, and its sender, intent, preview and look-alike words
 * as inert segments.
 *
 * @param row The stored row.
 * @returns The entry, ready for JSON.
 */
export function queueEntryView(row: SubmissionRow): unknown {
  const findings = new Findings();
  const view = interpretContent(row.contentType, row.content);
  const flagged = renderContent(view, WIDE).findings.any;
  const message = messageOf(view);
  return {
    id: row.id,
    seq: row.seq,
    receivedAt: row.receivedAt,
    surface: row.surface,
    kind: row.kind,
    status: row.status ?? "new",
    redacted: row.redaction !== null,
    flagged,
    signer: row.identityFingerprint === null ? "-" : row.identityVerified ? "ok" : "NO",
    sender: message?.sender.name === undefined ? null : excerpt(message.sender.name, findings),
    intent: message?.intent === undefined ? null : excerpt(message.intent, findings),
    preview: row.redaction !== null
      ? [{ text: "(redacted)", kind: "prefix" }]
      : excerpt(previewOf(view), findings),
    readsAs: row.redaction !== null ? [] : readsAs(previewOf(view), findings),
  };
}

/**
 * One submission in full: its receipt fields, redaction, history, content and integrity, every
 * stored text as inert segments, with one warning for all that was escaped.
 *
 * @param row The stored row.
 * @param events Its review events, oldest first.
 * @param report What its stored receipt signature proves.
 * @param publicKey The key that was checked against, if known.
 * @returns The view, ready for JSON.
 */
export function itemView(
  row: SubmissionRow,
  events: readonly ReviewEvent[],
  report: ReceiptSignatureReport,
  publicKey: string | undefined,
): unknown {
  const findings = new Findings();
  const redacted = row.redaction !== null && row.content.length === 0;
  const view = interpretContent(row.contentType, row.content);
  const content = renderContent(view, WIDE);
  findings.addAll(content.findings);
  const field = (label: string, value: string) => ({ label, value: segments(value, findings) });
  return {
    id: row.id,
    status: row.status ?? "new",
    fields: [
      field("receipt", row.id),
      field("received", row.receivedAt),
      field("surface", row.surface),
      field("kind", `${row.kind} (${row.contentType})`),
      field("size", `${row.size} bytes`),
      field("digest", row.digest),
      field("source", row.sourceHash),
      field(
        "signature",
        row.identityFingerprint === null
          ? "unsigned"
          : `${row.identityVerified ? "verified" : "did NOT verify"} at intake, key ` +
            row.identityFingerprint,
      ),
    ],
    redaction: row.redaction === null ? null : {
      createdAt: row.redaction.createdAt,
      by: segments(row.redaction.by, findings),
      reason: segments(row.redaction.reason, findings, "keep"),
    },
    history: events.map((event) => ({
      seq: event.seq,
      number: event.number,
      createdAt: event.createdAt,
      status: event.status,
      supersedes: event.supersedes,
      supersedesNumber: event.supersedesNumber,
      reviewer: event.reviewer === null ? null : segments(event.reviewer, findings),
      note: event.note === null ? null : segments(event.note, findings, "keep"),
    })),
    content: redacted ? [[{ text: "(content redacted)", kind: "prefix" }]] : content.segments,
    readsAs: redacted ? [] : readsAs(new TextDecoder().decode(row.content), new Findings()),
    warning: findings.summary() ?? null,
    integrity: integrityView(row, redacted, report, publicKey),
  };
}

/** What the integrity section shows: the digest's state, the signed bytes and the signature's. */
function integrityView(
  row: SubmissionRow,
  redacted: boolean,
  report: ReceiptSignatureReport,
  publicKey: string | undefined,
): Record<string, unknown> {
  return {
    digest: redacted
      ? "redacted: the digest is that of the content as received"
      : sha256Digest(row.content) === row.digest
      ? "matches the content"
      : "MISMATCH: the content was changed",
    signedBytes: new TextDecoder().decode(canonicalReceiptBytes(signedFieldsOf(row))),
    signature: row.receiptSignature?.signature ?? null,
    batch: row.receiptSignature?.batch ?? null,
    publicKey: publicKey ?? null,
    signatureState: report.state,
    signatureReport: report.text,
    signatureVerifies: report.state === "verifies"
      ? true
      : report.state === "does-not-verify"
      ? false
      : null,
  };
}
