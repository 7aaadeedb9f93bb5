/**
 * `review list`: the newest submissions, one line each, for triage, in pages
 * (`--limit N`, `--after ID` continues after the last id shown).
 *
 * Columns: the first 12 characters of the receipt id (any unique prefix is accepted wherever an
 * id is), time received (UTC, `MM-DD HH:MM`), type (surface `nat` native or `a2a`, and kind
 * `msg` structured or `text` unstructured: `nat/msg`), size, signature (`ok` verified at intake,
 * `NO` did not, `-` unsigned), latest review status (`new` when unreviewed), a `!` when the
 * content holds characters shown escaped (`R` when it was redacted), optionally the sender's
 * name and intent instead of type and size (`--columns sender,intent`), and the subject or first
 * words. Every line is cut to the width
 * (80 columns when the output is not a terminal), never wrapped, and the header is repeated
 * every `--page N` lines (default 20). Everything from the submission is rendered by render/mod.ts.
 *
 * @module
 */
import { interpretContent, type MessageView, previewOf, renderContent } from "../render/content.ts";
import { databaseConfig, openForReading } from "../data/database.ts";
import { resolveId } from "../data/ids.ts";
import { CliError, type Context } from "../io.ts";
import {
  FILTER_OPTIONS,
  filtersFrom,
  integerOption,
  type OptionValues,
  widthFrom,
} from "./options.ts";
import {
  findSubmission,
  rowFacts,
  signerOf,
  submissionPage,
  type SubmissionRow,
} from "../data/queries.ts";
import {
  displayWidth,
  Findings,
  safeBlock,
  safeExcerpt,
  safeJson,
  safeText,
} from "../render/mod.ts";
import { readingSearchCondition } from "../search/search.ts";

/** The options of `list`. */
export const LIST_OPTIONS = {
  ...FILTER_OPTIONS,
  limit: { type: "string" },
  after: { type: "string" },
  page: { type: "string" },
  columns: { type: "string" },
  search: { type: "string" },
  json: { type: "boolean" },
} as const;

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
type Extra = "sender" | "intent";
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

function messageOf(view: ReturnType<typeof interpretContent>): MessageView | undefined {
  if (view.form === "message") return view.message;
  if (view.form === "a2a") {
    for (const part of view.parts) if (part.type === "message") return part.message;
  }
  return undefined;
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

function extrasFrom(values: OptionValues): Extra[] {
  const text = values.columns as string | undefined;
  if (text === undefined) return [];
  const names = text.split(",").map((name) => name.trim());
  for (const name of names) {
    if (name !== "sender" && name !== "intent") {
      throw new CliError("Cannot parse --columns: give sender, intent or sender,intent", 2);
    }
  }
  return [...new Set(names)] as Extra[];
}

/** C0, DEL and C1: refused in a search, as the console refuses them (console/api.ts). */
// deno-lint-ignore no-control-regex
const CONTROL_CHARACTERS = /[\u0000-\u001F\u007F-\u009F]/;

/**
 * Runs `list`.
 *
 * @param context Outputs, environment, clock.
 * @param values Parsed options.
 * @returns The exit status.
 */
export async function listCommand(context: Context, values: OptionValues): Promise<number> {
  let filters = filtersFrom(values, context.now());
  const search = values.search as string | undefined;
  if (
    search !== undefined &&
    (search.trim() === "" || search.length > 200 || CONTROL_CHARACTERS.test(search) ||
      !search.isWellFormed())
  ) {
    throw new CliError("Cannot parse --search: give 1 to 200 characters, no control characters", 2);
  }
  const limit = integerOption(values, "limit", 50, 100_000);
  const pageLines = integerOption(values, "page", 20, 100_000);
  const extras = extrasFrom(values);
  const width = values.width === undefined && context.terminalColumns === undefined
    ? 80
    : widthFrom(values, context.terminalColumns);
  const database = await openForReading(databaseConfig(values.database as string, context.env));
  try {
    if (search !== undefined) {
      filters = {
        ...filters,
        searchSql: await readingSearchCondition(database.client, search.trim()),
      };
    }
    let before = 0;
    if (values.after !== undefined) {
      const id = await resolveId(database.client, String(values.after), "list");
      before = (await findSubmission(database.client, database.schema, id))!.seq;
    }
    const rows = await submissionPage(database.client, database.schema, filters, {
      before,
      limit,
    });
    if (values.json === true) {
      const items = rows.map((row) => {
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
      });
      await context.stdout.line(safeJson(items, 2));
      return 0;
    }
    if (rows.length === 0) {
      await context.stdout.line("no submissions match");
      return 0;
    }
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
    await context.stdout.line(lines.join("\n"));
    if (flagged > 0) {
      const summary = findings.summary()?.replace("warning: ", "");
      const footer = `! ${flagged} of ${rows.length} submissions: ${summary}`;
      await context.stdout.line(
        safeBlock(footer, new Findings(), { width, continuation: "  " }).join("\n"),
      );
    }
    if (rows.length === limit) {
      await context.stdout.line(
        `more: ${context.program} list --after ${
          safeText(rows[rows.length - 1].id.slice(0, SHORT_ID))
        }`,
      );
    }
    return 0;
  } finally {
    await database.close();
  }
}
