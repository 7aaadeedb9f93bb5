/**
 * One submission in full, as `show`, `next` and `triage` print it: receipt fields, signature,
 * status and history, a warning line when anything was escaped, then the content, every line of
 * which is prefixed (`| `) or labelled, escaped and wrapped by the renderer (mod.ts). The warning
 * line is repeated after the content, where a long body ends.
 *
 * @module
 */
import { sha256Digest } from "../../src/signing/mod.ts";
import type { ReviewEvent } from "../data/events.ts";
import type { IdentityRecheck, SubmissionView } from "../data/submission.ts";
import type { SubmissionRow } from "../data/queries.ts";
import { readsAs } from "../search/reads_as.ts";
import { interpretContent, renderContent } from "./content.ts";
import { Findings, safeBlock } from "./mod.ts";

const RECHECKED: Readonly<Record<IdentityRecheck, string>> = {
  verified: "verified",
  "not-verified": "NOT verified",
  "not-a-message": "the content is no longer a valid message",
  unparsable: "the content no longer parses",
};

function signatureLines(
  row: SubmissionRow,
  identityNow: IdentityRecheck | undefined,
): [string, string][] {
  if (row.identityFingerprint === null) return [["signature", "unsigned"]];
  if (row.redaction !== null) {
    return [
      ["signature", row.identityVerified ? "verified at intake" : "did NOT verify at intake"],
      [
        "signer key",
        row.identityFingerprint,
      ],
    ];
  }
  const lines: [string, string][] = [
    [
      "signature",
      row.identityVerified
        ? "verified at intake: the holder of this key sent it (key continuity, not who or " +
          "what the sender is)"
        : "did NOT verify at intake: the key below is only a claim",
    ],
    ["signer key", row.identityFingerprint],
  ];
  if (identityNow !== undefined) {
    const signed = identityNow === "verified" || identityNow === "not-verified";
    const differs = signed && (identityNow === "verified") !== row.identityVerified;
    lines.push([
      "re-checked now",
      RECHECKED[identityNow] + (differs ? " (differs from the stored result!)" : ""),
    ]);
  }
  return lines;
}

/** The receipt fields, signatures, status and history, one labelled field each. */
function fieldLines(view: SubmissionView, width: number, findings: Findings): string[] {
  const { row } = view;
  const actual = sha256Digest(row.content);
  const lines: string[] = [];
  const field = (label: string, value: string) =>
    lines.push(
      ...safeBlock(value, findings, {
        width,
        indent: label.padEnd(16),
        continuation: " ".repeat(16),
        newlines: "escape",
      }),
    );
  field("receipt", row.id);
  field("received", row.receivedAt);
  field("surface", row.surface);
  field("kind", `${row.kind} (${row.contentType})`);
  field(
    "size",
    `${row.size} bytes` +
      (row.size === row.content.length || row.redaction !== null
        ? ""
        : ` (MISMATCH: ${row.content.length} stored)`),
  );
  field(
    "digest",
    row.digest +
      (row.redaction !== null && row.content.length === 0
        ? " (of the content as received; the content was redacted)"
        : actual === row.digest
        ? " (matches the content)"
        : ` (MISMATCH: content is ${actual})`),
  );
  field("context", row.contextId);
  field("source", `${row.sourceHash} (salted hash of the sending address)`);
  if (row.idempotencyKey !== null) field("idempotency key", row.idempotencyKey);
  for (const [label, text] of signatureLines(row, view.identityNow)) field(label, text);
  field("receipt sig", view.receiptSignature.text);
  field("status", row.status ?? "new (no review event)");
  if (row.redaction !== null) {
    field(
      "REDACTED",
      `${row.redaction.createdAt} by ${row.redaction.by}, reason: ${row.redaction.reason}`,
    );
  }
  view.events.forEach((event, i) => field(i === 0 ? "history" : "", historyLine(event)));
  return lines;
}

/**
 * One submission in full: receipt fields, signature, status and history, then the content,
 * rendered inertly.
 *
 * @param view The submission and what is known about it (data/submission.ts).
 * @param width The output width.
 * @returns The text (already rendered safe).
 */
export function describeSubmission(view: SubmissionView, width: number): string {
  const { row } = view;
  const content = renderContent(interpretContent(row.contentType, row.content), width);
  // Stored columns are our own writing, but a tampered database could hold anything: they go
  // through the same renderer, and their findings count too.
  const findings = new Findings();
  const lines = fieldLines(view, width, findings);
  findings.addAll(content.findings);
  const summary = findings.summary();
  const warning = summary === undefined
    ? []
    : safeBlock(summary, new Findings(), { width, continuation: "         " });
  if (summary !== undefined) lines.push("", ...warning);
  // What look-alike words read as, as the console says it (search/reads_as.ts): the escaped
  // letters in the content show that a word mixes scripts, this says which word it imitates.
  const redacted = row.redaction !== null && row.content.length === 0;
  const words = redacted ? [] : readsAs(new TextDecoder().decode(row.content));
  if (words.length > 0) {
    lines.push(
      ...safeBlock(`reads as: ${words.join(", ")}`, new Findings(), {
        width,
        continuation: "          ",
      }),
    );
  }
  lines.push("", "--- content " + "-".repeat(Math.max(0, width - 13)));
  if (redacted) lines.push("(content redacted: see REDACTED above)");
  else lines.push(...content.lines);
  lines.push("--- end " + "-".repeat(Math.max(0, width - 9)));
  lines.push(...warning);
  return lines.join("\n");
}

/**
 * One review event as a history line, numbered within its submission's history:
 * `#2 2025-06-01T… reviewed by ana: note`.
 *
 * @param event The event.
 * @returns Untrusted text (the note and name); render it.
 */
export function historyLine(event: ReviewEvent): string {
  return `#${event.number} ${event.createdAt} ${event.status ?? "note"}` +
    (event.reviewer === null ? "" : ` by ${event.reviewer}`) +
    (event.supersedesNumber === null ? "" : ` (corrects the note of #${event.supersedesNumber})`) +
    (event.note === null ? "" : `: ${event.note}`);
}
