/**
 * One connection to an embedded database through the `libsql` driver (the native library
 * `@libsql/client` wraps for `file:` URLs), used for the submissions hot path: commits and
 * receipt lookups.
 *
 * Why not `@libsql/client` here: after a statement fails with `SQLITE_BUSY`, version 0.18 leaves
 * it un-reset, so the connection stays inside an implicit transaction and every later insert
 * "succeeds" into a transaction that is never committed (receipts for rows that were
 * lost at shutdown). This connection makes every transaction explicit (`BEGIN IMMEDIATE` …
 * `COMMIT`), rolls back on any error, and checks the driver's autocommit state after each
 * commit: a receipt is released only after a `COMMIT` that succeeded on a connection known to be
 * outside a transaction. If a rollback cannot bring the connection back to autocommit, it is
 * closed and reopened before it serves again.
 *
 * It also prepares each statement once per connection and reuses it across commits, instead of
 * preparing a multi-row statement for every batch.
 *
 * Busy waits never block the thread: the connection's `busy_timeout` is 0, and a `SQLITE_BUSY`
 * is retried after an asynchronous back-off until the caller's busy budget is spent (SQLite
 * §"busy handler": a blocking handler would freeze every request on the thread for its length).
 *
 * @module
 */
import type Database from "libsql";
import {
  DEFAULT_WAL_LIMIT_BYTES,
  DURABILITY_PRAGMAS,
  embeddedFilePath,
  ERASE_FREED_PRAGMA,
} from "../../client.ts";
import { ConnectionStateError, isBusy } from "../../faults.ts";
import { sleep } from "../../../timers.ts";
import type { BatchSignature, PendingRow } from "../../rows.ts";
import { INSERT_BATCH, INSERT_ROW, INSERT_ROW_UNLESS_KEY_USED, keyedInsertArgs } from "./sql.ts";

type Driver = typeof Database;
type Connection = InstanceType<Driver>;

/**
 * The native driver, loaded on first use: bundles for runtimes without native modules (Workers)
 * keep it external and never reach this import.
 */
let driver: Promise<Driver> | undefined;
/** The part of the driver's statement used here (its typings cannot express positional rest). */
interface Statement {
  run(...values: unknown[]): { changes: number; lastInsertRowid: number | bigint };
  all(...values: unknown[]): unknown[];
}
/** A value a statement binds. */
export type SqlValue = string | number | null | Uint8Array;

/**
 * The WAL bound (`DatabaseConfig.walLimitBytes`) as the two pragmas that keep it: the pages
 * after which a commit on this connection copies the log back into the database
 * (`wal_autocheckpoint`; SQLite's default is 1,000 pages, about 4 MiB), and the size the log
 * file is cut back to once it has been copied (`journal_size_limit`; without it the file keeps
 * its largest size, which a long-running reader that holds a checkpoint back can make larger).
 * Each checkpoint runs inside a commit, on the thread that commits (the serving thread, or the
 * writer thread), and rewrites every page the log touched, so a larger log merges more rewrites
 * of the same hot pages (the table's last page, the index pages) into one write: the default
 * (about 80 MiB) is what made a durable submission cheaper (bench/README.md). It changes no
 * guarantee: a commit is durable once its WAL frames are synced (`synchronous = FULL`), before
 * any checkpoint. It also bounds what a restart after a crash replays (docs/deploy.md, "The WAL
 * and recovery").
 */
function walPragmas(pageSize: number, limitBytes: number): string[] {
  return [
    `PRAGMA wal_autocheckpoint = ${Math.max(1, Math.floor(limitBytes / pageSize))}`,
    `PRAGMA journal_size_limit = ${Math.floor(limitBytes)}`,
  ];
}

/** How long to wait before the `attempt`-th retry of a busy statement, in milliseconds. */
function backoff(attempt: number): number {
  return Math.min(2 ** attempt, 50);
}

/** An embedded database connection with explicit, checked transactions. */
export class EmbeddedConnection {
  readonly #driver: Driver;
  readonly #path: string;
  readonly #busyBudgetMs: number;
  readonly #walLimitBytes: number;
  #db: Connection;
  #statements = new Map<string, Statement>();
  #closed = false;

  private constructor(driver: Driver, path: string, busyBudgetMs: number, walLimitBytes: number) {
    this.#driver = driver;
    this.#path = path;
    this.#busyBudgetMs = busyBudgetMs;
    this.#walLimitBytes = walLimitBytes;
    this.#db = this.#connect();
  }

  /**
   * Opens `url` (a `file:` URL or `:memory:`). A statement that finds the database busy is
   * retried for up to `busyBudgetMs` before its error is thrown. The write-ahead log is kept to
   * about `walLimitBytes` ({@linkcode walPragmas}).
   */
  static async open(
    url: string,
    { busyBudgetMs = 5000, walLimitBytes = DEFAULT_WAL_LIMIT_BYTES } = {},
  ): Promise<EmbeddedConnection> {
    driver ??= import("libsql").then((module) => module.default);
    const path = url === ":memory:" ? url : embeddedFilePath(url);
    return new EmbeddedConnection(await driver, path, busyBudgetMs, walLimitBytes);
  }

