/**
 * The submission store: an append-only libSQL table written through group commit. Every failure
 * of the database surfaces as {@linkcode StorageError} (mapped to `503 unavailable` / -32603), so
 * the handler never has to know which client or which error it was, and every call has a
 * deadline: a stalled database answers 503, it never hangs a request.
 *
 * How a row gets committed, in three hops: {@linkcode SubmissionStore.append} queues it with the
 * {@linkcode GroupCommitter}, which hands a batch to this store's commit function, which is one
 * of: `EmbeddedConnection.commit` (embedded.ts) on this thread, the same on the writer thread
 * ({@linkcode WriterThread}), or one multi-row statement on a remote database.
 *
 * @module
 */
import type { Client } from "@libsql/client";
import { StorageError } from "../errors.ts";
import { type DatabaseConfig, isEmbedded, openClient } from "./client.ts";
import { ConnectionStateError, DeadlineError, isBusy, withDeadline } from "./faults.ts";
import { GroupCommitter } from "./group_commit.ts";
import { migrate, MIGRATIONS } from "./migrations.ts";
import {
  FIND_BY_IDEMPOTENCY_KEY,
  insertBatchSql,
  keyCheckArgs,
  type NewSubmission,
  type PendingRow,
  pendingRow,
  type SubmissionSummary,
  SUMMARY_COLUMNS,
  toSummary,
} from "./rows.ts";
import { WriterThread } from "./writer_thread.ts";

export type { NewSubmission, SubmissionKind, SubmissionSummary, Surface } from "./rows.ts";

/** Default deadline of one database call, in milliseconds. */
export const DEFAULT_DATABASE_TIMEOUT_MS = 10_000;

/**
 * Whether a failed batch may be retried one row per transaction. Only a row's own fault (a
 * constraint) is worth isolating; a busy, stalled or broken database would fail every row again.
 */
function isRowFault(error: unknown): boolean {
  return !(isBusy(error) || error instanceof DeadlineError ||
    error instanceof ConnectionStateError);
}

type Read = (
  sql: string,
  args: (string | number)[] | Readonly<Record<string, string | number>>,
) => Promise<Record<string, unknown>[]>;
type Commit = (rows: readonly PendingRow[]) => Promise<readonly boolean[]>;

/** The store used by the handler. */
export class SubmissionStore {
  /** The general-purpose client: migrations, secrets, the shared rate limiter, the review tool. */
  readonly client: Client;
  /**
   * One statement at a time in autocommit, with a deadline, for working state beside the
   * submissions (the shared rate limiter). Embedded databases run it on the checked connection,
   * never through the general-purpose client.
   */
  readonly statements: {
    run(
      sql: string,
      args?: Readonly<Record<string, string | number>>,
    ): Promise<Record<string, unknown>[]>;
  };
  /** True when this start created the database (every migration was applied just now). */
  readonly created: boolean;
  readonly #writer: GroupCommitter<PendingRow, boolean>;
  readonly #read: Read;
  readonly #timeoutMs: number;
  readonly #release: () => Promise<void>;

