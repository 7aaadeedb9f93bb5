/**
 * `review export`: every matching submission with its review history, oldest first, to stdout
 * or `--out FILE`, as NDJSON (one JSON object per line, the exact data) or, with
 * `--format csv`, as CSV for a spreadsheet (RFC 4180, text rendered as `show` renders it).
 *
 * Streaming in constant memory: rows are read in keyset pages (data/queries.ts), with the review
 * events of each page in one query, and each page is written before the next is read. A
 * progress bar is drawn on stderr only when stderr is a terminal, so pipes and files get clean
 * output.
 *
 * Each NDJSON line (members in this order):
 *
 * ```json
 * {"seq":1,"id":"…","contextId":"…","receivedAt":"…","surface":"native","kind":"structured",
 *  "contentType":"application/json","size":123,"digest":"sha256:…","sourceHash":"…",
 *  "identity":{"fingerprint":"sha256:…","verified":true},"idempotencyKey":null,
 *  "status":"reviewed","redaction":null,"history":[{"seq":4,"createdAt":"…",
 *  "status":"reviewed","note":"…","reviewer":"ana","supersedes":null}],
 *  "contentEncoding":"utf-8","content":"…"}
 * ```
 *
 * `content` holds the stored bytes as text when they are well-formed UTF-8
 * (`contentEncoding: "utf-8"`), otherwise as base64 (RFC 4648 §4, `contentEncoding: "base64"`);
 * a redacted submission has `contentEncoding: "redacted"`, `content: null` and its `redaction`
 * record (who, when, why). `identity` is null for unsigned submissions, `status` null when new.
 * The JSON is written so that printing it is harmless: characters the renderer would escape are
 * JSON `\uXXXX` escapes (json_output.ts `safeJson`); parsing gives back the exact content.
 *
 * CSV cells that a spreadsheet would run as a formula (starting with `=`, `+`, `-`, `@`, tab or
 * carriage return, OWASP "CSV Injection") are prefixed with `'`; every cell is quoted, with
 * inner quotes doubled (RFC 4180 §2). Rows end with a line feed rather than RFC 4180's CRLF:
 * no carriage return ever reaches the tool's output (io.ts), and spreadsheets read either. Submitted text in CSV is escaped and defanged as in `show`,
 * so a spreadsheet shows it inert and makes no link of it; use NDJSON for the exact bytes.
 *
 * @module
 */
import { type FileHandle, open } from "node:fs/promises";
import { base64 } from "../../src/signing/mod.ts";
import { decodeUtf8Strict } from "../../src/message/mod.ts";
import { databaseConfig, openForReading, type ReviewDatabase } from "../data/database.ts";
import { CliError, type Context, type Output, Progress, textOutput } from "../io.ts";
import { FILTER_OPTIONS, filtersFrom, type OptionValues } from "./options.ts";
import {
  countSubmissions,
  type Filters,
  PAGE_SIZE,
  rowFacts,
  signerOf,
  submissionPages,
  type SubmissionRow,
} from "../data/queries.ts";
import { type ReviewEvent, reviewHistories } from "../data/events.ts";
import { safeJson, safeText } from "../render/mod.ts";
import { historyLine } from "./show.ts";

/** The options of `export`. */
export const EXPORT_OPTIONS = {
  ...FILTER_OPTIONS,
  out: { type: "string" },
  format: { type: "string" },
} as const;

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
 * per keyset page of rows, with the review events of each page read in one query. The CLI
 * (`review export`) and the console's export both write exactly these chunks.
 *
 * @param database The database and its tables.
 * @param filters The filters.
 * @param format NDJSON or CSV.
 * @returns Chunks of text and how many rows each holds.
 */
export async function* exportChunks(
  database: Pick<ReviewDatabase, "client" | "schema">,
  filters: Filters,
  format: ExportFormat,
): AsyncGenerator<{ text: string; rows: number }> {
  if (format === "csv") yield { text: CSV_COLUMNS.map(csvCell).join(",") + "\n", rows: 0 };
  for await (const page of submissionPages(database.client, database.schema, filters, PAGE_SIZE)) {
    const histories = await reviewHistories(
      database.client,
      database.schema,
      page.map((row) => row.id),
    );
    const history = (row: SubmissionRow) => histories.get(row.id) ?? [];
    const text = page.map((row) =>
      format === "csv"
        ? csvLine(row, history(row))
        : safeJson(exportRecord(row, history(row))) + "\n"
    ).join("");
    yield { text, rows: page.length };
  }
}

/**
 * Runs `export`.
 *
 * @param context Outputs, environment, clock.
 * @param values Parsed options.
 * @returns The exit status.
 */
export async function exportCommand(context: Context, values: OptionValues): Promise<number> {
  const filters = filtersFrom(values, context.now());
  const format = (values.format as string | undefined) ?? "ndjson";
  if (format !== "ndjson" && format !== "csv") {
    throw new CliError("Cannot parse --format: it must be ndjson or csv", 2);
  }
  if (values.out === "") throw new CliError("Cannot parse --out: give the file to write", 2);
  const database = await openForReading(databaseConfig(values.database as string, context.env));
  let file: FileHandle | undefined;
  try {
    const path = values.out as string | undefined;
    let out: Output = context.stdout;
    if (path !== undefined) {
      try {
        // "wx" (O_CREAT | O_EXCL): an export never overwrites a file, which may be an earlier
        // export, and never follows a link planted at that name.
        file = await open(path, "wx");
      } catch (error) {
        const code = (error as { code?: unknown })?.code;
        if (code === "EEXIST") throw new CliError(`Cannot export: ${path} already exists`);
        throw new CliError(`Cannot export: cannot create ${path} (${String(code ?? "error")})`);
      }
      const handle = file;
      out = textOutput({
        write: async (bytes) => (await handle.write(bytes)).bytesWritten,
      });
    }
    const total = context.progress === undefined
      ? 0
      : await countSubmissions(database.client, database.schema, filters);
    const progress = new Progress(context.progress, "export", total);
    let done = 0;
    for await (const chunk of exportChunks(database, filters, format)) {
      await out.write(chunk.text);
      done += chunk.rows;
      await progress.update(done);
    }
    await progress.finish();
    await context.stderr.line(
      `exported ${done} submission${done === 1 ? "" : "s"}` +
        (path === undefined ? "" : ` to ${path}`),
    );
    return 0;
  } finally {
    await file?.close();
    await database.close();
  }
}
