/**
 * Notices operator faults SQLite cannot: the files of the embedded database removed, replaced or
 * overwritten under a running Beacon. An open SQLite connection keeps writing to the file it
 * opened (POSIX keeps an unlinked file alive while a descriptor is open), so after `rm beacon.db*`
 * or `mv other.db beacon.db` every commit still succeeds, into a file nobody will ever open again,
 * and each receipt is a lie. On a timer the guard compares, with what it saw
 * when the Beacon opened the database:
 *
 * - the device and inode of the database file, its WAL and its `-shm` index (each removed or
 *   replaced). The `-shm` file is the shared-memory index every connection to a WAL database
 *   coordinates through (sqlite.org/walformat.html §"The wal-index or shm file"): a second
 *   process that opens the database after it was removed builds a fresh one, and from then on
 *   the two processes write over each other's WAL frames (sqlite.org/howtocorrupt.html §2.1 and
 *   §2.4: committed transactions are lost without any error);
 * - a token stored inside the database (migration 6: `database_identity`, one row per server
 *   start), read from the file itself, WAL aside: a file overwritten in place
 *   (`cp backup.db beacon.db`, same inode) no longer holds it. The token is committed to the
 *   WAL first; the guard asks for a checkpoint (`settle`) before it returns, so the token is in
 *   the file itself before the Beacon serves its first request. A check that finds the token
 *   missing once it was seen is an overwrite;
 * - while the token has not reached the file, a landmark the file held at the start (its newest
 *   submission's seq and id: rows are append-only, so the same database keeps it). Another
 *   process's reader holding a read transaction across the start (a backup, `review export`)
 *   holds every checkpoint back (sqlite.org/wal.html §"Checkpoint starvation"), and a later
 *   checkpoint would copy the token into whatever file is at the path by then, a foreign one
 *   included. So until the token is seen, each check first asks whether the file still holds
 *   the landmark, and only then for a checkpoint: another database, or a backup older than the
 *   start, lacks it. A copy identical to the file at the start is the same database and loses
 *   nothing (the WAL still holds every later commit). Left open: an overwrite in the instant
 *   between that look and the checkpoint, and a file that held no Beacon table at the start (a
 *   database created while a reader held it).
 *
 * Once anything changed, the guard stays tripped: the Beacon stops acknowledging until an
 * operator restarts it on a database it can trust.
 *
 * A check that could not run is not evidence. Reading the token opens the file again, which
 * fails when the process is out of descriptors (`EMFILE`: a few hundred idle connections are
 * enough under a low limit), when a permission changed, or when the disk does not answer; a
 * `stat` can fail the same way. Only a read that succeeded and lacks the token, or a file SQLite
 * says is no database or holds no token table, counts as an overwrite, and only when a second
 * look a moment later sees the same. A check that failed is
 * tried again a few times at once, then at the next tick, and is reported under its own name
 * (`onCheckFailed`, `DatabaseFileCheckFailed` in the log): the guard is then `unchecked`, not
 * tripped, and the Beacon keeps serving; the next check that runs decides.
 *
 * The WAL and `-shm` checks rest on SQLite's rule that only the last connection to close deletes
 * them (sqlite.org/wal.html §"Persistence of WAL mode"): the Beacon keeps its connections open
 * for its whole life, so a file that was there and is gone was removed by someone else.
 *
 * What the timer cannot close is the interval itself: receipts issued between the fault and the
 * next check (at most `intervalMs`) may be lost. And an in-place copy of the database taken after
 * this start holds the token too; only the inode and presence checks see such a copy.
 *
 * One home for the idea: the guard itself ({@linkcode guardDatabaseFile}), the check a second
 * process makes before it opens the file ({@linkcode missingIndexProblem}), and the guard as the
 * Beacon runs it ({@linkcode guardFile}: on the connection's file, reporting through `onError`).
 *
 * @module
 */
import { sleep, unref } from "../timers.ts";

/** What the guard noticed. */
export type FileChange =
  | "database_removed"
  | "database_replaced"
  | "database_overwritten"
  | "wal_removed"
  | "wal_replaced"
  | "shm_removed"
  | "shm_replaced";

