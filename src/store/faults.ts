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

/** Rejects with {@linkcode DeadlineError} if `work` has not settled within `ms`. */
export function withDeadline<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new DeadlineError(ms)), ms);
  });
  return Promise.race([work, expired]).finally(() => clearTimeout(timer));
}
