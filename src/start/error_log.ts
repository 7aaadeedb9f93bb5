/**
 * The operator's error lines (stderr, one JSON object each): when, what, why, and how often.
 *
 * `{"event":"error","name":…,"time":…,"cause":…,"count":n}`: the error's class name, the time
 * of the line, its cause in fixed words (src/database_error.ts: "connection refused",
 * "timeout", an SQLite code, an HTTP status from the database; never the error's own message,
 * which may quote a URL with a credential or submitted content), and `count`, how many times
 * it happened since the previous line of the same name and cause. An outage repeats the same
 * error for every request; the first is written at once, then at most one line per interval,
 * doubling from 1 s to a minute while it continues, so a long outage costs a few lines a minute
 * and the counts still add up to every occurrence. The interval starts again at 1 s after a
 * quiet minute.
 *
 * @module
 */
import { unref } from "../timers.ts";
import { describeDatabaseError } from "../database_error.ts";

/** What {@linkcode errorLogger} writes for one line. */
export interface ErrorLine {
  event: "error";
  name: string;
  /** A number of the Beacon's own the error is about (the tree heads' row `seq`). */
  seq?: number;
  /**
   * The retired key a withheld row is signed by: a public key, safe to print, and what the
   * operator must know to act on a leak (docs/keys.md).
   */
  retiredKey?: string;
  time: string;
  cause: string;
  count: number;
}

const FIRST_INTERVAL_MS = 1_000;
const MAX_INTERVAL_MS = 60_000;

/** One kind of error line (a name, a cause, a row) and its repeats not written yet. */
interface Repeats {
  /** When the next line of this kind may be written. */
  next: number;
  interval: number;
  /** Occurrences not written yet, and the line that describes them. */
  unwritten: number;
  line: Omit<ErrorLine, "count" | "time">;
  /** Writes the unwritten ones when their interval ends, if nothing came meanwhile. */
  timer: ReturnType<typeof setTimeout> | undefined;
}

const FILES_CHANGED = "the database files changed under the running server (removed, " +
  "replaced or overwritten by another process): it answers 503 until restarted on a database " +
  "you trust";

/** Errors of the Beacon's own that are their own cause: the cause, in words. */
const OWN_CAUSES: Readonly<Record<string, string>> = {
  DatabaseFileRemoved: FILES_CHANGED,
  DatabaseFileReplaced: FILES_CHANGED,
  DatabaseFileOverwritten: FILES_CHANGED,
  DatabaseWalRemoved: FILES_CHANGED,
  DatabaseWalReplaced: FILES_CHANGED,
  DatabaseShmRemoved: FILES_CHANGED,
  DatabaseShmReplaced: FILES_CHANGED,
  TreeHeadIgnored: "a tree-head row does not verify under the key it names (another database " +
    "writer appended it); it is ignored",
  TreeHeadWithheld: "a row carries no intake signature that verifies under the key (another " +
    "database writer inserted or changed it), or is dated in the future; no head covers it or " +
    "any later row",
  UnacknowledgedRowError: "an idempotent retry matched a row without a receipt signature that " +
    "verifies under the key (another database writer inserted or changed it); the retry got 500 " +
    "and nothing was signed",
  TreeHeadRefused: "the tree-head signer cannot vouch for the stored log; run review verify",
};

/** What the line says about `error`: its name, the row it names, its cause in fixed words. */
export function describeError(error: unknown): Omit<ErrorLine, "count" | "time"> {
  const name = (error as Error)?.name;
  const named = typeof name === "string" && /^[A-Za-z][A-Za-z0-9]{0,59}$/.test(name);
  const own = named && Object.hasOwn(OWN_CAUSES, name) ? OWN_CAUSES[name] : undefined;
  const seq = (error as { seq?: unknown })?.seq;
  const retiredKey = (error as { retiredKey?: unknown })?.retiredKey;
  return {
    event: "error",
    name: named ? name : "unknown",
    ...(Number.isSafeInteger(seq) ? { seq: seq as number } : {}),
    ...(typeof retiredKey === "string" && /^[A-Za-z0-9_-]{43}$/.test(retiredKey)
      ? { retiredKey }
      : {}),
    cause: own ?? describeDatabaseError(error),
  };
}

/** A running error log: `report` for each error, `flush` writes the counts not yet written. */
export interface ErrorLogger {
  report(error: unknown): void;
  flush(): void;
}

/**
 * Builds the error log on `write` (one object per line) and the clock `now`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { errorLogger } from "./error_log.ts";
 *
 * const lines: { count: number; cause: string }[] = [];
 * let clock = 0;
 * const log = errorLogger((line) => lines.push(line), () => clock);
 * const refused = Object.assign(new Error("x"), { code: "ECONNREFUSED" });
 * for (let i = 0; i < 5; i++) log.report(refused);
 * clock = 2_000;
 * log.report(refused);
 * log.flush();
 * assert.deepEqual(lines.map((line) => line.count), [1, 5]);
 * assert.match(lines[0].cause, /^connection refused/);
 * ```
 */
export function errorLogger(
  write: (line: ErrorLine) => void,
  now: () => number = Date.now,
): ErrorLogger {
  const kinds = new Map<string, Repeats>();
  const emit = (repeats: Repeats, count: number) => {
    try {
      write({ ...repeats.line, time: new Date(now()).toISOString(), count });
    } catch {
      // A failing log must not turn a mapped error into an unmapped one.
    }
  };
  const writeUnwritten = (repeats: Repeats) => {
    clearTimeout(repeats.timer);
    repeats.timer = undefined;
    if (repeats.unwritten === 0) return;
    emit(repeats, repeats.unwritten);
    repeats.unwritten = 0;
    repeats.next = now() + repeats.interval;
    repeats.interval = Math.min(repeats.interval * 2, MAX_INTERVAL_MS);
  };
  return {
    report(error) {
      const line = describeError(error);
      const key = `${line.name}\u0000${line.cause}\u0000${line.seq ?? ""}`;
      const at = now();
      let repeats = kinds.get(key);
      // Quiet for a minute past its interval: the next one is news again.
      if (repeats?.unwritten === 0 && at - repeats.next > MAX_INTERVAL_MS) {
        kinds.delete(key);
        repeats = undefined;
      }
      if (repeats === undefined) {
        if (kinds.size >= 1_000) kinds.clear(); // bounded, whatever names errors carry
        repeats = {
          next: at + FIRST_INTERVAL_MS,
          interval: FIRST_INTERVAL_MS * 2,
          unwritten: 0,
          line,
          timer: undefined,
        };
        kinds.set(key, repeats);
        emit(repeats, 1);
        return;
      }
      repeats.unwritten++;
      repeats.line = line;
      if (at >= repeats.next) return writeUnwritten(repeats);
      if (repeats.timer === undefined) {
        const pending = repeats;
        pending.timer = setTimeout(() => writeUnwritten(pending), pending.next - at);
        unref(pending.timer);
      }
    },
    flush() {
      for (const repeats of kinds.values()) writeUnwritten(repeats);
    },
  };
}
