/**
 * A GCRA limiter kept in the libSQL database, for deployments where several stateless instances
 * share one database (Workers, Deno Deploy, several VMs on one Turso database). Each check is one
 * atomic UPSERT whose time comes from the database clock (`unixepoch('subsec')`), so instances
 * with skewed clocks still share one timeline. All `SET` expressions read the old row (SQLite
 * UPDATE semantics), so `allowed` and `tat` are decided together.
 *
 * Flooders are answered locally: a key refused once is refused without a round trip until its
 * retry time (the per-instance block cache), so a flood costs one database write per
 * `Retry-After`, not one per request.
 *
 * @module
 */
import type { Client } from "@libsql/client";
import { StorageError } from "../errors.ts";
import { type RateDecision, type RateLimit, type RateLimiter, retryAfterSeconds } from "./rate.ts";

const NOW = "(unixepoch('subsec') * 1000.0)";

const UPSERT = `INSERT INTO rate_limits (key, tat, allowed) VALUES (:key, ${NOW} + :interval, 1)
  ON CONFLICT (key) DO UPDATE SET
    allowed = (max(tat, ${NOW}) + :interval - :period <= ${NOW}),
    tat = CASE WHEN max(tat, ${NOW}) + :interval - :period <= ${NOW}
      THEN max(tat, ${NOW}) + :interval ELSE tat END
  RETURNING tat, allowed, ${NOW} AS now`;

/** The shared, database-backed limiter. */
export class SharedRateLimiter implements RateLimiter {
  readonly #client: Client;
  readonly #limit: RateLimit;
  readonly #blocked = new Map<string, number>();
  readonly #localNow: () => number;
  #checks = 0;

  /** `localNow` only times the block cache; the limit itself runs on the database clock. */
  constructor(client: Client, limit: RateLimit, localNow: () => number = Date.now) {
    this.#client = client;
    this.#limit = limit;
    this.#localNow = localNow;
  }

  /** Consumes one request for `key` if allowed. */
  async check(key: string): Promise<RateDecision> {
    const blockedUntil = this.#blocked.get(key);
    if (blockedUntil !== undefined) {
      const waitMs = blockedUntil - this.#localNow();
      if (waitMs > 0) return { allowed: false, retryAfterSeconds: retryAfterSeconds(waitMs) };
      this.#blocked.delete(key);
    }
    const interval = this.#limit.periodMs / this.#limit.count;
    let row;
    try {
      const result = await this.#client.execute({
        sql: UPSERT,
        args: { key, interval, period: this.#limit.periodMs },
      });
      row = result.rows[0];
      if (++this.#checks % 1000 === 0) this.#forgetIdleKeys();
    } catch (error) {
      throw new StorageError(error);
    }
    if (Number(row.allowed) === 1) return { allowed: true };
    const now = Number(row.now);
    const waitMs = Math.max(Number(row.tat), now) + interval - this.#limit.periodMs - now;
    if (this.#blocked.size > 100_000) this.#blocked.clear();
    this.#blocked.set(key, this.#localNow() + waitMs);
    return { allowed: false, retryAfterSeconds: retryAfterSeconds(waitMs) };
  }

  #forgetIdleKeys(): void {
    // A key whose arrival time has passed behaves exactly like a new key, so removing it is safe.
    this.#client.execute(`DELETE FROM rate_limits WHERE tat < ${NOW}`).catch(() => {});
  }
}
