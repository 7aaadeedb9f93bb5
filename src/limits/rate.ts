/**
 * Per-source rate limiting with GCRA (the generic cell rate algorithm, ITU-T I.371): one
 * "theoretical arrival time" per key, no window-edge bursts, and an exact `Retry-After`.
 *
 * A limit of `count` per `period` admits a burst of `count` requests, then one request every
 * `period / count`.
 *
 * @module
 */

/** A parsed rate limit: `count` requests per `periodMs`. */
export interface RateLimit {
  /** Requests admitted per period (also the burst size). */
  readonly count: number;
  /** The period in milliseconds. */
  readonly periodMs: number;
}

/** The outcome of one check. */
export type RateDecision = { allowed: true } | { allowed: false; retryAfterSeconds: number };

/** Anything that decides whether a key may make one more request now. */
export interface RateLimiter {
  /** Consumes one request for `key` if allowed. */
  check(key: string): RateDecision | Promise<RateDecision>;
}

const UNITS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/**
 * Parses `BEACON_RATE_LIMIT` syntax: `off`, or `<count>/<n><unit>` with unit `s`, `m`, `h`
 * or `d` (`10/1m`, `100/30s`; the number before the unit may be left out: `10/m`).
 * Throws on anything else, so a typo in configuration stops the start instead of disabling the
 * limit silently.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseRateLimit } from "./rate.ts";
 *
 * assert.deepEqual(parseRateLimit("10/1m"), { count: 10, periodMs: 60000 });
 * assert.equal(parseRateLimit("off"), undefined);
 * ```
 */
export function parseRateLimit(text: string): RateLimit | undefined {
  // Not trimmed: a value with spaces is refused, never read as something it does not say.
  const lower = text.toLowerCase();
  if (lower === "off") return undefined;
  const match = /^([1-9][0-9]{0,8})\/([1-9][0-9]{0,5})?([smhd])$/.exec(lower);
  if (match === null) {
    throw new Error(`Cannot parse rate limit: expected "off" or "<count>/<n><s|m|h|d>"`);
  }
  return { count: Number(match[1]), periodMs: Number(match[2] ?? "1") * UNITS[match[3]] };
}

/** Formats a limit back to the configuration syntax (for the discovery document). */
export function formatRateLimit(limit: RateLimit): string {
  for (const unit of ["d", "h", "m", "s"]) {
    if (limit.periodMs % UNITS[unit] === 0) {
      return `${limit.count}/${limit.periodMs / UNITS[unit]}${unit}`;
    }
  }
  return `${limit.count}/${limit.periodMs / 1000}s`;
}

/**
 * One GCRA step. Given the key's stored theoretical arrival time (`tat`, epoch ms, or undefined
 * for a new key) and `now`, returns the new `tat` to store, or the wait until a request would be
 * admitted. Pure, so the in-memory and the libSQL limiters share it.
 */
export function gcraStep(
  limit: RateLimit,
  tat: number | undefined,
  now: number,
): { allowed: true; tat: number } | { allowed: false; waitMs: number } {
  const interval = limit.periodMs / limit.count;
  const burstTolerance = limit.periodMs - interval; // lets `count` requests through at once
  const newTat = Math.max(tat ?? now, now) + interval;
  const allowAt = newTat - interval - burstTolerance;
  if (now < allowAt) return { allowed: false, waitMs: allowAt - now };
  return { allowed: true, tat: newTat };
}

/** `Retry-After` in whole seconds (RFC 9110 §10.2.3), rounded up so a retry then succeeds. */
export function retryAfterSeconds(waitMs: number): number {
  return Math.max(1, Math.ceil(waitMs / 1000));
}

/**
 * An in-memory GCRA limiter for a single process. Memory is bounded: keys whose arrival time is
 * in the past are forgotten (they would be treated exactly like new keys), swept when the map
 * grows past `maxKeys`; if every key is still active, the oldest are dropped first.
 */
export class MemoryRateLimiter implements RateLimiter {
  readonly #limit: RateLimit;
  readonly #now: () => number;
  readonly #maxKeys: number;
  readonly #tats = new Map<string, number>();

  /** Creates a limiter with its own clock (tests pass a fake one). */
  constructor(limit: RateLimit, now: () => number = Date.now, maxKeys = 100_000) {
    this.#limit = limit;
    this.#now = now;
    this.#maxKeys = maxKeys;
  }

  /** Consumes one request for `key` if allowed. */
  check(key: string): RateDecision {
    const now = this.#now();
    const step = gcraStep(this.#limit, this.#tats.get(key), now);
    if (!step.allowed) return { allowed: false, retryAfterSeconds: retryAfterSeconds(step.waitMs) };
    this.#tats.delete(key); // re-insert so Map order is least-recently-used first
    this.#tats.set(key, step.tat);
    if (this.#tats.size > this.#maxKeys) this.#sweep(now);
    return { allowed: true };
  }

  #sweep(now: number): void {
    for (const [key, tat] of this.#tats) if (tat <= now) this.#tats.delete(key);
    for (const key of this.#tats.keys()) {
      if (this.#tats.size <= this.#maxKeys * 0.9) break;
      this.#tats.delete(key);
    }
  }
}
