/**
 * Notices an operator fault SQLite cannot: the embedded database file removed or replaced under
 * a running Beacon. An open SQLite connection keeps writing to the file it opened (POSIX keeps an
 * unlinked file alive while a descriptor is open), so after `rm beacon.db*` or
 * `mv other.db beacon.db` every commit still succeeds, into a file nobody will ever open again,
 * and each receipt is a lie (issue 10, finding 6). The guard compares the device and inode at the
 * database's path with the ones it saw when the Beacon opened it, and notices the WAL file
 * vanishing, on a timer; once either happens it stays tripped, so the Beacon stops acknowledging
 * until it is restarted on a database it can trust.
 *
 * The WAL check rests on SQLite's rule that only the last connection to close deletes the WAL
 * (sqlite.org/wal.html §"Persistence of WAL mode"): the Beacon keeps its connection open for its
 * whole life, so a WAL that was there and is gone was removed by someone else. (A WAL replaced by
 * another file is not detected: SQLite keeps using the one it has open, which loses no data the
 * database file would not show.)
 *
 * What the timer cannot close is the interval itself: receipts issued between the fault and the
 * next check (at most `intervalMs`) were written to the old file.
 *
 * @module
 */

/** What the guard noticed. */
export type FileChange = "database_removed" | "database_replaced" | "wal_removed";

/** A running guard. */
export interface FileGuard {
  /** What was noticed first, or undefined while the files are the ones the Beacon opened. */
  readonly tripped: FileChange | undefined;
  /** Checks now (the timer calls this) and returns {@linkcode tripped}. */
  check(): Promise<FileChange | undefined>;
  /** Stops the timer. */
  stop(): void;
}

/** Options of {@linkcode guardDatabaseFile}. */
export interface FileGuardOptions {
  /** How often to check, in milliseconds. Default 2000. */
  readonly intervalMs?: number;
  /** Called once, when the guard trips. */
  readonly onChange?: (change: FileChange) => void;
}

interface Identity {
  readonly dev: number;
  readonly ino: number;
}

type Stat = (path: string) => Promise<Identity | undefined>;

/** Default check interval: a fault is noticed within two seconds. */
export const GUARD_INTERVAL_MS = 2_000;

/** `node:fs` stat (Deno, Bun and Node all provide it; only embedded databases are guarded). */
async function statter(): Promise<Stat> {
  const { stat } = await import("node:fs/promises");
  return async (path) => {
    try {
      const { dev, ino } = await stat(path);
      return { dev, ino };
    } catch (error) {
      if ((error as { code?: string }).code === "ENOENT") return undefined;
      throw error;
    }
  };
}

/** Keeps a timer from holding the process open (Node and Bun timers, and Deno's numbers). */
export function unref(timer: ReturnType<typeof setInterval>): void {
  if (typeof timer === "object" && timer !== null && "unref" in timer) {
    (timer as { unref(): void }).unref();
    return;
  }
  const deno = (globalThis as { Deno?: { unrefTimer?(id: number): void } }).Deno;
  deno?.unrefTimer?.(timer as unknown as number);
}

/**
 * Starts guarding the database file at `path` (and its `-wal`), as they are now: call it right
 * after the database was opened. When no file is at `path`, there is nothing to guard and the
 * guard never trips.
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
  let tripped: FileChange | undefined;
  let pending: Promise<FileChange | undefined> | undefined;

  const trip = (change: FileChange) => {
    if (tripped !== undefined) return;
    tripped = change;
    options.onChange?.(change);
  };
  const inspect = async (): Promise<FileChange | undefined> => {
    if (tripped !== undefined || database === undefined) return tripped;
    const now = await stat(path);
    if (now === undefined) trip("database_removed");
    else if (now.dev !== database!.dev || now.ino !== database!.ino) trip("database_replaced");
    else {
      const walNow = await stat(`${path}-wal`);
      if (wal !== undefined && walNow === undefined) trip("wal_removed");
      wal ??= walNow; // a WAL created after the open is guarded from then on
    }
    return tripped;
  };
  const check = () => {
    // One check at a time: a slow disk must not pile up stat calls.
    pending ??= inspect().catch(() => tripped).finally(() => pending = undefined);
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
    check,
    stop() {
      clearInterval(timer);
    },
  };
}
