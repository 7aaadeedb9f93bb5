/**
 * Which limiter a rate-limit option means, decided in one place for both budgets (submissions
 * and receipt reads): the caller's own limiter, the shared one in the database
 * (`rateLimitStore: "database"`), the in-memory one, or none (`"off"`).
 *
 * @module
 */
import { MemoryRateLimiter, parseRateLimit, type RateLimit, type RateLimiter } from "./rate.ts";
import { SharedRateLimiter, type StatementRunner } from "./shared_rate.ts";

/** What a database-backed limiter needs once the database is open. */
export interface SharedLimiterOptions {
  readonly statements: StatementRunner;
  /** The stored key for a source key (a salted hash: raw addresses are never at rest). */
  readonly keyOf: (source: string) => Promise<string>;
}

/** A rate-limit option, resolved once when the Beacon is created. */
export interface LimitChoice {
  /** The configured limit, for the discovery document; none for `"off"` or a caller's limiter. */
  readonly limit: RateLimit | undefined;
  /** The limiter to use; `shared` is given when the state lives in the database. */
  limiter(shared: SharedLimiterOptions | undefined): RateLimiter | undefined;
}

/**
 * Resolves a rate-limit option (`"10/1m"` syntax, a parsed limit, a limiter, or `"off"`).
 *
 * @example
 * ```ts
 * import { chooseLimiter } from "./select.ts";
 *
 * const choice = chooseLimiter(undefined, "2/1m", () => 0);
 * if (choice.limit?.count !== 2) throw new Error("expected the fallback limit");
 * const limiter = choice.limiter(undefined)!;
 * if (limiter !== choice.limiter(undefined)) throw new Error("expected one in-memory limiter");
 * ```
 */
export function chooseLimiter(
  option: string | RateLimit | RateLimiter | undefined,
  fallback: string,
  now: () => number,
): LimitChoice {
  const value = option ?? fallback;
  if (typeof value !== "string" && "check" in value) {
    return { limit: undefined, limiter: () => value };
  }
  const limit = typeof value === "string" ? parseRateLimit(value) : value;
  // The in-memory limiter lives as long as the Beacon, across database reconnects.
  const memory = limit && new MemoryRateLimiter(limit, now);
  return {
    limit,
    limiter: (shared) =>
      limit && shared ? new SharedRateLimiter(shared.statements, limit, shared.keyOf, now) : memory,
  };
}