/** The running server's token inside the database, and how to read the file's own copy. */
export interface IdentityStamp {
  /** The token this start stored. */
  readonly token: string;
  /**
   * The tokens the database file itself holds, WAL aside (an `immutable=1` read-only connection,
   * which reads the file only). Rejects when the file is no longer a database with the table.
   */
  tokens(): Promise<readonly string[]>;
  /**
   * A fact the database file itself holds now (WAL aside) that stays true of it for as long as
   * it is the same database, or undefined when it holds none. Rejects like `tokens()`.
   */
  landmark(): Promise<FileLandmark | undefined>;
  /** Whether the database file itself still holds `landmark`. Rejects like `tokens()`. */
  holds(landmark: FileLandmark): Promise<boolean>;
  /** Asks for a checkpoint, so the token reaches the file; errors are ignored. */
  settle(): Promise<void>;
}

/** A row the file held at the start, by its table's `seq` and the value it had there. */
export interface FileLandmark {
  readonly table: "submissions" | "database_identity";
  readonly seq: number;
  readonly value: string;
}

/**
 * What the guard knows now: `guarding` (the last check ran and found the files the Beacon
 * opened), `unchecked` (the last check could not run: {@linkcode FileCheckFailure}), `tripped`.
 */
export type GuardState = "guarding" | "unchecked" | "tripped";

/** A running guard. */
export interface FileGuard {
  /** What was noticed first, or undefined while the files are the ones the Beacon opened. */
  readonly tripped: FileChange | undefined;
  /** What the guard knows now (for readiness and metrics). */
  readonly state: GuardState;
  /** Checks now (the timer calls this) and returns {@linkcode tripped}. */
  check(): Promise<FileChange | undefined>;
  /** Stops the timer. */
  stop(): void;
  /** Resolves once a check still running has ended (call before closing the database). */
  idle(): Promise<void>;
}

/** Options of {@linkcode guardDatabaseFile}. */
export interface FileGuardOptions {
  /** How often to check, in milliseconds. Default 2000. */
  readonly intervalMs?: number;
  /** Called once, when the guard trips. */
  readonly onChange?: (change: FileChange) => void;
  /** Called for each check that could not run (after its retries), with why. */
  readonly onCheckFailed?: (failure: FileCheckFailure) => void;
  /** The token stored inside the database by this start, to notice an in-place overwrite. */
  readonly identity?: IdentityStamp;
}

interface Identity {
  readonly dev: number;
  readonly ino: number;
  /** Creation time where the file system records one (0 otherwise): inode numbers are reused. */
  readonly born: number;
}

type Stat = (path: string) => Promise<Identity | undefined>;

/** Default check interval: a fault is noticed within two seconds. */
export const GUARD_INTERVAL_MS = 2_000;

/** Checkpoints tried at start (50 ms apart) for the token to reach the file. */
const SETTLE_TRIES_AT_START = 20;

/** Tries of a check that could not run, 100 ms apart, before it waits for the next tick. */
const CHECK_TRIES = 3;

/**
 * A check that could not run: `cause` is what failed (a `stat` or the read of the token, such as
 * `EMFILE` or SQLite's "unable to open"). It says nothing about the files.
 */
export class FileCheckFailure extends Error {
  /** The error that stopped the check; logged by its cause words, never its message. */
  constructor(cause: unknown) {
    super("The database file could not be checked; it is checked again at the next tick", {
      cause,
    });
    this.name = "DatabaseFileCheckFailed";
  }
}

/**
 * Whether a failed read of the token is evidence about the file: SQLite read it and found no
 * database (`SQLITE_NOTADB`, `SQLITE_CORRUPT`) or no token table (another database, or an empty
 * file). Anything else (the file could not be opened, the disk did not answer) is not.
 */
function isEvidence(error: unknown): boolean {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  if (code === "SQLITE_NOTADB" || code === "SQLITE_CORRUPT") return true;
  return code === "SQLITE_ERROR" && /no such table/.test(String(message));
}

/**
 * A read of the file that failed without saying anything about it rejects (the check did not
 * run); one that shows the file is no database or lacks the table answers `false`.
 */
function asEvidence(read: Promise<boolean>): Promise<boolean> {
  return read.catch((error) => {
    if (isEvidence(error)) return false;
    throw error;
  });
}

/**
 * Looks once more, 100 ms later, before a missing mark becomes a verdict: the `immutable` read
 * assumes a file nobody writes, so a read across a checkpoint's page writes can see a torn file;
 * an overwrite persists.
 */
async function stillMissing(holds: () => Promise<boolean>): Promise<boolean> {
  await sleep(100);
  return !(await holds());
}

/** Whether the file lacks `landmark`, on two looks. */
async function lacksLandmark(identity: IdentityStamp, landmark: FileLandmark): Promise<boolean> {
  const holds = () => asEvidence(identity.holds(landmark));
  return !(await holds()) && await stillMissing(holds);
}

