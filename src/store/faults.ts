/**
 * How the database fails, in terms the store acts on: busy (another connection holds the lock),
 * past its deadline (stalled or unreachable), or a connection in a state no receipt may be
 * issued from. Free of any driver import, so every runtime can load it.
 *
 * @module
 */
import { CoarseTimer } from "../timers.ts";

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

/**
 * A database call that did not answer within its deadline, and was never sent or is known not to
 * have been applied: nothing of it was or will be stored.
 */
export class DeadlineError extends Error {
  /** Names the deadline. */
  constructor(ms: number) {
    super(`Database call exceeded its ${ms} ms deadline`);
    this.name = "DeadlineError";
  }
}

/**
 * A commit that was sent and did not answer, or failed in a way that does not say whether the
 * database applied it (the connection broke after the request left, the deadline passed while it
 * was in flight): its rows may or may not be stored. The "indeterminate" outcome of a
 * distributed commit; the caller must not claim either way.
 */
export class IndeterminateError extends Error {
  /** `cause` (never sent to anyone) is what was seen, if anything. */
  constructor(cause?: unknown) {
    super("The commit was sent and its outcome is unknown", { cause });
    this.name = "IndeterminateError";
  }
}

/** How often pending deadlines are checked: deadlines are seconds long, so 100 ms late is fine. */
const SWEEP_MS = 100;

interface Pending {
  readonly expiresAt: number;
  readonly ms: number;
  readonly reject: (error: DeadlineError) => void;
  readonly onExpire: (() => void) | undefined;
}

const pending = new Set<Pending>();
/** The shared coarse timer (src/timers.ts), which restarts itself where Workers stopped it. */
const sweeper = new CoarseTimer(SWEEP_MS);

function sweep(now: number): boolean {
  for (const entry of pending) {
    if (entry.expiresAt > now) continue;
    pending.delete(entry);
    entry.onExpire?.();
    entry.reject(new DeadlineError(entry.ms));
  }
  return pending.size > 0;
}

/**
 * Calls `check(now)` on the shared deadline timer (every 100 ms) until it returns false. An owner
 * of many deadlines (one per queued write) registers once, instead of one entry per deadline.
 */
export function watchDeadlines(check: (now: number) => boolean, now = Date.now()): void {
  sweeper.watch(check, now);
}

/**
 * Rejects with {@linkcode DeadlineError} if `work` has not settled within `ms` (up to 100 ms
 * later), after calling `onExpire` (which abandons the call's connection). Every call shares one
 * coarse timer, which runs only while calls are pending: a timer per database call was measurable
 * on the submission path.
 */
export function withDeadline<T>(work: Promise<T>, ms: number, onExpire?: () => void): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const now = Date.now();
    const entry: Pending = { expiresAt: now + ms, ms, reject, onExpire };
    pending.add(entry);
    sweeper.watch(sweep, now);
    work.then((value) => {
      pending.delete(entry);
      resolve(value);
    }, (error) => {
      pending.delete(entry);
      reject(error);
    });
  });
}
