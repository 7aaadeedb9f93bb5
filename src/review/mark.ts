/**
 * `review mark <id> --status reviewed|dismissed|escalated [--note TEXT] [--reviewer NAME]`:
 * appends a review event. Nothing is ever updated: the latest event is the status, and the
 * whole history stays (the `review_events` table refuses UPDATE and DELETE by trigger).
 *
 * The reviewer's name comes from `--reviewer`, else `BEACON_REVIEWER`, else is left empty.
 *
 * @module
 */
import { databaseConfig, openForAppending } from "./database.ts";
import { CliError, type Context } from "./io.ts";
import { type OptionValues, statusOption } from "./options.ts";
import { safeText } from "./render.ts";

/** The options of `mark`. */
export const MARK_OPTIONS = {
  status: { type: "string" },
  note: { type: "string" },
  reviewer: { type: "string" },
} as const;

/** Longest note, in UTF-16 code units. */
export const MAX_NOTE = 4000;
/** Longest reviewer name. */
export const MAX_REVIEWER = 200;

/**
 * Runs `mark`.
 *
 * @param context Outputs, environment, clock.
 * @param values Parsed options.
 * @param id The receipt id.
 * @returns The exit status.
 * @throws {CliError} Status 2 for a missing or unknown status or an oversized note, status 1
 *   when no submission has that id.
 */
export async function markCommand(
  context: Context,
  values: OptionValues,
  id: string,
): Promise<number> {
  const status = statusOption(values, "status");
  if (status === undefined) {
    throw new CliError("Cannot mark: --status reviewed|dismissed|escalated is required", 2);
  }
  const note = values.note as string | undefined;
  const reviewer = (values.reviewer as string | undefined) ?? context.env("BEACON_REVIEWER");
  if (note !== undefined && (note.length > MAX_NOTE || !note.isWellFormed())) {
    throw new CliError(
      `Cannot mark: --note must be well-formed text of at most ${MAX_NOTE} characters`,
      2,
    );
  }
  if (reviewer !== undefined && (reviewer.length > MAX_REVIEWER || !reviewer.isWellFormed())) {
    throw new CliError(
      `Cannot mark: the reviewer name must be at most ${MAX_REVIEWER} characters`,
      2,
    );
  }
  const database = await openForAppending(
    databaseConfig(values.database as string, context.env),
    context.now,
  );
  try {
    // One statement: the event is appended only if the submission exists, with no window
    // between the check and the insert.
    const result = await database.client.execute({
      sql: `INSERT INTO review_events (submission_id, status, note, reviewer, created_at)
        SELECT ?, ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM submissions WHERE id = ?)`,
      args: [
        id,
        status,
        note ?? null,
        reviewer === undefined || reviewer === "" ? null : reviewer,
        new Date(context.now()).toISOString(),
        id,
      ],
    });
    if (result.rowsAffected === 0) {
      throw new CliError(`Cannot mark: no submission has receipt id ${safeText(id)}`);
    }
    await context.stdout.line(
      `${safeText(id)} marked ${status} (review event ${String(result.lastInsertRowid)})`,
    );
    return 0;
  } finally {
    await database.close();
  }
}
