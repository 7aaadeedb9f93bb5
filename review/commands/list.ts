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
 * every `--page N` lines (default 20). Everything from the submission is rendered by render/mod.ts,
 * laid out in columns by render/list.ts.
 *
 * @module
 */
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
import { findSubmission, submissionPage } from "../data/queries.ts";
import { safeJson, safeText } from "../render/mod.ts";
import { type Extra, listItem, listTable, SHORT_ID } from "../render/list.ts";
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
      await context.stdout.line(safeJson(rows.map((row) => listItem(row, width)), 2));
      return 0;
    }
    if (rows.length === 0) {
      await context.stdout.line("no submissions match");
      return 0;
    }
    const table = listTable(rows, width, extras, pageLines);
    await context.stdout.line(table.lines);
    if (table.footer !== undefined) await context.stdout.line(table.footer);
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
