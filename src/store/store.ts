/**
 * The submission store: an append-only libSQL table written through group commit. Every failure
 * of the database surfaces as {@linkcode StorageError} (mapped to `503 unavailable` / -32603), so
 * the handler never has to know which client or which error it was, and every call has a
 * deadline: a stalled database answers 503, it never hangs a request.
 *
 * How a row gets committed, in three hops: {@linkcode SubmissionStore.append} queues it with the
 * {@linkcode GroupCommitter}, which hands a batch to this store's commit function, which is one
 * of: `EmbeddedConnection.commit` (embedded.ts) on this thread, the same on the writer thread
 * ({@linkcode WriterThread}), or one Hrana batch (a multi-row insert and the rows' receipt
 * signatures, in one transaction) on a remote database. The batch's receipts are signed just
 * before it is written, and each signature is stored in its row's transaction.
 *
 * @module
 */
import { DEFAULT_DATABASE_TIMEOUT_MS } from "../defaults.ts";
import type { Client } from "@libsql/client";
import { OutcomeUnknownError, StorageError } from "../errors.ts";
import { type DatabaseConfig, embeddedFilePath, isEmbedded, openClient } from "./client.ts";
import {
  ConnectionStateError,
  DeadlineError,
  IndeterminateError,
  isBusy,
  withDeadline,
} from "./faults.ts";
import { GroupCommitter } from "./group_commit.ts";
import { migrateSchema, MIGRATIONS } from "./migrations.ts";
import {
  BEFORE_DEADLINE,
  FIND_BY_IDEMPOTENCY_KEY,
  insertBatch,
  insertSignaturesSql,
  keyCheckArgs,
  type NewSubmission,
  type PendingRow,
  pendingRow,
  signatureValues,
  type SignedFields,
  type StoredSignature,
  type SubmissionSummary,
  SUMMARY_COLUMNS,
  toSummary,
} from "./rows.ts";
import type { IdentityStamp } from "./file_guard.ts";
import { RemoteConnection } from "./remote.ts";
import { WriterThread } from "./writer_thread.ts";

export type {
  NewSubmission,
  StoredSignature,
  SubmissionKind,
  SubmissionSummary,
  Surface,
} from "./rows.ts";

export { DEFAULT_DATABASE_TIMEOUT_MS } from "../defaults.ts";

/**
 * The receipt signer failed before the batch was written (nothing was stored). Not a fault of
 * the database nor of one row: the batch is not retried row by row, and the caller gets the
 * signer's own error (an internal error, not "storage unavailable").
 */
class SigningFailure extends Error {
  constructor(cause: unknown) {
    super("receipt signing failed", { cause });
  }
}

/**
 * Whether a failed batch may be retried one row per transaction. Only a row's own fault (a
 * constraint) is worth isolating; a busy, stalled or broken database would fail every row again.
 */
function isRowFault(error: unknown): boolean {
  return !(isBusy(error) || error instanceof SigningFailure || error instanceof DeadlineError ||
    error instanceof ConnectionStateError || error instanceof IndeterminateError);
}

/**
 * One batch as SQL statements on a `@libsql/client` client (remote and in-memory databases):
 * the rows in one multi-row `INSERT … RETURNING` (`RETURNING` names the rows inserted), their
 * receipt signatures in a second statement of the same write transaction, each only where its
 * row now exists, and last the deadline guard ({@linkcode BEFORE_DEADLINE}): a Hrana batch, sent
 * as one pipeline request, that commits all of it before `deadline` by the database's clock or
 * nothing at all.
 */
async function commitStatements(
  client: Client,
  rows: readonly PendingRow[],
  deadline: number,
): Promise<boolean[]> {
  const statements = [insertBatch(rows)];
  const signed = rows.filter((row) => row.signature !== undefined);
  if (signed.length > 0) {
    statements.push({
      sql: insertSignaturesSql(signed.length),
      args: signed.flatMap((row) => [...row.signature!, row.id]),
    });
  }
  if (Number.isFinite(deadline)) statements.push({ sql: BEFORE_DEADLINE, args: [deadline] });
  const [result] = await client.batch(statements, "write");
  const inserted = new Set(result.rows.map((row) => String(row[0])));
  return rows.map((row) => inserted.has(row.id));
}

/**
 * The remote commit ({@linkcode commitStatements}) on the connection's current client. A
 * failure is reported as {@linkcode IndeterminateError} unless it is known that nothing was
 * applied: the request was never sent, the connection was refused, or the server answered it
 * with an error (the batch is one transaction, so a refused one stored nothing). A 5xx
 * may come from a gateway in front of the database that did forward it, so it proves nothing.
 */
async function commitRemote(
  connection: RemoteConnection,
  rows: readonly PendingRow[],
  deadline: number,
): Promise<boolean[]> {
  const before = connection.lastSend;
  try {
    return await commitStatements(connection.client, rows, deadline);
  } catch (error) {
    const sent = connection.lastSend;
    const nothingApplied = sent === before || sent.connectFailed ||
      (sent.status >= 400 && sent.status < 500);
    throw nothingApplied ? error : new IndeterminateError(error);
  }
}

