/**
 * The review tool's reads of the `review_events` and `checkpoints` tables: an item's history
 * (every event, oldest first, notes and the events they supersede included) and the signed tree
 * heads. Like queries.ts, every value is a bound parameter.
 *
 * @module
 */
import type { Client } from "@libsql/client";
import type { ReviewDatabase, Schema } from "./database.ts";
import {
  type Filters,
  nullableString,
  PAGE_SIZE,
  query,
  type ReviewStatus,
  submissionPages,
  type SubmissionRow,
} from "./queries.ts";
import { checkpointFromRow, type CheckpointRow } from "../../src/signing/mod.ts";
import { CHECKPOINT_COLUMNS } from "../../src/store/mod.ts";

export type { CheckpointRow };

/** One appended review event. */
export interface ReviewEvent {
  /** Order of appending, across the whole store (what `supersedes` refers to). */
  readonly seq: number;
  /**
   * Its place in its submission's history, from 1: the number reviewers see (`#2`) and give to
   * `mark --corrects`, so that correcting a note never needs a number counted across the store.
   */
  readonly number: number;
  /** The receipt id it is about. */
  readonly submissionId: string;
  /** The status it sets, or null for a note alone. */
  readonly status: ReviewStatus | null;
  /** The reviewer's note, if any. */
  readonly note: string | null;
  /** The reviewer's name, if given. */
  readonly reviewer: string | null;
  /** ISO 8601 UTC time it was appended. */
  readonly createdAt: string;
  /** The earlier event (its `seq`) whose note this one corrects. */
  readonly supersedes: number | null;
  /** The `number` of that earlier event in the same history. */
  readonly supersedesNumber: number | null;
}

function toEvent(row: Record<string, unknown>): Omit<ReviewEvent, "number" | "supersedesNumber"> {
  return {
    seq: Number(row.seq),
    submissionId: String(row.submission_id),
    status: nullableString(row.status) as ReviewStatus | null,
    note: nullableString(row.note),
    reviewer: nullableString(row.reviewer),
    createdAt: String(row.created_at),
    supersedes: row.supersedes === null || row.supersedes === undefined
      ? null
      : Number(row.supersedes),
  };
}

/**
 * Every review event of the given submissions, oldest first, grouped by receipt id.
 *
 * @param client The database.
 * @param schema Tables present.
 * @param ids Receipt ids (at most a page of them).
 * @returns The events of each id (ids without events are absent).
 */
export async function reviewHistories(
  client: Client,
  schema: Schema,
  ids: readonly string[],
): Promise<Map<string, ReviewEvent[]>> {
  const histories = new Map<string, ReviewEvent[]>();
  if (!schema.events || ids.length === 0) return histories;
  const supersedes = schema.redactions ? "supersedes" : "NULL AS supersedes";
  const rows = await query(
    client,
    `SELECT seq, submission_id, status, note, reviewer, created_at, ${supersedes} ` +
      `FROM review_events WHERE submission_id IN (${ids.map(() => "?").join(", ")}) ORDER BY seq`,
    ids,
  );
  for (const event of rows.map(toEvent)) {
    const history = histories.get(event.submissionId) ?? [];
    // A note corrects an earlier note of the same submission (appends.ts checks it), so the
    // event it names is already in this history.
    const corrected = history.find((earlier) => earlier.seq === event.supersedes);
    history.push({
      ...event,
      number: history.length + 1,
      supersedesNumber: corrected?.number ?? null,
    });
    histories.set(event.submissionId, history);
  }
  return histories;
}

/** A keyset page of submissions and the review events of each. */
export interface PageWithHistories {
  readonly rows: readonly SubmissionRow[];
  /** The events of each id (ids without events are absent). */
  readonly histories: ReadonlyMap<string, readonly ReviewEvent[]>;
}

/**
 * Every matching submission, oldest first, in keyset pages, with the review events of each page
 * read in one query: what an export writes, in constant memory.
 *
 * @param database The database and its tables.
 * @param filters The filters.
 * @returns The pages.
 */
export async function* pagesWithHistories(
  database: Pick<ReviewDatabase, "client" | "schema">,
  filters: Filters,
): AsyncGenerator<PageWithHistories> {
  for await (const page of submissionPages(database.client, database.schema, filters, PAGE_SIZE)) {
    const histories = await reviewHistories(
      database.client,
      database.schema,
      page.map((row) => row.id),
    );
    yield { rows: page, histories };
  }
}

/**
 * Every review event of a submission, oldest first.
 *
 * @param client The database.
 * @param schema Tables present.
 * @param id The receipt id.
 * @returns The events.
 */
export async function reviewEvents(
  client: Client,
  schema: Schema,
  id: string,
): Promise<ReviewEvent[]> {
  return (await reviewHistories(client, schema, [id])).get(id) ?? [];
}

/**
 * The number (`#N`, from 1) of the event `seq` in the history of submission `id`.
 *
 * @param client The database.
 * @param id The receipt id.
 * @param seq The event's `seq`.
 * @returns Its place in that submission's history.
 */
export async function eventNumber(client: Client, id: string, seq: number): Promise<number> {
  const rows = await query(
    client,
    "SELECT count(*) AS n FROM review_events WHERE submission_id = ? AND seq <= ?",
    [id, seq],
  );
  return Number(rows[0].n);
}

/**
 * Every recorded checkpoint, oldest first.
 *
 * @param client The database.
 * @param schema Tables present.
 * @returns The checkpoints.
 */
export async function checkpoints(client: Client, schema: Schema): Promise<CheckpointRow[]> {
  if (!schema.checkpoints) return [];
  const rows = await query(
    client,
    `SELECT ${CHECKPOINT_COLUMNS} FROM checkpoints ORDER BY seq`,
    [],
  );
  return rows.map(checkpointFromRow);
}
