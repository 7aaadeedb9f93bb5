/**
 * The web console's JSON views and actions, on the review tool's own queries and appends: one
 * method per route of app.ts's table, each checking its parameters, asking data/, and shaping the
 * answer with views.ts. Submitted text leaves only as segments made by the shared renderer
 * (render/mod.ts): the page gets text that is already inert, with each escape marked, and puts it
 * into the document with `textContent`, so there is one classification of characters for the
 * terminal and the page.
 *
 * @module
 */
import type { SigningKey } from "../../src/signing/mod.ts";
import { receiptSignatureReport } from "../data/receipt_signature.ts";
import { appendEvent, checkNoteAndReviewer } from "../data/appends.ts";
import { exportChunks, type ExportFormat } from "../render/export.ts";
import type { ReviewDatabase } from "../data/database.ts";
import { CliError } from "../io.ts";
import { parseSince } from "../commands/options.ts";
import {
  countSubmissions,
  type Filters,
  findSubmission,
  queuePage,
  REVIEW_STATUSES,
  type ReviewStatus,
} from "../data/queries.ts";
import { checkpoints, pagesWithHistories, reviewEvents } from "../data/events.ts";
import { catchUpIndex, searchCondition, type SearchMode } from "../search/search.ts";
import { itemView, queueEntryView } from "./views.ts";

/** A refusal with a status and a message of our own (never submitted content). */
export class RequestError extends Error {
  /** The HTTP status. */
  readonly status: number;

  /**
   * Creates it.
   *
   * @param status The HTTP status.
   * @param message What to tell the page.
   */
  constructor(status: number, message: string) {
    super(message);
    this.status = status;
  }
}

/** What the API works with. */
export interface ApiOptions {
  /** The database, opened for appending. */
  readonly database: ReviewDatabase;
  /** How search works here. */
  readonly search: SearchMode;
  /** Recorded with each event. */
  readonly reviewer: string;
  /**
   * The signing key, only when given on purpose (`BEACON_SIGNING_KEY`): it signs redaction
   * records, never a receipt.
   */
  readonly key?: SigningKey;
  /** The public key checkpoints and receipts are checked against, if known. */
  readonly publicKey?: string;
  /** Runs `verify --no-checkpoint`: its exit status and output lines (already safe). */
  readonly verify: () => Promise<{ code: number; lines: string[] }>;
  /** Clock. */
  readonly now: () => number;
}

const PAGE = 50;

function parameter(params: URLSearchParams, name: string): string | undefined {
  const value = params.get(name)?.trim();
  if (value === undefined || value === "") return undefined;
  if (value.length > 200 || !value.isWellFormed()) {
    throw new RequestError(400, `${name} must be 1 to 200 characters`);
  }
  // A NUL ends an FTS5 query string early and makes SQLite fail, and no reviewer means to
  // search for a control character: refuse C0, DEL and C1 plainly instead of a 500.
  // deno-lint-ignore no-control-regex -- finding control characters is the point
  if (/[\u0000-\u001F\u007F-\u009F]/.test(value)) {
    throw new RequestError(400, `${name} must not hold control characters`);
  }
  return value;
}

function oneOf<T extends string>(value: string | undefined, allowed: readonly T[], name: string) {
  if (value === undefined) return undefined;
  if (!(allowed as readonly string[]).includes(value)) {
    throw new RequestError(400, `${name} must be one of ${allowed.join(", ")}`);
  }
  return value as T;
}

function time(value: string | undefined, now: number, name: string): string | undefined {
  if (value === undefined) return undefined;
  try {
    return parseSince(value, now);
  } catch {
    throw new RequestError(400, `${name}: use a date (2025-06-01), a time or a duration (24h)`);
  }
}

/** The console's API. */
export class ConsoleApi {
  readonly #options: ApiOptions;

  /**
   * Creates it.
   *
   * @param options Database, search mode, reviewer, keys, verify runner, clock.
   */
  constructor(options: ApiOptions) {
    this.#options = options;
  }

  /**
   * The export of what the filters in `params` match (`format=ndjson|csv`), as `review export`
   * writes it: the same records and the same CSV neutralisation (render/export.ts), streamed.
   *
   * @param params The query: the queue's filters and `format`.
   * @returns The format and the text, in chunks.
   */
  async export(
    params: URLSearchParams,
  ): Promise<{ format: ExportFormat; chunks: AsyncIterable<string> }> {
    const format = oneOf(parameter(params, "format"), ["ndjson", "csv"] as const, "format") ??
      "ndjson";
    const filters = await this.#filters(params);
    const database = this.#options.database;
    async function* chunks() {
      const pages = pagesWithHistories(database, filters);
      for await (const chunk of exportChunks(pages, format)) yield chunk.text;
    }
    return { format, chunks: chunks() };
  }

  /**
   * `POST /api/verify`: runs `verify --no-checkpoint`.
   *
   * @returns Whether it passed, and its lines (already safe).
   */
  async verify(): Promise<{ passed: boolean; lines: string[] }> {
    const result = await this.#options.verify();
    return { passed: result.code === 0, lines: result.lines };
  }

