/**
 * How the database fails, in terms the store acts on: busy (another connection holds the lock),
 * past its deadline (stalled or unreachable), or a connection in a state no receipt may be
 * issued from. Free of any driver import, so every runtime can load it.
 *
 * @module
 */

/** Whether the driver reported that another connection holds the lock (SQLite result codes). */
export function isBusy(error: unknown): boolean {
  const code = (error as { code?: unknown })?.code;
  return code === "SQLITE_BUSY" || code === "SQLITE_LOCKED" ||
    (typeof code === "string" && code.startsWith("SQLITE_BUSY_"));
}

/** Thrown when a commit left the connection in a state no receipt may be issued from. */
export class ConnectionStateError extends Error {
  /** Names the broken invariant. */
  constructor(what: string) {
    super(`Cannot trust the database connection: ${what}`);
    this.name = "ConnectionStateError";
  }
}

/** A database call that did not answer within its deadline. */
export class DeadlineError extends Error {
  /** Names the deadline. */
  constructor(ms: number) {
    super(`Database call exceeded its ${ms} ms deadline`);
    this.name = "DeadlineError";
  }
}

/** How often pending deadlines are checked: deadlines are seconds long, so 100 ms late is fine. */
const SWEEP_MS = 100;

interface Pending {
  readonly expiresAt: number;
  readonly ms: number;
  readonly reject: (error: DeadlineError) => void;
}

const pending = new Set<Pending>();
let sweeper: ReturnType<typeof setInterval> | undefined;

function sweep(): void {
  const now = Date.now();
  for (const entry of pending) {
    if (entry.expiresAt > now) continue;
    pending.delete(entry);
    entry.reject(new DeadlineError(entry.ms));
  }
  if (pending.size === 0) {
    clearInterval(sweeper);
    sweeper = undefined;
  }
}

/**
 * Rejects with {@linkcode DeadlineError} if `work` has not settled within `ms` (up to 100 ms
 * later). Every call shares one coarse timer, which runs only while calls are pending: a timer
 * per database call was measurable on the submission path.
 */
export function withDeadline<T>(work: Promise<T>, ms: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const entry: Pending = { expiresAt: Date.now() + ms, ms, reject };
    pending.add(entry);
    sweeper ??= setInterval(sweep, SWEEP_MS);
    work.then((value) => {
      pending.delete(entry);
      resolve(value);
    }, (error) => {
      pending.delete(entry);
      reject(error);
    });
  });
}
