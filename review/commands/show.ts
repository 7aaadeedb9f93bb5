/**
 * `review show <id>`: one submission in full. The receipt fields first (what the Beacon
 * recorded), then the signature result, the review history, a warning line when anything was
 * escaped, and the content, every line of which is prefixed (`| `) or labelled, escaped and
 * wrapped by render/mod.ts (render/submission.ts lays it out). The warning line is repeated after
 * the content, where a long body ends.
 *
 * The digest is recomputed from the stored bytes and compared, and for a native structured
 * message the sender's signature is checked again (data/submission.ts), so a row changed after
 * intake shows here too (see also `verify`). The receipt signature the intake stored with the row
 * is checked against the published key (data/receipt_signature.ts); nothing is signed here.
 *
 * @module
 */
import { databaseConfig, openForReading } from "../data/database.ts";
import { resolveId } from "../data/ids.ts";
import { publishedKey } from "../data/keys.ts";
import { countSubmissions, findSubmission, queuePage } from "../data/queries.ts";
import { submissionView } from "../data/submission.ts";
import { CliError, type Context } from "../io.ts";
import { FILTER_OPTIONS, filtersFrom, type OptionValues, widthFrom } from "./options.ts";
import { describeSubmission } from "../render/submission.ts";

/** The options of `show`: `--trust KEY`, the published key receipt signatures are checked against. */
export const SHOW_OPTIONS = { trust: { type: "string" } } as const;

/** The options of `next`: the filters, and the key receipts are checked against, as for show. */
export const NEXT_OPTIONS = { ...FILTER_OPTIONS, ...SHOW_OPTIONS } as const;

/**
 * Runs `show`.
 *
 * @param context Outputs, environment, clock.
 * @param values Parsed options.
 * @param typed The receipt id or a unique prefix.
 * @returns The exit status.
 * @throws {CliError} When no submission has that id.
 */
export async function showCommand(
  context: Context,
  values: OptionValues,
  typed: string,
): Promise<number> {
  const database = await openForReading(databaseConfig(values.database as string, context.env));
  try {
    const id = await resolveId(database.client, typed, "show");
    const row = await findSubmission(database.client, database.schema, id);
    if (row === undefined) throw new CliError(`Cannot show: no submission has receipt id ${id}`);
    const width = widthFrom(values, context.terminalColumns);
    const publicKey = await publishedKey(context, database, values.trust);
    await context.stdout.line(
      describeSubmission(await submissionView(database, row, publicKey), width),
    );
    return 0;
  } finally {
    await database.close();
  }
}

/**
 * Runs `next`: the oldest new submission (matching the filters), shown in full, and how many
 * more are waiting.
 *
 * @param context Outputs, environment, clock.
 * @param values Parsed options.
 * @returns The exit status (0 also when the queue is empty).
 */
export async function nextCommand(context: Context, values: OptionValues): Promise<number> {
  const filters = { ...filtersFrom(values, context.now()), status: undefined, unreviewed: true };
  const database = await openForReading(databaseConfig(values.database as string, context.env));
  try {
    const { rows, next } = await queuePage(database.client, database.schema, filters, undefined, 1);
    if (rows.length === 0) {
      await context.stdout.line("the queue is empty: no new submission matches");
      return 0;
    }
    const width = widthFrom(values, context.terminalColumns);
    const publicKey = await publishedKey(context, database, values.trust);
    await context.stdout.line(
      describeSubmission(await submissionView(database, rows[0], publicKey), width),
    );
    const waiting = next === undefined
      ? 0
      : await countSubmissions(database.client, database.schema, filters) - 1;
    await context.stdout.line(
      `next: ${context.program} mark ${rows[0].id.slice(0, 12)} --status reviewed ` +
        `(${waiting === 0 ? "the last new one" : `${waiting} more new after it`}), ` +
        `or work through them all with ${context.program} triage`,
    );
    return 0;
  } finally {
    await database.close();
  }
}