/** `node:fs` stat (Deno, Bun and Node all provide it; only embedded databases are guarded). */
async function statter(): Promise<Stat> {
  const { stat } = await import("node:fs/promises");
  return async (path) => {
    try {
      const { dev, ino, birthtimeMs } = await stat(path);
      return { dev, ino, born: birthtimeMs ?? 0 };
    } catch (error) {
      if ((error as { code?: string }).code === "ENOENT") return undefined;
      throw error;
    }
  };
}

/**
 * A one-line reason not to open the embedded database at `path` from a second process, or
 * undefined. A WAL without its `-shm` index means a running server's index was removed (the last
 * connection to close deletes both; a crash leaves both): opening the database now would create
 * a fresh index beside the server's and lose writes (sqlite.org/howtocorrupt.html §2.4).
 */
export async function missingIndexProblem(path: string): Promise<string | undefined> {
  const stat = await statter();
  const { stat: statSize } = await import("node:fs/promises");
  for (let look = 1;; look++) {
    if (await stat(`${path}-wal`) === undefined || await stat(`${path}-shm`) !== undefined) return;
    // A WAL of no more than its 32-byte header holds no frame, so nothing can be lost (a TRUNCATE
    // checkpoint leaves one); sqlite.org/fileformat.html §4.1.
    const size = await statSize(`${path}-wal`).then((facts) => facts.size, () => 0);
    if (size <= 32) return;
    // The last connection to close deletes the -shm index just before the WAL (sqlite3WalClose):
    // for that instant the pair looks like a removed index. A removed index stays removed.
    if (look === 10) break;
    await sleep(100);
  }
  return `Cannot open ${path}: its WAL is there but its -shm index is not, so a running ` +
    `server's index was removed. Stop that server first (or, if none runs, start the server ` +
    `once: it rebuilds the index); opening it now would lose writes`;
}

/**
 * Starts guarding the database file at `path` (and its `-wal` and `-shm`), as they are now:
 * call it right after the database was opened. When no file is at `path`, there is nothing to
 * guard and the guard never trips.
 *
 * The guard never opens the database file itself: closing any descriptor of a file drops every
 * POSIX advisory lock the process holds on it, SQLite's included (sqlite.org/howtocorrupt.html
 * §2.2), and another process could then take itself for the last connection and delete the WAL
 * under the server. It only stats, and reads through SQLite (`identity.tokens`), which keeps its
 * own descriptors of a locked file open until its locks are released.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { guardDatabaseFile } from "./file_guard.ts";
 *
 * const folder = await Deno.makeTempDir();
 * await Deno.writeTextFile(`${folder}/beacon.db`, "opened");
 * const guard = await guardDatabaseFile(`${folder}/beacon.db`);
 * assert.equal(await guard.check(), undefined);
 * await Deno.writeTextFile(`${folder}/other.db`, "another");
 * await Deno.rename(`${folder}/other.db`, `${folder}/beacon.db`);
 * assert.equal(await guard.check(), "database_replaced");
 * guard.stop();
 * await Deno.remove(folder, { recursive: true });
 * ```
 */
