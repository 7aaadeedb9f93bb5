/**
 * A GCRA limiter kept in the libSQL database, for deployments where several stateless instances
 * share one database (Workers, Deno Deploy, several VMs on one Turso database). Each check is one
 * atomic UPSERT whose time comes from the database clock (`unixepoch('subsec')`), so instances
 * with skewed clocks still share one timeline.
 *
 * A refusal writes nothing (design principle 6): the upsert's `WHERE` leaves a refused key's row
 * as it was, and one read then gives the exact `Retry-After`. Flooders are answered locally: a
 * key refused once is refused without a round trip until its retry time (the per-instance block
 * cache), so a flood costs one read per `Retry-After`, not one per request.
 *
 * @module
 */
import { StorageError } from "../errors.ts";
import { type RateDecision, type RateLimit, type RateLimiter, retryAfterSeconds } from "./rate.ts";

const NOW = "(unixepoch('subsec') * 1000.0)";

/**
 * Admits a request by advancing the key's arrival time, or changes nothing: the `WHERE` of the
 * upsert (SQLite "upsert" clause) leaves a refused key's row untouched, so a refusal writes
 * nothing. A row comes back only when the request is admitted.
 */
const ADMIT = `INSERT INTO rate_limits (key, tat) VALUES (:key, ${NOW} + :interval)
  ON CONFLICT (key) DO UPDATE SET tat = max(tat, ${NOW}) + :interval
    WHERE max(tat, ${NOW}) + :interval - :period <= ${NOW}
  RETURNING tat`;

/** For a refused key: its arrival time and the database's now, to compute `Retry-After`. */
const WAIT = `SELECT tat, ${NOW} AS now FROM rate_limits WHERE key = :key`;

/**
 * What the limiter needs from the database: one statement at a time, in autocommit. The store
 * provides it (`Database.statements`): for an embedded database through its checked
 * connection, so a busy lock is waited for without blocking the thread and can never leave a
 * transaction open behind the limiter's upserts.
 */
export interface StatementRunner {
  /** Runs one statement with named arguments; its rows keyed by column name. */
  run(
    sql: string,
    args?: Readonly<Record<string, string | number>>,
  ): Promise<Record<string, unknown>[]>;
}

/** The shared, database-backed limiter. */
export class SharedRateLimiter implements RateLimiter {
  readonly #database: StatementRunner;
  readonly #limit: RateLimit;
  readonly #keyOf: (source: string) => Promise<string>;
  readonly #blocked = new Map<string, number>();
  readonly #localNow: () => number;
  #checks = 0;

  /**
   * `keyOf` turns a source key into what is stored (the salted source hash: raw addresses are
   * never at rest). `localNow` only times the block cache; the limit runs on the database clock.
   */
  constructor(
    database: StatementRunner,
    limit: RateLimit,
    keyOf: (source: string) => Promise<string>,
    localNow: () => number = Date.now,
  ) {
    this.#database = database;
    this.#limit = limit;
    this.#keyOf = keyOf;
    this.#localNow = localNow;
  }

  /** Consumes one request for `source` if allowed. */
  async check(source: string): Promise<RateDecision> {
    const blockedUntil = this.#blocked.get(source);
    if (blockedUntil !== undefined) {
      const waitMs = blockedUntil - this.#localNow();
      if (waitMs > 0) return { allowed: false, retryAfterSeconds: retryAfterSeconds(waitMs) };
      this.#blocked.delete(source);
    }
    const interval = this.#limit.periodMs / this.#limit.count;
    const period = this.#limit.periodMs;
    let waitMs: number;
    try {
      const key = await this.#keyOf(source);
      const admitted = await this.#database.run(ADMIT, { key, interval, period });
      if (++this.#checks % 1000 === 0) this.#forgetIdleKeys();
      if (admitted.length > 0) return { allowed: true };
      const row = (await this.#database.run(WAIT, { key }))[0];
      const now = Number(row?.now ?? 0);
      waitMs = Math.max(Number(row?.tat ?? now), now) + interval - period - now;
    } catch (error) {
      throw new StorageError(error);
    }
    if (this.#blocked.size > 100_000) this.#blocked.clear();
    this.#blocked.set(source, this.#localNow() + waitMs);
    return { allowed: false, retryAfterSeconds: retryAfterSeconds(waitMs) };
  }

  #forgetIdleKeys(): void {
    // A key whose arrival time has passed behaves exactly like a new key, so removing it is safe.
    this.#database.run(`DELETE FROM rate_limits WHERE tat < ${NOW}`).catch(() => {});
  }
}
