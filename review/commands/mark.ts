/**
 * `review mark <id>... [--status S] [--note TEXT] [--corrects N] [--reviewer NAME]`:
 * appends one review event per id. Nothing is ever updated: the latest status is the status,
 * `--status new` sets items back, a note is corrected by a new event naming the one it
 * supersedes (`--corrects N`, the note's number in that submission's history as `show` prints
 * it), and the whole history stays (the `review_events` table refuses UPDATE and DELETE by
 * trigger).
 *
 * The reviewer's name comes from `--reviewer`, else `BEACON_REVIEWER`, else is left empty.
 *
 * @module
 */
import { appendEvent, checkNoteAndReviewer } from "../data/appends.ts";
import { databaseConfig, openForAppending } from "../data/database.ts";
import { eventNumber, reviewEvents } from "../data/events.ts";
import { resolveIds } from "../data/ids.ts";
import { CliError, type Context } from "../io.ts";
import { integerOption, type OptionValues, statusOption } from "./options.ts";
import { REVIEW_STATUSES, type ReviewStatus } from "../data/queries.ts";
import { safeText } from "../render/mod.ts";

/** The options of `mark`. */
export const MARK_OPTIONS = {
  status: { type: "string" },
  note: { type: "string" },
  corrects: { type: "string" },
  reviewer: { type: "string" },
} as const;

/**
 * Runs `mark`.
 *
 * @param context Outputs, environment, clock.
 * @param values Parsed options.
 * @param typed The receipt ids or unique prefixes.
 * @returns The exit status.
 * @throws {CliError} Status 2 for a missing status and note, an unknown status or an oversized
 *   note, status 1 when an id names no submission (then nothing is appended).
 */
export async function markCommand(
  context: Context,
  values: OptionValues,
  typed: string[],
): Promise<number> {
  const status: ReviewStatus | undefined = statusOption(values, "status");
  const note = values.note as string | undefined;
  if (status === undefined && note === undefined) {
    throw new CliError(
      `Cannot mark: give --status ${REVIEW_STATUSES.join("|")}, --note TEXT, or both`,
      2,
    );
  }
  const corrects = values.corrects === undefined
    ? undefined
    : integerOption(values, "corrects", 1, Number.MAX_SAFE_INTEGER);
  if (corrects !== undefined && (note === undefined || typed.length !== 1)) {
    throw new CliError("Cannot mark: --corrects takes one id and a new --note", 2);
  }
  const reviewer = (values.reviewer as string | undefined) ?? context.env("BEACON_REVIEWER");
  checkNoteAndReviewer(note, reviewer);
  const database = await openForAppending(
    databaseConfig(values.database as string, context.env),
    context.now,
  );
  try {
    const ids = await resolveIds(database.client, typed, "mark");
    for (const id of ids) {
      const history = await reviewEvents(database.client, database.schema, id);
      const corrected = corrects === undefined ? undefined : history[corrects - 1];
      if (corrects !== undefined && corrected?.note == null) {
        throw new CliError(
          `Cannot mark: event #${corrects} of ${safeText(id)} is not a note (show lists them)`,
        );
      }
      const seq = await appendEvent(database.client, {
        id,
        status,
        note,
        reviewer,
        supersedes: corrected?.seq,
        createdAt: new Date(context.now()).toISOString(),
      });
      if (seq === undefined) {
        throw new CliError(`Cannot mark: no submission has receipt id ${safeText(id)}`);
      }
      const what = status === undefined
        ? corrects === undefined ? "noted" : `note #${corrects} corrected`
        : `marked ${status}`;
      const number = await eventNumber(database.client, id, seq);
      await context.stdout.line(`${safeText(id)} ${what} (event #${number} of its history)`);
    }
    return 0;
  } finally {
    await database.close();
  }
}
