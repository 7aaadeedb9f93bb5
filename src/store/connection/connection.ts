/**
 * The storage seam: one small interface for the connection the store reads and commits
 * submissions on, whatever the database is (in the style of libsql-client-ts, whose `Client` has
 * one file per transport). Each kind lives beside this file, in a folder of its own with its SQL
 * where it has more than one file, and `open.ts` picks one from the URL:
 *
 * - `remote/`: sqld or Turso over Hrana, a commit and a read connection of their own, each
 *   dropped for a fresh one when a call on it passes its deadline (`droppable_client.ts`), and
 *   the commit as one Hrana batch (`batch.ts`);
 * - `memory.ts`: `:memory:`, through the general-purpose client (its database is private to it);
 * - `embedded/`: a `file:` database on a checked connection (`checked_connection.ts`),
 *   committing on this thread or on the writer thread (`writer_thread.ts`, `writer_worker.ts`).
 *
 * @module
 */
import type { BatchSignature, PendingRow } from "../rows.ts";

/** A value a read binds: a blob is bound as bytes (a head's tiles), never as text. */
export type ReadValue = string | number | Uint8Array;

/** The arguments of a read: positional, or named (`:name`). */
export type ReadArgs =
  | ReadValue[]
  | Readonly<Record<string, ReadValue>>;

/** Where the store reads and commits submissions. */
export interface Connection {
  /**
   * Runs one statement in autocommit (a read, or a single-statement write such as the shared rate
   * limiter's upsert); its rows, keyed by column name.
   */
  read(sql: string, args: ReadArgs): Promise<Record<string, unknown>[]>;
  /**
   * Inserts `rows` and, when some were inserted, the batch's signature in one durable
   * transaction; resolves with, per row, the `seq` it was stored under, or 0 when it was not
   * inserted (its idempotency key was already used in its window; `seq` starts at 1).
   * `deadline` is the call's (src/store/group_commit.ts): a kind that can be reached late (a
   * remote database) stores nothing when the call arrives after it.
   */
  commit(
    rows: readonly PendingRow[],
    deadline: number,
    batch?: BatchSignature,
  ): Promise<readonly number[]>;
  /** Drops the connection of a read past its deadline (remote databases). */
  readonly abandonRead?: () => void;
  /** Drops the connection of a commit past its deadline (remote databases). */
  readonly abandonCommit?: () => void;
  /** The database file, for an embedded file database (what the file guard watches). */
  readonly file?: string;
  /**
   * Runs one read on {@linkcode Connection.file} as it is on disk, WAL aside (the file guard's
   * check that the file is still the database this process opened); present with `file`.
   */
  readonly readFileOnDisk?: (sql: string) => Promise<Record<string, unknown>[]>;
  /** Closes what the connection opened (the general-purpose client is its opener's to close). */
  close(): Promise<void>;
}