  async #filters(params: URLSearchParams): Promise<Filters> {
    const now = this.#options.now();
    const q = parameter(params, "q");
    const signed = oneOf(parameter(params, "signed"), ["yes", "no"] as const, "signed");
    const source = parameter(params, "source");
    if (source !== undefined && !/^[A-Za-z0-9_=+/:-]{1,128}$/.test(source)) {
      throw new RequestError(400, "source must be a source hash");
    }
    if (q !== undefined) await catchUpIndex(this.#options.database.client, this.#options.search);
    return {
      status: oneOf(parameter(params, "status"), REVIEW_STATUSES, "status"),
      surface: oneOf(parameter(params, "surface"), ["native", "a2a"] as const, "surface"),
      kind: oneOf(parameter(params, "kind"), ["structured", "unstructured"] as const, "kind"),
      intent: parameter(params, "intent"),
      sender: parameter(params, "sender"),
      source,
      signed: signed === undefined ? undefined : signed === "yes",
      since: time(parameter(params, "since"), now, "since"),
      until: time(parameter(params, "until"), now, "until"),
      searchSql: q === undefined ? undefined : searchCondition(this.#options.search, q),
    };
  }

  /**
   * `GET /api/queue`: a page of the queue for the filters and cursor in `params`.
   *
   * @param params The query.
   * @returns The entries, the next cursor and the search mode.
   */
  async queue(params: URLSearchParams): Promise<unknown> {
    const { client, schema } = this.#options.database;
    const filters = await this.#filters(params);
    const cursorText = parameter(params, "cursor");
    const cursor = /^(new|done):[0-9]{1,15}$/.test(cursorText ?? "")
      ? {
        phase: cursorText!.split(":")[0] as "new" | "done",
        after: Number(cursorText!.split(":")[1]),
      }
      : undefined;
    const { rows, next } = await queuePage(client, schema, filters, cursor, PAGE);
    return {
      search: parameter(params, "q") === undefined ? null : this.#options.search,
      next: next === undefined ? null : `${next.phase}:${next.after}`,
      items: rows.map(queueEntryView),
    };
  }

  /**
   * `GET /api/item?id=`: one submission in full, every text as inert segments.
   *
   * @param params The query.
   * @returns The submission's view.
   */
  async item(params: URLSearchParams): Promise<unknown> {
    const id = parameter(params, "id") ?? "";
    const { client, schema } = this.#options.database;
    if (!/^[A-Za-z0-9_-]{30}$/.test(id)) throw new RequestError(400, "not a receipt id");
    const row = await findSubmission(client, schema, id);
    if (row === undefined) throw new RequestError(404, "no such submission");
    const publicKey = this.#options.publicKey ?? this.#options.key?.publicKey;
    // The signature the intake stored with the row, checked against the published key; the
    // console signs nothing for a receipt (it would vouch for any row a database writer added).
    const report = await receiptSignatureReport(row, publicKey);
    return itemView(row, await reviewEvents(client, schema, id), report, publicKey);
  }

  /**
   * `GET /api/integrity`: the counts, the latest checkpoint and the key.
   *
   * @returns The facts.
   */
  async integrity(): Promise<unknown> {
    const { client, schema } = this.#options.database;
    const latest = (await checkpoints(client, schema)).at(-1);
    return {
      submissions: await countSubmissions(client, schema, {}),
      pending: await countSubmissions(client, schema, { unreviewed: true }),
      checkpoint: latest ?? null,
      publicKey: this.#options.key?.publicKey ?? this.#options.publicKey ?? null,
      search: this.#options.search,
    };
  }

  /**
   * `GET /api/counts`: all, new, and matching the filters in `params`.
   *
   * @param params The query.
   * @returns The counts.
   */
  async counts(params: URLSearchParams): Promise<unknown> {
    const { client, schema } = this.#options.database;
    const filters = await this.#filters(params);
    return {
      submissions: await countSubmissions(client, schema, {}),
      new: await countSubmissions(client, schema, { unreviewed: true }),
      matching: await countSubmissions(client, schema, filters),
    };
  }

  /**
   * `POST /api/event`: appends a review event (a status, a note, or a corrected note).
   *
   * @param body The parsed JSON body.
   * @returns The event's `seq`.
   */
  async event(body: unknown): Promise<unknown> {
    if (typeof body !== "object" || body === null || Array.isArray(body)) {
      throw new RequestError(400, "the body must be a JSON object");
    }
    const { id, status, note, supersedes } = body as Record<string, unknown>;
    if (typeof id !== "string" || !/^[A-Za-z0-9_-]{30}$/.test(id)) {
      throw new RequestError(400, "id must be a receipt id");
    }
    if (status !== undefined && !(REVIEW_STATUSES as readonly unknown[]).includes(status)) {
      throw new RequestError(400, `status must be one of ${REVIEW_STATUSES.join(", ")}`);
    }
    if (note !== undefined && typeof note !== "string") {
      throw new RequestError(400, "note must be text");
    }
    if (status === undefined && note === undefined) {
      throw new RequestError(400, "give a status, a note, or both");
    }
    if (supersedes !== undefined && !(Number.isSafeInteger(supersedes) && note !== undefined)) {
      throw new RequestError(400, "supersedes must be an event number, with a new note");
    }
    try {
      checkNoteAndReviewer(note as string | undefined, this.#options.reviewer);
    } catch (error) {
      if (error instanceof CliError) throw new RequestError(400, error.message);
      throw error;
    }
    const seq = await appendEvent(this.#options.database.client, {
      id,
      status: status as ReviewStatus | undefined,
      note: note as string | undefined,
      reviewer: this.#options.reviewer,
      supersedes: supersedes as number | undefined,
      createdAt: new Date(this.#options.now()).toISOString(),
    });
    if (seq === undefined) throw new RequestError(404, "no such submission or note");
    return { seq };
  }
}
