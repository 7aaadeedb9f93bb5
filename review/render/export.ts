/**
 * An export's records, as `review export` and the console's export write them: NDJSON, one
 * JSON object per line with the exact data, or CSV for a spreadsheet, with formula triggers
 * neutralised and submitted text rendered as `show` renders it (commands/export.ts says why).
 *
 * @module
 */
import { base64 } from "../../src/signing/mod.ts";
import { decodeUtf8Strict } from "../../src/message/mod.ts";
import type { PageWithHistories, ReviewEvent } from "../data/events.ts";
import { rowFacts, signerOf, type SubmissionRow } from "../data/queries.ts";
import { safeJson, safeText } from "./mod.ts";
import { historyLine } from "./submission.ts";

/**
 * The export record of one row.
 *
 * @param row The stored row.
 * @returns A JSON-ready object.
 */
export function exportRecord(
  row: SubmissionRow,
  history: readonly ReviewEvent[] = [],
): Record<string, unknown> {
  const redacted = row.redaction !== null && row.content.length === 0;
  const text = decodeUtf8Strict(row.content);
  return {
    seq: row.seq,
    id: row.id,
    contextId: row.contextId,
    ...rowFacts(row),
    identity: signerOf(row),
    idempotencyKey: row.idempotencyKey,
    status: row.status,
    redaction: row.redaction,
    history: history.map((event) => ({
      seq: event.seq,
      number: event.number,
      createdAt: event.createdAt,
      status: event.status,
      note: event.note,
      reviewer: event.reviewer,
      supersedes: event.supersedes,
    })),
    contentEncoding: redacted ? "redacted" : text === undefined ? "base64" : "utf-8",
    content: redacted ? null : text ?? base64(row.content),
  };
}

const CSV_COLUMNS = [
  "seq",
  "id",
  "receivedAt",
  "surface",
  "kind",
  "contentType",
  "size",
  "digest",
  "sourceHash",
  "signer",
  "signatureVerified",
  "status",
  "history",
  "redaction",
  "content",
] as const;

/**
 * One CSV cell: formula triggers neutralised with a leading `'` (OWASP CSV Injection), quoted,
 * inner quotes doubled (RFC 4180 §2).
 *
 * @param value The cell text.
 * @returns The quoted cell.
 *
 * @example
 * ```ts
 * import { csvCell } from "./export.ts";
 * import { assertStrictEquals } from "../../tests/support/assert.ts";
 * assertStrictEquals(csvCell('=HYPERLINK("x")'), `"'=HYPERLINK(""x"")"`);
 * ```
 */
export function csvCell(value: string): string {
  const neutral = /^[=+\-@\t\r]/.test(value) ? "'" + value : value;
  return `"${neutral.replaceAll('"', '""')}"`;
}

function csvLine(row: SubmissionRow, history: readonly ReviewEvent[]): string {
  const record = exportRecord(row, history);
  // Submitted text (and notes) rendered as `show` does: escaped, defanged, line feeds kept.
  const shown = (text: string) => safeText(text, undefined, { newlines: "keep" });
  const cells: Record<(typeof CSV_COLUMNS)[number], string> = {
    seq: String(row.seq),
    id: row.id,
    receivedAt: row.receivedAt,
    surface: row.surface,
    kind: row.kind,
    contentType: row.contentType,
    size: String(row.size),
    digest: row.digest,
    sourceHash: row.sourceHash,
    signer: row.identityFingerprint ?? "",
    signatureVerified: row.identityFingerprint === null ? "" : String(row.identityVerified),
    status: row.status ?? "new",
    history: history.map((event) => shown(historyLine(event))).join("\n"),
    redaction: row.redaction === null
      ? ""
      : shown(`${row.redaction.createdAt} by ${row.redaction.by}: ${row.redaction.reason}`),
    content: record.contentEncoding === "utf-8"
      ? shown(String(record.content))
      : record.contentEncoding === "redacted"
      ? "(redacted)"
      : `(${row.content.length} bytes, not UTF-8: use the NDJSON export)`,
  };
  return CSV_COLUMNS.map((column) => csvCell(cells[column])).join(",") + "\n";
}

/** The formats of an export. */
export type ExportFormat = "ndjson" | "csv";

/**
 * An export's text in chunks, in constant memory: for CSV the header line first, then one chunk
 * per keyset page of rows (data/events.ts `pagesWithHistories`). The CLI (`review export`) and
 * the console's export both write exactly these chunks.
 *
 * @param pages The rows, a page at a time, with their review events.
 * @param format NDJSON or CSV.
 * @returns Chunks of text and how many rows each holds.
 */
export async function* exportChunks(
  pages: AsyncIterable<PageWithHistories>,
  format: ExportFormat,
): AsyncGenerator<{ text: string; rows: number }> {
  if (format === "csv") yield { text: CSV_COLUMNS.map(csvCell).join(",") + "\n", rows: 0 };
  for await (const { rows, histories } of pages) {
    const history = (row: SubmissionRow) => histories.get(row.id) ?? [];
    const text = rows.map((row) =>
      format === "csv"
        ? csvLine(row, history(row))
        : safeJson(exportRecord(row, history(row))) + "\n"
    ).join("");
    yield { text, rows: rows.length };
  }
}