  /**
   * Runs one read on the database file as it is on disk, WAL aside: a read-only `immutable=1`
   * connection (sqlite.org/uri.html), opened and closed for the call. SQLite's own close keeps the
   * process's locks on the file, where closing a descriptor of our own would drop them.
   */
  static async readFile(path: string, sql: string): Promise<Record<string, unknown>[]> {
    driver ??= import("libsql").then((module) => module.default);
    const Driver = await driver;
    const db = new Driver(`file:${encodeURI(path)}?immutable=1`, { readonly: true });
    try {
      return db.prepare(sql).all() as Record<string, unknown>[];
    } finally {
      db.close();
    }
  }

  #connect(): Connection {
    const db = new this.#driver(this.#path);
    try {
      for (const pragma of DURABILITY_PRAGMAS) db.exec(pragma);
      db.exec(ERASE_FREED_PRAGMA);
      db.exec("PRAGMA busy_timeout = 0");
      const { page_size } = db.prepare("PRAGMA page_size").get() as { page_size: number };
      for (const pragma of walPragmas(Number(page_size), this.#walLimitBytes)) db.exec(pragma);
    } catch (error) {
      db.close();
      throw error;
    }
    return db;
  }

  #prepare(sql: string): Statement {
    // A late call after close (a check still running at shutdown) must fail as an error: the
    // native driver aborts the process on a closed handle.
    if (this.#closed) throw new ConnectionStateError("used after it was closed");
    let statement = this.#statements.get(sql);
    if (statement === undefined) {
      statement = this.#db.prepare(sql) as unknown as Statement;
      this.#statements.set(sql, statement);
    }
    return statement;
  }

  /** Runs `attempt`, retrying after a back-off while the database is busy. */
  async #whileBusy<T>(attempt: () => T): Promise<T> {
    const deadline = Date.now() + this.#busyBudgetMs;
    for (let tries = 0;; tries++) {
      try {
        return attempt();
      } catch (error) {
        if (!isBusy(error) || Date.now() >= deadline) throw error;
      }
      await sleep(backoff(tries));
    }
  }

  /**
   * Runs one statement in autocommit (a read, or a single-statement write such as an upsert with
   * `RETURNING`), with positional or named (`:name`) arguments; its rows, keyed by column name.
   */
  all(
    sql: string,
    args: readonly SqlValue[] | Readonly<Record<string, SqlValue>>,
  ): Promise<Record<string, unknown>[]> {
    return this.#whileBusy(() => {
      try {
        const statement = this.#prepare(sql);
        // The driver reads one plain object as named parameters (better-sqlite3's convention).
        const rows = Array.isArray(args) ? statement.all(...args) : statement.all(args);
        return rows as Record<string, unknown>[];
      } finally {
        this.#ensureAutocommit();
      }
    });
  }

  /**
   * Inserts `rows` and, when some were inserted, their batch's signature in one durable
   * transaction; resolves with, per row, the `seq` it was stored under, or 0 when its
   * idempotency key was already used in its window. Rejects, with nothing committed and the
   * connection back in autocommit, on any error.
   */
  commit(rows: readonly PendingRow[], batch?: BatchSignature): Promise<number[]> {
    return this.#whileBusy(() => {
      if (this.#closed) throw new ConnectionStateError("used after it was closed");
      // IMMEDIATE takes the write lock up front, so the only busy point is here, before any row.
      this.#db.exec("BEGIN IMMEDIATE");
      const seqs: number[] = new Array(rows.length);
      try {
        // Under the write lock SQLite numbers this transaction's rows consecutively: the batch
        // row names them by their first and last `seq`.
        let first = 0;
        let last = 0;
        for (let i = 0; i < rows.length; i++) {
          const row = rows[i];
          const result = row.keySince === undefined
            ? this.#prepare(INSERT_ROW).run(...row.values)
            : this.#prepare(INSERT_ROW_UNLESS_KEY_USED).run(...keyedInsertArgs(row));
          seqs[i] = result.changes === 1 ? Number(result.lastInsertRowid) : 0;
          if (seqs[i] !== 0) {
            last = seqs[i];
            if (first === 0) first = last;
          }
        }
        if (batch !== undefined && first !== 0) {
          this.#prepare(INSERT_BATCH).run(first, last, batch.leaves, batch.signature);
        }
        this.#db.exec("COMMIT");
      } catch (error) {
        this.#rollback();
        throw error;
      }
      // COMMIT returned; the receipt may go out only if the connection agrees it is outside a
      // transaction (SQLite's autocommit flag, sqlite3_get_autocommit()).
      this.#ensureAutocommit();
      return seqs;
    });
  }

  #rollback(): void {
    try {
      if (this.#db.inTransaction) this.#db.exec("ROLLBACK");
    } catch {
      // Checked below: a connection still inside a transaction is replaced.
    }
    if (this.#db.inTransaction) this.#reopen();
  }

  /** Throws (after replacing the connection) if it is unexpectedly inside a transaction. */
  #ensureAutocommit(): void {
    if (!this.#db.inTransaction) return;
    this.#reopen();
    throw new ConnectionStateError("still inside a transaction after it ended");
  }

  /** Closing a connection inside a transaction rolls that transaction back (SQLite close). */
  #reopen(): void {
    const broken = this.#db;
    this.#statements = new Map();
    try {
      broken.close();
    } catch {
      // The old handle is dropped either way.
    }
    this.#db = this.#connect();
  }

  /** Closes the connection. */
  close(): void {
    this.#closed = true;
    this.#statements.clear();
    this.#db.close();
  }
}
