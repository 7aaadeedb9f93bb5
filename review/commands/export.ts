/**
 * `review export`: every matching submission with its review history, oldest first, to stdout
 * or `--out FILE`, as NDJSON (one JSON object per line, the exact data) or, with
 * `--format csv`, as CSV for a spreadsheet (RFC 4180, text rendered as `show` renders it).
 *
 * Streaming in constant memory: rows are read in keyset pages (data/events.ts), with the review
 * events of each page in one query, rendered by render/export.ts, and each page is written before the next is read. A
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
import { databaseConfig, openForReading } from "../data/database.ts";
import { pagesWithHistories } from "../data/events.ts";
import { countSubmissions } from "../data/queries.ts";
import { CliError, type Context, type Output, Progress, textOutput } from "../io.ts";
import { FILTER_OPTIONS, filtersFrom, type OptionValues } from "./options.ts";
import { exportChunks } from "../render/export.ts";

/** The options of `export`. */
export const EXPORT_OPTIONS = {
  ...FILTER_OPTIONS,
  out: { type: "string" },
  format: { type: "string" },
} as const;

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
    for await (const chunk of exportChunks(pagesWithHistories(database, filters), format)) {
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
