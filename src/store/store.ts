/**
 * The submission store: an append-only libSQL table written through group commit. Every failure
 * of the database surfaces as {@linkcode StorageError} (mapped to `503 unavailable` / -32603), so
 * the handler never has to know which client or which error it was.
 *
 * @module
 */
import type { Client, InValue } from "@libsql/client";
import { StorageError } from "../errors.ts";
import { type DatabaseConfig, isEmbedded, openClient } from "./client.ts";
import { WriterThread } from "./writer_thread.ts";
import { GroupCommitter } from "./group_commit.ts";
import { migrate } from "./migrations.ts";

/** Which protocol a submission arrived through. */
export type Surface = "native" | "a2a";
/** Structured (validated against the message schema) or unstructured (free text). */
export type SubmissionKind = "structured" | "unstructured";

/** Everything stored for one accepted submission. */
export interface NewSubmission {
  /** The receipt id (also the A2A task id). */
  readonly id: string;
  /** The A2A context id opened for it. */
  readonly contextId: string;
  /** ISO 8601 UTC time of receipt. */
  readonly receivedAt: string;
  readonly surface: Surface;
  readonly kind: SubmissionKind;
  /** Media type of `content`. */
  readonly contentType: string;
  /** The content exactly as accepted. */
  readonly content: Uint8Array<ArrayBuffer>;
  /** `sha256:<hex>` of `content`. */
  readonly digest: string;
  /** Salted hash of the source key; raw addresses are never stored. */
  readonly sourceHash: string;
  /** `sha256:<hex>` of a signer's public key, if the message was signed. */
  readonly identityFingerprint?: string;
  /** Whether that signature verified. */
  readonly identityVerified?: boolean;
  /** The sender's idempotency key (native header or A2A messageId), if any. */
  readonly idempotencyKey?: string;
}

/** What lookups return: the receipt facts, never the content. */
export interface SubmissionSummary {
  readonly id: string;
  readonly contextId: string;
  readonly receivedAt: string;
  readonly surface: Surface;
  readonly kind: SubmissionKind;
  readonly size: number;
  readonly digest: string;
  readonly identityFingerprint?: string;
  readonly identityVerified?: boolean;
}

const INSERT_HEAD = `INSERT INTO submissions (id, context_id, received_at, surface, kind,
  content_type, content, size, digest, source_hash, identity_fingerprint, identity_verified,
  idempotency_key) `;
const ROW = "SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?";
/**
 * A row with an idempotency key is inserted only if no row from the same source with the same
 * key was received since the window start: the retry check happens inside the commit, so an
 * accepted submission costs no separate read.
 */
const ROW_UNLESS_KEY_USED = ROW + ` WHERE NOT EXISTS (SELECT 1 FROM submissions
  WHERE source_hash = ? AND idempotency_key = ? AND received_at >= ?)`;

/** One row to insert, and for rows with an idempotency key, the start of its window. */
interface PendingRow {
  readonly id: string;
  readonly values: InValue[];
  readonly keySince?: readonly [sourceHash: string, key: string, since: string];
}

const SUMMARY_COLUMNS =
  "id, context_id, received_at, surface, kind, size, digest, identity_fingerprint, identity_verified";

function toSummary(row: Record<string, unknown>): SubmissionSummary {
  const summary: {
    -readonly [K in keyof SubmissionSummary]: SubmissionSummary[K];
  } = {
    id: String(row.id),
    contextId: String(row.context_id),
    receivedAt: String(row.received_at),
    surface: row.surface as Surface,
    kind: row.kind as SubmissionKind,
    size: Number(row.size),
    digest: String(row.digest),
  };
  if (row.identity_fingerprint !== null && row.identity_fingerprint !== undefined) {
    summary.identityFingerprint = String(row.identity_fingerprint);
    summary.identityVerified = Number(row.identity_verified) === 1;
  }
  return summary;
}

/** The store used by the handler. */
export class SubmissionStore {
  /** The underlying client (the review tool and tests read through it). */
  readonly client: Client;
  readonly #writer: GroupCommitter<PendingRow, boolean>;

  readonly #thread: WriterThread | undefined;