export async function guardDatabaseFile(
  path: string,
  options: FileGuardOptions = {},
): Promise<FileGuard> {
  const stat = await statter();
  const database = await stat(path);
  let wal = await stat(`${path}-wal`);
  let shm = await stat(`${path}-shm`);
  let tokenSeen = false;
  let tripped: FileChange | undefined;
  let unchecked = false;
  let pending: Promise<FileChange | undefined> | undefined;

  const trip = (change: FileChange) => {
    if (tripped !== undefined) return;
    tripped = change;
    options.onChange?.(change);
  };
  const same = (a: Identity, b: Identity) =>
    a.dev === b.dev && a.ino === b.ino && a.born === b.born;
  /** A companion file: gone once seen is a removal, another inode a replacement. */
  const companion = async (
    suffix: string,
    seen: Identity | undefined,
    removed: FileChange,
    replaced: FileChange,
  ): Promise<Identity | undefined> => {
    const now = await stat(path + suffix);
    if (seen !== undefined && now === undefined) trip(removed);
    else if (seen !== undefined && now !== undefined && !same(seen, now)) trip(replaced);
    return seen ?? now; // one created after the open is guarded from then on
  };
  const inspect = async (): Promise<FileChange | undefined> => {
    if (tripped !== undefined || database === undefined) return tripped;
    const now = await stat(path);
    if (now === undefined) trip("database_removed");
    else if (!same(now, database)) trip("database_replaced");
    if (tripped !== undefined) return tripped;
    wal = await companion("-wal", wal, "wal_removed", "wal_replaced");
    shm = await companion("-shm", shm, "shm_removed", "shm_replaced");
    const identity = options.identity;
    if (tripped === undefined && identity !== undefined) {
      const holdsToken = () =>
        asEvidence(identity.tokens().then((t) => t.includes(identity.token)));
      if (await holdsToken()) tokenSeen = true;
      else if (tokenSeen) {
        if (await stillMissing(holdsToken)) trip("database_overwritten");
      } else if (landmark !== undefined && await lacksLandmark(identity, landmark)) {
        trip("database_overwritten");
      } else await settleToken(identity);
    }
    return tripped;
  };
  /** One check, tried again at once a few times when it could not run. */
  const inspectWithRetries = async (): Promise<FileChange | undefined> => {
    for (let attempt = 1;; attempt++) {
      try {
        const change = await inspect();
        unchecked = false;
        return change;
      } catch (error) {
        if (attempt >= CHECK_TRIES) {
          unchecked = true;
          options.onCheckFailed?.(new FileCheckFailure(error));
          return tripped;
        }
        await sleep(100);
      }
    }
  };
  /**
   * Puts the token into the file: a checkpoint, then a look. A reader of another process (the
   * review tool) holds a checkpoint back while its read transaction lasts
   * (sqlite.org/wal.html §"Checkpoint starvation"), so a few tries, spaced out, before the first
   * request; a checkpoint copies only WAL frames not copied before, so once the token is in the
   * file, no later checkpoint writes it again.
   */
  const settleToken = async (identity: IdentityStamp, tries = 1) => {
    for (let attempt = 0; attempt < tries && !tokenSeen; attempt++) {
      if (attempt > 0) await sleep(50);
      await identity.settle().catch(() => {});
      tokenSeen = await identity.tokens().then(
        (tokens) => tokens.includes(identity.token),
        () => false,
      );
    }
  };
  let landmark: FileLandmark | undefined;
  if (database !== undefined && options.identity !== undefined) {
    await settleToken(options.identity, SETTLE_TRIES_AT_START);
    // Held back at the start: what the file holds now identifies it until the token arrives.
    if (!tokenSeen) landmark = await options.identity.landmark().catch(() => undefined);
  }
  const check = () => {
    // One check at a time: a slow disk must not pile up stat calls.
    pending ??= inspectWithRetries().finally(() => pending = undefined);
    return pending;
  };

  // No file at the path (an in-memory database by another name): nothing to guard.
  const timer = database === undefined
    ? undefined
    : setInterval(() => void check(), options.intervalMs ?? GUARD_INTERVAL_MS);
  if (timer !== undefined) unref(timer);
  return {
    get tripped() {
      return tripped;
    },
    get state(): GuardState {
      return tripped !== undefined ? "tripped" : unchecked ? "unchecked" : "guarding";
    },
    check,
    stop() {
      clearInterval(timer);
    },
    async idle() {
      await pending;
    },
  };
}

/** Why the Beacon stopped acknowledging, as the error name its `onError` hook receives. */
const FILE_CHANGE_ERRORS: Readonly<Record<FileChange, string>> = {
  database_removed: "DatabaseFileRemoved",
  database_replaced: "DatabaseFileReplaced",
  database_overwritten: "DatabaseFileOverwritten",
  wal_removed: "DatabaseWalRemoved",
  wal_replaced: "DatabaseWalReplaced",
  shm_removed: "DatabaseShmRemoved",
  shm_replaced: "DatabaseShmReplaced",
};

/**
 * The guard as the Beacon runs it, on the file its database connection opened (`file`:
 * `Connection.file`, undefined for remote and in-memory databases, which have none to guard):
 * it reports the change once, through `onError`, with an error whose name says what happened
 * (the message is fixed text). A file it may not stat is run unguarded, and reported.
 */
export async function guardFile(
  file: string | undefined,
  onError: ((error: unknown) => void) | undefined,
  identity: IdentityStamp | undefined,
): Promise<FileGuard | undefined> {
  if (file === undefined) return undefined;
  try {
    return await guardDatabaseFile(file, {
      identity,
      onChange(change) {
        const error = new Error(
          "The database file changed under the running Beacon; it answers 503 until restarted",
        );
        error.name = FILE_CHANGE_ERRORS[change];
        onError?.(error);
      },
      onCheckFailed: (failure) => onError?.(failure),
    });
  } catch (error) {
    onError?.(error); // no permission to stat the file: run unguarded rather than not at all
    return undefined;
  }
}
