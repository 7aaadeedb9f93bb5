/**
 * The web console's JSON views and actions, on the review tool's own queries and appends.
 * Submitted text leaves here only as segments made by the shared renderer (render/mod.ts): the page
 * gets text that is already inert, with each escape marked, and puts it into the document with
 * `textContent`, so there is one classification of characters for the terminal and the page.
 *
 * @module
 */
import { canonicalReceiptBytes, sha256Digest, type SigningKey } from "../../src/signing/mod.ts";
import { receiptSignatureReport, signedFieldsOf } from "../data/receipt_signature.ts";
import { appendEvent, checkNoteAndReviewer } from "../data/appends.ts";
import { exportChunks, type ExportFormat } from "../render/export.ts";
import { interpretContent, type MessageView, previewOf, renderContent } from "../render/content.ts";
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
  type SubmissionRow,
} from "../data/queries.ts";
import { checkpoints, pagesWithHistories, reviewEvents } from "../data/events.ts";
import { Findings, safeSegments, type Segment } from "../render/mod.ts";
import { catchUpIndex, searchCondition, type SearchMode } from "../search/search.ts";
import { readsAs as readsAsWords } from "../search/reads_as.ts";

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
const WIDE = 1_000;

type Lines = Segment[][];

function segments(text: string, findings: Findings, newlines: "keep" | "escape" = "escape"): Lines {
  return safeSegments(text, findings, { width: WIDE, newlines });
}

function excerpt(text: string, findings: Findings): Segment[] {
  return segments(text.slice(0, 300), findings)[0] ?? [];
}

/** What the look-alike words of `text` read as (search/reads_as.ts), rendered inertly. */
function readsAs(text: string, findings: Findings): Segment[][] {
  return readsAsWords(text).map((word) => excerpt(word, findings));
}

function messageOf(row: SubmissionRow): MessageView | undefined {
  const view = interpretContent(row.contentType, row.content);
  if (view.form === "message") return view.message;
  if (view.form === "a2a") {
    for (const part of view.parts) if (part.type === "message") return part.message;
  }
  return undefined;
}

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
   * Answers a GET of `/api/...`.
   *
   * @param path The path.
   * @param params The query.
   * @returns A JSON value.
   */
  async get(path: string, params: URLSearchParams): Promise<unknown> {
    if (path === "/api/queue") return await this.#queue(params);
    if (path === "/api/item") return await this.#item(parameter(params, "id") ?? "");
    if (path === "/api/integrity") return await this.#integrity();
    if (path === "/api/counts") return await this.#counts(params);
    throw new RequestError(404, "no such view");
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
   * Answers a POST to `/api/...`.
   *
   * @param path The path.
   * @param body The parsed JSON body.
   * @returns A JSON value.
   */
  async post(path: string, body: unknown): Promise<unknown> {
    if (path === "/api/event") return await this.#event(body);
    if (path === "/api/verify") {
      const result = await this.#options.verify();
      return { passed: result.code === 0, lines: result.lines };
    }
    throw new RequestError(404, "no such action");
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

  async #queue(params: URLSearchParams): Promise<unknown> {
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
      items: rows.map((row) => {
        const findings = new Findings();
        const view = interpretContent(row.contentType, row.content);
        const flagged = renderContent(view, WIDE).findings.any;
        const message = messageOf(row);
        return {
          id: row.id,
          seq: row.seq,
          receivedAt: row.receivedAt,
          surface: row.surface,
          kind: row.kind,
          status: row.status ?? "new",
          redacted: row.redaction !== null,
          flagged,
          signer: row.identityFingerprint === null ? "-" : row.identityVerified ? "ok" : "NO",
          sender: message?.sender.name === undefined
            ? null
            : excerpt(message.sender.name, findings),
          intent: message?.intent === undefined ? null : excerpt(message.intent, findings),
          preview: row.redaction !== null
            ? [{ text: "(redacted)", kind: "prefix" }]
            : excerpt(previewOf(view), findings),
          readsAs: row.redaction !== null ? [] : readsAs(previewOf(view), findings),
        };
      }),
    };
  }

  async #item(id: string): Promise<unknown> {
    const { client, schema } = this.#options.database;
    if (!/^[A-Za-z0-9_-]{30}$/.test(id)) throw new RequestError(400, "not a receipt id");
    const row = await findSubmission(client, schema, id);
    if (row === undefined) throw new RequestError(404, "no such submission");
    const findings = new Findings();
    const redacted = row.redaction !== null && row.content.length === 0;
    const view = interpretContent(row.contentType, row.content);
    const content = renderContent(view, WIDE);
    findings.addAll(content.findings);
    const field = (label: string, value: string) => ({ label, value: segments(value, findings) });
    const receipt = signedFieldsOf(row);
    const publicKey = this.#options.publicKey ?? this.#options.key?.publicKey;
    // The signature the intake stored with the row, checked against the published key; the
    // console signs nothing for a receipt (it would vouch for any row a database writer added).
    const report = await receiptSignatureReport(row, publicKey);
    const events = await reviewEvents(client, schema, id);
    return {
      id: row.id,
      status: row.status ?? "new",
      fields: [
        field("receipt", row.id),
        field("received", row.receivedAt),
        field("surface", row.surface),
        field("kind", `${row.kind} (${row.contentType})`),
        field("size", `${row.size} bytes`),
        field("digest", row.digest),
        field("source", row.sourceHash),
        field(
          "signature",
          row.identityFingerprint === null
            ? "unsigned"
            : `${row.identityVerified ? "verified" : "did NOT verify"} at intake, key ` +
              row.identityFingerprint,
        ),
      ],
      redaction: row.redaction === null ? null : {
        createdAt: row.redaction.createdAt,
        by: segments(row.redaction.by, findings),
        reason: segments(row.redaction.reason, findings, "keep"),
      },
      history: events.map((event) => ({
        seq: event.seq,
        number: event.number,
        createdAt: event.createdAt,
        status: event.status,
        supersedes: event.supersedes,
        supersedesNumber: event.supersedesNumber,
        reviewer: event.reviewer === null ? null : segments(event.reviewer, findings),
        note: event.note === null ? null : segments(event.note, findings, "keep"),
      })),
      content: redacted ? [[{ text: "(content redacted)", kind: "prefix" }]] : content.segments,
      readsAs: redacted ? [] : readsAs(new TextDecoder().decode(row.content), new Findings()),
      warning: findings.summary() ?? null,
      integrity: {
        digest: redacted
          ? "redacted: the digest is that of the content as received"
          : sha256Digest(row.content) === row.digest
          ? "matches the content"
          : "MISMATCH: the content was changed",
        signedBytes: new TextDecoder().decode(canonicalReceiptBytes(receipt)),
        signature: row.receiptSignature?.signature ?? null,
        batch: row.receiptSignature?.batch ?? null,
        publicKey: publicKey ?? null,
        signatureState: report.state,
        signatureReport: report.text,
        signatureVerifies: report.state === "verifies"
          ? true
          : report.state === "does-not-verify"
          ? false
          : null,
      },
    };
  }

  async #integrity(): Promise<unknown> {
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

  async #counts(params: URLSearchParams): Promise<unknown> {
    const { client, schema } = this.#options.database;
    const filters = await this.#filters(params);
    return {
      submissions: await countSubmissions(client, schema, {}),
      new: await countSubmissions(client, schema, { unreviewed: true }),
      matching: await countSubmissions(client, schema, filters),
    };
  }

  async #event(body: unknown): Promise<unknown> {
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