  private constructor(client: Client, thread: WriterThread | undefined) {
    this.client = client;
    this.#thread = thread;
    // One multi-row INSERT per commit: a single statement is its own transaction, and it is
    // prepared once per commit instead of once per row. RETURNING names the rows inserted; a row
    // missing from it was a retry of an idempotency key already used.
    this.#writer = new GroupCommitter(async (rows) => {
      const sql = INSERT_HEAD +
        rows.map((row) => row.keySince === undefined ? ROW : ROW_UNLESS_KEY_USED).join(
          " UNION ALL ",
        ) + " RETURNING id";
      const args = rows.flatMap((row) => [...row.values, ...(row.keySince ?? [])]);
      const returned = thread !== undefined
        ? await thread.commit(sql, args)
        : (await this.client.execute({ sql, args })).rows.map((row) => row[0]);
      const inserted = new Set(returned.map(String));
      return rows.map((row) => inserted.has(row.id));
    });
  }

  /** Opens the database, applies migrations, and returns the store. */
  static async open(
    config: DatabaseConfig,
    now: () => number = Date.now,
  ): Promise<SubmissionStore> {
    const client = await openClient(config);
    let thread: WriterThread | undefined;
    try {
      await migrate(client, now);
      if (config.writerThread === true && isEmbedded(config.url) && config.url !== ":memory:") {
        if (WriterThread.available()) thread = await WriterThread.start(config.url);
      }
    } catch (error) {
      client.close();
      throw error;
    }
    return new SubmissionStore(client, thread);
  }

  /** Commits and durable writes so far: `{ commits, writes }`. */
  get counters(): { commits: number; writes: number } {
    return { ...this.#writer.counters };
  }

  /**
   * Appends one submission; resolves only once it is durably committed, with `true`. With
   * `keyWindowStart` (an ISO time) and an idempotency key, resolves `false` instead, storing
   * nothing, when the same source used the same key since then.
   */
  async append(submission: NewSubmission, keyWindowStart?: string): Promise<boolean> {
    const values: InValue[] = [
      submission.id,
      submission.contextId,
      submission.receivedAt,
      submission.surface,
      submission.kind,
      submission.contentType,
      submission.content,
      submission.content.byteLength,
      submission.digest,
      submission.sourceHash,
      submission.identityFingerprint ?? null,
      submission.identityVerified === undefined ? null : submission.identityVerified ? 1 : 0,
      submission.idempotencyKey ?? null,
    ];
    const keySince = submission.idempotencyKey !== undefined && keyWindowStart !== undefined
      ? [submission.sourceHash, submission.idempotencyKey, keyWindowStart] as const
      : undefined;
    try {
      return await this.#writer.write({ id: submission.id, values, keySince });
    } catch (error) {
      throw new StorageError(error);
    }
  }

  /** The submission with receipt id `id`, or undefined. */
  async findById(id: string): Promise<SubmissionSummary | undefined> {
    const rows = await this.#read(`SELECT ${SUMMARY_COLUMNS} FROM submissions WHERE id = ?`, [id]);
    return rows[0] === undefined ? undefined : toSummary(rows[0]);
  }

  /**
   * The earlier submission from the same source with the same idempotency key received at or
   * after `since` (ISO time), with its digest, for retry detection.
   */
  async findByIdempotencyKey(
    sourceHash: string,
    key: string,
    since: string,
  ): Promise<SubmissionSummary | undefined> {
    const rows = await this.#read(
      `SELECT ${SUMMARY_COLUMNS} FROM submissions
        WHERE source_hash = ? AND idempotency_key = ? AND received_at >= ?
        ORDER BY seq LIMIT 1`,
      [sourceHash, key, since],
    );
    return rows[0] === undefined ? undefined : toSummary(rows[0]);
  }

  /**
   * A named secret (a salt, a signing key), created with `create` on first use. Concurrent
   * creators race harmlessly: the first insert wins and everyone reads the winner back.
   */
  async secret(
    name: string,
    create: () => Uint8Array<ArrayBuffer>,
    now: () => number,
  ): Promise<Uint8Array<ArrayBuffer>> {
    try {
      await this.client.execute({
        sql: "INSERT OR IGNORE INTO secrets (name, value, created_at) VALUES (?, ?, ?)",
        args: [name, create(), new Date(now()).toISOString()],
      });
      const rows = await this.#read("SELECT value FROM secrets WHERE name = ?", [name]);
      const value = rows[0]?.value;
      if (!(value instanceof ArrayBuffer)) throw new Error("secret missing after insert");
      return new Uint8Array(value);
    } catch (error) {
      throw error instanceof StorageError ? error : new StorageError(error);
    }
  }

  /** Waits for queued writes, then closes the database. */
  async close(): Promise<void> {
    await this.#writer.idle();
    this.#writer.close();
    await this.#thread?.close();
    this.client.close();
  }

  async #read(sql: string, args: (string | number)[]): Promise<Record<string, unknown>[]> {
    try {
      return (await this.client.execute({ sql, args })).rows as unknown as Record<
        string,
        unknown
      >[];
    } catch (error) {
      throw new StorageError(error);
    }
  }
}
