/**
 * `review triage [filters] [--reviewer NAME]`: works through the queue without copying ids. It
 * shows the oldest new submission (as `next` does), reads one answer from standard input, appends
 * the review event, and shows the next one, until the queue is empty, `q`, or the end of input:
 *
 * ```text
 * r reviewed   f follow-up   d dismissed   e escalated   n note   s skip   q quit
 * ```
 *
 * Each answer applies to the submission just shown, by its receipt id, never to "whatever is
 * oldest now": another reviewer working the same queue cannot make an answer land on an item this
 * reviewer has not seen. Items move forward by `seq`, so a skipped item is not shown again in the
 * same run. Answers are read line by line (a terminal sends a line on Enter; a script can pipe
 * them), and every line written goes through the sanitising output, like every other command.
 *
 * @module
 */
import { appendEvent, checkNoteAndReviewer, MAX_NOTE } from "../data/appends.ts";
import { databaseConfig, openForAppending, type ReviewDatabase } from "../data/database.ts";
import { eventNumber } from "../data/events.ts";
import { publishedKey } from "../data/keys.ts";
import {
  countSubmissions,
  queuePage,
  type ReviewStatus,
  type SubmissionRow,
} from "../data/queries.ts";
import { submissionView } from "../data/submission.ts";
import { CliError, type Context } from "../io.ts";
import { FILTER_OPTIONS, filtersFrom, type OptionValues, widthFrom } from "./options.ts";
import { safeText } from "../render/mod.ts";
import { describeSubmission } from "../render/submission.ts";

/** The options of `triage`: the filters, and who is reviewing. */
export const TRIAGE_OPTIONS = {
  ...FILTER_OPTIONS,
  reviewer: { type: "string" },
  trust: { type: "string" },
} as const;

/** One-letter answers that set a status. */
const STATUS_KEYS: Readonly<Record<string, ReviewStatus>> = {
  r: "reviewed",
  f: "follow-up",
  d: "dismissed",
  e: "escalated",
};

/** The key legend printed under each item. */
export const TRIAGE_LEGEND =
  "r reviewed   f follow-up   d dismissed   e escalated   n note   s skip   q quit";

/** Lines of standard input, one at a time; undefined at its end. */
function lineReader(input: ReadableStream<Uint8Array>): () => Promise<string | undefined> {
  const reader = input.pipeThrough(new TextDecoderStream()).getReader();
  let buffered = "";
  let ended = false;
  return async () => {
    while (!buffered.includes("\n") && !ended) {
      const { value, done } = await reader.read();
      if (done) ended = true;
      else buffered += value;
    }
    if (buffered === "" && ended) return undefined;
    const end = buffered.indexOf("\n");
    const line = end < 0 ? buffered : buffered.slice(0, end);
    buffered = end < 0 ? "" : buffered.slice(end + 1);
    return line.replace(/\r$/, "");
  };
}

/**
 * Reads answers for the submission just shown until one moves on: a status appends its event
 * (`marked`), `s` skips it, `q` or the end of input stops. A note is appended and the same item
 * asked again; an answer that is none of these is explained and asked again.
 */
async function answerFor(
  context: Context,
  database: ReviewDatabase,
  row: SubmissionRow,
  answer: () => Promise<string | undefined>,
  reviewer: string | undefined,
): Promise<"marked" | "skipped" | "quit"> {
  while (true) {
    await context.stdout.write("> ");
    const line = await answer();
    if (line === undefined || line.trim() === "q") return "quit";
    const key = line.trim();
    const status: ReviewStatus | undefined = STATUS_KEYS[key];
    let note: string | undefined;
    if (key === "s") {
      await context.stdout.line(`${safeText(row.id)} skipped, still new`);
      return "skipped";
    }
    if (key === "n") {
      await context.stdout.write("note> ");
      note = (await answer())?.trim();
      if (note === undefined || note === "") continue;
      if (note.length > MAX_NOTE || !note.isWellFormed()) {
        await context.stdout.line(`a note is well-formed text of at most ${MAX_NOTE} characters`);
        continue;
      }
    } else if (status === undefined) {
      await context.stdout.line(`answer one of: ${TRIAGE_LEGEND}`);
      continue;
    }
    const seq = await appendEvent(database.client, {
      id: row.id,
      status,
      note,
      reviewer,
      createdAt: new Date(context.now()).toISOString(),
    });
    if (seq === undefined) {
      throw new CliError(`Cannot mark: no submission has receipt id ${safeText(row.id)}`);
    }
    const number = await eventNumber(database.client, row.id, seq);
    await context.stdout.line(
      `${safeText(row.id)} ${status === undefined ? "noted" : `marked ${status}`} ` +
        `(event #${number} of its history)`,
    );
    // A note leaves the item new: answer again (a status, or s to move on).
    if (status !== undefined) return "marked";
  }
}

/**
 * Runs `triage`.
 *
 * @param context Outputs, environment, clock, and the reviewer's answers (`input`).
 * @param values Parsed options.
 * @returns The exit status: 0 when the queue was worked through, quit or input ended.
 * @throws {CliError} Status 2 for bad filters or a name that is too long.
 */
export async function triageCommand(context: Context, values: OptionValues): Promise<number> {
  if (context.input === undefined) throw new CliError("Cannot triage: no input to read from", 2);
  const input = context.input();
  const filters = { ...filtersFrom(values, context.now()), status: undefined, unreviewed: true };
  const reviewer = (values.reviewer as string | undefined) ?? context.env("BEACON_REVIEWER");
  checkNoteAndReviewer(undefined, reviewer);
  const width = widthFrom(values, context.terminalColumns);
  const answer = lineReader(input);
  const database = await openForAppending(
    databaseConfig(values.database as string, context.env),
    context.now,
  );
  let after = 0;
  let done = 0;
  try {
    const publicKey = await publishedKey(context, database, values.trust);
    while (true) {
      const { rows } = await queuePage(
        database.client,
        database.schema,
        filters,
        { phase: "new", after },
        1,
      );
      const row = rows[0];
      if (row === undefined) {
        await context.stdout.line(`the queue is empty: ${done} marked in this run`);
        return 0;
      }
      after = row.seq;
      const waiting = await countSubmissions(database.client, database.schema, filters) - 1;
      await context.stdout.line(
        describeSubmission(await submissionView(database, row, publicKey), width),
      );
      await context.stdout.line(`${TRIAGE_LEGEND}   (${waiting} more new)`);
      const outcome = await answerFor(context, database, row, answer, reviewer);
      if (outcome === "quit") {
        await context.stdout.line(`stopped: ${done} marked in this run`);
        return 0;
      }
      if (outcome === "marked") done++;
    }
  } finally {
    await database.close();
  }
}