/**
 * Signs the receipts of rows committed together (`signReceipts` in src/signing/receipt.ts): one
 * signature per row, in order.
 */
export type ReceiptSigner = (
  receipts: readonly SignedFields[],
) => Promise<readonly StoredSignature[]>;

/** What {@linkcode SubmissionStore.append} reports for a row it stored. */
export interface Appended {
  /** The receipt's signature, stored with the row; absent when the store signs nothing. */
  readonly signature?: StoredSignature;
}

type Read = (
  sql: string,
  args: (string | number)[] | Readonly<Record<string, string | number>>,
) => Promise<Record<string, unknown>[]>;
type Commit = (rows: readonly PendingRow[], deadline: number) => Promise<readonly boolean[]>;

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
  /** The schema version before this start's migrations (0: a new database) and after them. */
  readonly schema: { readonly from: number; readonly to: number };
  readonly #writer: GroupCommitter<PendingRow, Appended | undefined>;
  readonly #commit: Commit;
  #signReceipts: ReceiptSigner | undefined;
  readonly #read: Read;
  readonly #timeoutMs: number;
  readonly #release: () => Promise<void>;
  readonly #abandonRead: (() => void) | undefined;
  /** The file of an embedded database (guarded by src/store/file_guard.ts). */
  readonly #embeddedPath: string | undefined;

  private constructor(
    client: Client,
    parts: {
      created: boolean;
      schema: { from: number; to: number };
      read: Read;
      commit: Commit;
      release: () => Promise<void>;
      timeoutMs: number;
      /** Drops the connection of a read past its deadline (remote databases). */
      abandonRead?: () => void;
      /** Drops the connection of a commit past its deadline (remote databases). */
      abandonCommit?: () => void;
      /** The file of an embedded database. */
      embeddedPath?: string;
    },
  ) {
    this.client = client;
    this.created = parts.created;
    this.schema = { from: parts.schema.from, to: parts.schema.to };
    this.statements = { run: (sql, args = {}) => this.#query(sql, args) };
    this.#read = parts.read;
    this.#release = parts.release;
    this.#timeoutMs = parts.timeoutMs;
    this.#abandonRead = parts.abandonRead;
    this.#embeddedPath = parts.embeddedPath;
    this.#commit = parts.commit;
    this.#writer = new GroupCommitter((rows, deadline) => this.#signAndCommit(rows, deadline), {
      retryAlone: isRowFault,
      timeoutMs: parts.timeoutMs,
      onAbandon: parts.abandonCommit,
    });
  }

  /** Opens the database, applies migrations, and returns the store. */
  static async open(
    config: DatabaseConfig,
    now: () => number = Date.now,
  ): Promise<SubmissionStore> {
    const timeoutMs = config.timeoutMs ?? DEFAULT_DATABASE_TIMEOUT_MS;
    const client = await withDeadline(openClient(config, { server: true }), timeoutMs);
    const opened: { close(): unknown }[] = [client];
    try {
      const schema = await withDeadline(migrateSchema(client, now), timeoutMs);
      const created = schema.applied === MIGRATIONS.length;
      // Remote databases commit and read on connections of their own (src/store/remote.ts),
      // each dropped for a fresh one when a call on it passes its deadline, so one dark socket
      // holds at most one call. Commits never queue behind reads in the client.
      if (!isEmbedded(config.url)) {
        const writer = await RemoteConnection.open(config);
        const reader = await RemoteConnection.open(config);
        return new SubmissionStore(client, {
          created,
          schema,
          timeoutMs,
          read: async (sql, args) =>
            (await reader.client.execute({ sql, args })).rows as unknown as Record<
              string,
              unknown
            >[],
          commit: (rows, deadline) => commitRemote(writer, rows, deadline),
          abandonRead: () => reader.drop(),
          abandonCommit: () => writer.drop(),
          release: () => {
            writer.close();
            reader.close();
            client.close();
            return Promise.resolve();
          },
        });
      }
      // In-memory databases (private to the client's connection, so nothing else can hold their
      // lock) commit through the client.
      if (config.url === ":memory:") {
        return new SubmissionStore(client, {
          created,
          schema,
          timeoutMs,
          read: async (sql, args) =>
            (await client.execute({ sql, args })).rows as unknown as Record<string, unknown>[],
          commit: (rows, deadline) => commitStatements(client, rows, deadline),
          release: () => Promise.resolve(client.close()),
        });
      }
      // Imported here, not at the top: runtimes without native modules (Workers) never load it.
      const { EmbeddedConnection } = await import("./embedded.ts");
      const connection = await EmbeddedConnection.open(config.url, {
        walLimitBytes: config.walLimitBytes,
      });
      opened.push(connection);
      const thread = config.writerThread === true && WriterThread.available()
        ? await WriterThread.start(config.url, config.walLimitBytes)
        : undefined;
      return new SubmissionStore(client, {
        created,
        schema,
        timeoutMs,
        embeddedPath: /(^|[?&])mode=memory(&|$)/.test(config.url)
          ? undefined
          : embeddedFilePath(config.url),
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
   * Signs every receipt this store commits from now on with `sign`, in the transaction that
   * stores its row (the intake sets it: src/intake/accept.ts).
   */
  signReceiptsWith(sign: ReceiptSigner): void {
    this.#signReceipts = sign;
  }

  /**
   * One commit of the group committer: the batch's receipts are signed first (one signature for
   * the batch, or the single form for a batch of one), then every row goes into one transaction
   * with its signature. A signature made for a row that is then not stored (the key check skipped
   * it, or the commit failed) is never stored nor sent: it dies with the call. `deadline` is the
   * call's (src/store/group_commit.ts).
   */
  async #signAndCommit(
    rows: readonly PendingRow[],
    deadline: number,
  ): Promise<(Appended | undefined)[]> {
    const sign = this.#signReceipts;
    let signatures: readonly StoredSignature[] | undefined;
    try {
      signatures = sign === undefined ? undefined : await sign(rows.map((row) => row.signed));
    } catch (error) {
      throw new SigningFailure(error);
    }
    // Set on the rows themselves (they belong to this store's queue): no copy of each row. A
    // batch retried row by row is signed again, each row alone, so each keeps its own.
    if (signatures !== undefined) {
      for (let i = 0; i < rows.length; i++) rows[i].signature = signatureValues(signatures[i]);
    }
    const inserted = await this.#commit(rows, deadline);
    return inserted.map((stored, i) =>
      !stored ? undefined : signatures === undefined ? {} : { signature: signatures[i] }
    );
  }

  /**
   * Appends one submission; resolves only once it is durably committed, with its receipt's
   * stored signature (if the store signs). Throws {@linkcode OutcomeUnknownError} when the commit
   * was sent and its outcome is unknown, and {@linkcode StorageError} only when nothing was or
   * will be stored. With `keyWindowStart` (an ISO time) and an idempotency key, resolves `false`
   * instead, storing nothing, when the same source used the same key since then.
   */
  append(submission: NewSubmission, keyWindowStart?: string): Promise<Appended | false> {
    const failed = (error: unknown): never => {
      if (error instanceof IndeterminateError) {
        throw new OutcomeUnknownError(submission.id, { cause: error });
      }
      if (error instanceof SigningFailure) throw error.cause;
      throw new StorageError(error);
    };
    let writing: Promise<Appended | undefined>;
    try {
      // The committer keeps the deadline: a write still queued at it is never sent, and one
      // sent without an answer is reported as indeterminate.
      writing = this.#writer.write(pendingRow(submission, keyWindowStart));
    } catch (error) {
      return Promise.reject(error).catch(failed);
    }
    return writing.then((appended) => appended ?? false, failed);
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

  /**
   * Stores a fresh random token inside an embedded database file for the file guard (migration
   * 6), keeping the newest 16, and says how to read the file's own copy. Undefined for remote and
   * in-memory databases.
   */
  async stampIdentity(
    randomBytes: (length: number) => Uint8Array<ArrayBuffer>,
    now: () => number,
  ): Promise<IdentityStamp | undefined> {
    const path = this.#embeddedPath;
    if (path === undefined) return undefined;
    const token = Array.from(randomBytes(16), (byte) => byte.toString(16).padStart(2, "0"))
      .join("");
    try {
      const run = (sql: string, args: (string | number)[] = []) =>
        withDeadline(this.client.execute({ sql, args }), this.#timeoutMs);
      await run(
        "INSERT INTO database_identity (token, stamped_at) VALUES (?, ?)",
        [token, new Date(now()).toISOString()],
      );
      await run(
        `DELETE FROM database_identity WHERE seq NOT IN
          (SELECT seq FROM database_identity ORDER BY seq DESC LIMIT 16)`,
      );
    } catch (error) {
      throw new StorageError(error);
    }
    const { EmbeddedConnection } = await import("./embedded.ts");
    return {
      token,
      tokens: async () =>
        (await EmbeddedConnection.readFile(path, "SELECT token FROM database_identity"))
          .map((row) => String(row.token)),
      // On the checked connection, which never blocks the thread on a lock (the client's
      // connection would wait up to its busy timeout while another process holds the lock).
      settle: async () => void await this.#query("PRAGMA wal_checkpoint(PASSIVE)", []),
    };
  }

  /** Waits for queued writes, then closes the database. */
  async close(): Promise<void> {
    await this.#writer.idle();
    this.#writer.close();
    await this.#release();
  }

  async #query(sql: string, args: Parameters<Read>[1]): Promise<Record<string, unknown>[]> {
    try {
      return await withDeadline(this.#read(sql, args), this.#timeoutMs, this.#abandonRead);
    } catch (error) {
      throw new StorageError(error);
    }
  }
}