  private constructor(
    client: Client,
    parts: {
      created: boolean;
      read: Read;
      commit: Commit;
      release: () => Promise<void>;
      timeoutMs: number;
    },
  ) {
    this.client = client;
    this.created = parts.created;
    this.statements = { run: (sql, args = {}) => this.#query(sql, args) };
    this.#read = parts.read;
    this.#release = parts.release;
    this.#timeoutMs = parts.timeoutMs;
    this.#writer = new GroupCommitter(parts.commit, { retryAlone: isRowFault });
  }

  /** Opens the database, applies migrations, and returns the store. */
  static async open(
    config: DatabaseConfig,
    now: () => number = Date.now,
  ): Promise<SubmissionStore> {
    const timeoutMs = config.timeoutMs ?? DEFAULT_DATABASE_TIMEOUT_MS;
    const client = await withDeadline(openClient(config), timeoutMs);
    const opened: { close(): unknown }[] = [client];
    try {
      const applied = await withDeadline(migrate(client, now), timeoutMs);
      const created = applied === MIGRATIONS.length;
      // Remote databases, and in-memory ones (private to the client's connection, so nothing
      // else can hold their lock), commit through the client.
      if (!isEmbedded(config.url) || config.url === ":memory:") {
        return new SubmissionStore(client, {
          created,
          timeoutMs,
          read: async (sql, args) =>
            (await client.execute({ sql, args })).rows as unknown as Record<string, unknown>[],
          commit: async (rows) => {
            const args = rows.flatMap((row) => [...row.values, ...(row.keySince ?? [])]);
            const result = await client.execute({ sql: insertBatchSql(rows), args });
            const inserted = new Set(result.rows.map((row) => String(row[0])));
            return rows.map((row) => inserted.has(row.id));
          },
          release: () => Promise.resolve(client.close()),
        });
      }
      // Imported here, not at the top: runtimes without native modules (Workers) never load it.
      const { EmbeddedConnection } = await import("./embedded.ts");
      const connection = await EmbeddedConnection.open(config.url);
      opened.push(connection);
      const thread = config.writerThread === true && WriterThread.available()
        ? await WriterThread.start(config.url)
        : undefined;
      return new SubmissionStore(client, {
        created,
        timeoutMs,
        read: (sql, args) => connection.all(sql, args),
        commit: thread !== undefined
          ? (rows) => thread.commit(rows)
          : (rows) => connection.commit(rows),
        release: async () => {
          await thread?.close();
          connection.close();
          client.close();
        },
      });
    } catch (error) {
      for (const resource of opened) resource.close();
      throw error;
    }
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
    try {
      return await withDeadline(
        this.#writer.write(pendingRow(submission, keyWindowStart)),
        this.#timeoutMs,
      );
    } catch (error) {
      throw new StorageError(error);
    }
  }

  /** The submission with receipt id `id`, or undefined. */
  async findById(id: string): Promise<SubmissionSummary | undefined> {
    const rows = await this.#query(`SELECT ${SUMMARY_COLUMNS} FROM submissions WHERE id = ?`, [id]);
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
    const rows = await this.#query(FIND_BY_IDEMPOTENCY_KEY, [
      ...keyCheckArgs(sourceHash, key, since),
    ]);
    return rows[0] === undefined ? undefined : toSummary(rows[0]);
  }

  /**
   * A named secret (a salt, a signing key), created with `create` on first use. Concurrent
   * creators race harmlessly: the first insert wins and everyone reads the winner back.
   * `created` is true when this call stored it.
   */
  async secret(
    name: string,
    create: () => Uint8Array<ArrayBuffer>,
    now: () => number,
  ): Promise<{ value: Uint8Array<ArrayBuffer>; created: boolean }> {
    try {
      const insert = await withDeadline(
        this.client.execute({
          sql: "INSERT OR IGNORE INTO secrets (name, value, created_at) VALUES (?, ?, ?)",
          args: [name, create(), new Date(now()).toISOString()],
        }),
        this.#timeoutMs,
      );
      const rows = await withDeadline(
        this.client.execute({ sql: "SELECT value FROM secrets WHERE name = ?", args: [name] }),
        this.#timeoutMs,
      );
      const value = rows.rows[0]?.value;
      if (!(value instanceof ArrayBuffer)) throw new Error("secret missing after insert");
      return { value: new Uint8Array(value), created: insert.rowsAffected === 1 };
    } catch (error) {
      throw new StorageError(error);
    }
  }

  /** Waits for queued writes, then closes the database. */
  async close(): Promise<void> {
    await this.#writer.idle();
    this.#writer.close();
    await this.#release();
  }

  async #query(sql: string, args: Parameters<Read>[1]): Promise<Record<string, unknown>[]> {
    try {
      return await withDeadline(this.#read(sql, args), this.#timeoutMs);
    } catch (error) {
      throw new StorageError(error);
    }
  }
}
