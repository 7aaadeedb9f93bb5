/**
 * `review list` as text: one line per submission, cut to the width and never wrapped, under a
 * header repeated every page, with a footer counting the lines that hold escaped characters; or
 * as JSON items. Every stored value goes through the renderer (mod.ts).
 *
 * @module
 */
import { rowFacts, signerOf, type SubmissionRow } from "../data/queries.ts";
import { interpretContent, messageOf, previewOf, renderContent } from "./content.ts";
import { displayWidth, Findings, safeBlock, safeExcerpt, safeText } from "./mod.ts";

/** Characters of the receipt id shown: 8 of time and 4 random (24 bits), see data/ids.ts. */
export const SHORT_ID = 12;

/**
 * A byte count in few columns: `512B`, `1.5K`, `64.0K`, `1.2M` (at most 5 columns below 1000 MiB).
 *
 * @param bytes The count.
 * @returns The short text.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { shortSize } from "./list.ts";
 *
 * assert.equal(shortSize(1536), "1.5K");
 * ```
 */
export function shortSize(bytes: number): string {
  if (bytes < 1024) return `${bytes}B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)}K`;
  return `${(bytes / 1024 / 1024).toFixed(1)}M`;
}

/**
 * The type column: surface (`nat` native, `a2a`) and kind (`msg` structured, `text`
 * unstructured), e.g. `nat/msg`.
 *
 * @param surface The stored surface.
 * @param kind The stored kind.
 * @returns At most 8 characters.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { typeColumn } from "./list.ts";
 *
 * assert.equal(typeColumn("a2a", "unstructured"), "a2a/text");
 * ```
 */
export function typeColumn(surface: string, kind: string): string {
  const from = surface === "native" ? "nat" : surface === "a2a" ? "a2a" : "?";
  return from + "/" + (kind === "structured" ? "msg" : kind === "unstructured" ? "text" : "?");
}

/** The optional columns. */
export type Extra = "sender" | "intent";
const EXTRA_WIDTH = 10;

function header(extras: readonly Extra[]): string {
  return [
    "RECEIPT".padEnd(SHORT_ID),
    "RECEIVED UTC",
    // The optional columns take the place of TYPE and SIZE, so the subject keeps some room.
    ...(extras.length === 0 ? ["TYPE".padEnd(8), "SIZE".padEnd(5)] : []),
    "SIG",
    "STATUS".padEnd(9),
    " ",
    ...extras.map((extra) => extra.toUpperCase().padEnd(EXTRA_WIDTH)),
    "SUBJECT OR FIRST WORDS",
  ].join(" ");
}

function cell(text: string | undefined, width: number, findings: Findings): string {
  const shown = safeExcerpt(text ?? "-", width, findings);
  return shown + " ".repeat(Math.max(0, width - displayWidth(shown)));
}

function line(row: SubmissionRow, width: number, extras: readonly Extra[], findings: Findings) {
  const view = interpretContent(row.contentType, row.content);
  const rendered = renderContent(view, 100);
  findings.addAll(rendered.findings);
  const message = messageOf(view);
  const signer = row.identityFingerprint === null ? "-" : row.identityVerified ? "ok" : "NO";
  const columns = [
    safeText(row.id.slice(0, SHORT_ID)).padEnd(SHORT_ID),
    safeText(row.receivedAt.slice(5, 16).replace("T", " ")).padEnd(12),
    ...(extras.length === 0
      ? [typeColumn(row.surface, row.kind).padEnd(8), shortSize(row.size).padEnd(5)]
      : []),
    signer.padEnd(3),
    (row.status ?? "new").padEnd(9),
    row.redaction !== null ? "R" : rendered.findings.any ? "!" : " ",
    ...extras.map((extra) =>
      cell(extra === "sender" ? message?.sender.name : message?.intent, EXTRA_WIDTH, findings)
    ),
  ].join(" ");
  const room = width - displayWidth(columns) - 1;
  const preview = row.redaction !== null ? "(redacted)" : previewOf(view);
  return room < 2 ? columns.slice(0, width) : columns + " " + safeExcerpt(preview, room);
}

/**
 * One submission as `list --json` gives it.
 *
 * @param row The stored row.
 * @param width The width the escapes are counted at.
 * @returns A JSON-ready object (its text still to go through `safeJson`).
 */
export function listItem(row: SubmissionRow, width: number): Record<string, unknown> {
  const view = interpretContent(row.contentType, row.content);
  const message = messageOf(view);
  return {
    seq: row.seq,
    id: row.id,
    ...rowFacts(row),
    signer: signerOf(row),
    status: row.status,
    sender: message?.sender.name ?? null,
    intent: message?.intent ?? null,
    redacted: row.redaction !== null,
    preview: row.redaction !== null ? "" : previewOf(view),
    escaped: renderContent(view, width).findings.toJSON(),
  };
}

/**
 * The rows as a table: a header every `pageLines` lines, and a footer when any line holds
 * characters shown escaped.
 *
 * @param rows The submissions.
 * @param width The output width.
 * @param extras The optional columns.
 * @param pageLines Lines between headers.
 * @returns The table's text and the footer, if any (both already safe).
 */
export function listTable(
  rows: readonly SubmissionRow[],
  width: number,
  extras: readonly Extra[],
  pageLines: number,
): { lines: string; footer?: string } {
  const findings = new Findings();
  const lines: string[] = [];
  let flagged = 0;
  rows.forEach((row, i) => {
    if (i % pageLines === 0) lines.push(header(extras).slice(0, width).trimEnd());
    const before = new Findings();
    lines.push(line(row, width, extras, before));
    if (before.any) flagged++;
    findings.addAll(before);
  });
  if (flagged === 0) return { lines: lines.join("\n") };
  const summary = findings.summary()?.replace("warning: ", "");
  const footer = `! ${flagged} of ${rows.length} submissions: ${summary}`;
  return {
    lines: lines.join("\n"),
    footer: safeBlock(footer, new Findings(), { width, continuation: "  " }).join("\n"),
  };
}
