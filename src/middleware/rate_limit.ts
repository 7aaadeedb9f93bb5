/**
 * Refuses a source that exceeds its rate with `429 rate_limited` and an exact `Retry-After`,
 * before the body is read and before any storage is touched (design principle 6).
 *
 * Each source has two budgets (docs/protocol-0.1.md §Rate limits). `submissions`
 * (`BEACON_RATE_LIMIT`) is spent by storing: native submit and A2A `SendMessage`. `status`
 * (`BEACON_STATUS_RATE_LIMIT`) is spent by reading a receipt: native status and every A2A
 * request, before its body is read; it is generous, so a client polling its own receipt never
 * runs out of submissions. The 429 body says which budget was exhausted.
 *
 * @module
 */
import { type RateBudget, type RateRefusalAnswer, spendBudget } from "../limits/budget.ts";
import type { RateLimiter } from "../limits/rate.ts";
import type { Middleware } from "./compose.ts";

/**
 * The rate-limit middleware for one budget; with no limiter it passes everything on. `answer`
 * builds the 429 in the route's protocol (native by default; the A2A endpoint's is JSON-RPC).
 */
export function rateLimit(
  limiter: RateLimiter | undefined,
  budget: RateBudget = "submissions",
  answer?: RateRefusalAnswer,
): Middleware {
  if (limiter === undefined) return (_context, next) => next();
  return async (context, next) => (await spendBudget(limiter, budget, context, answer)) ?? next();
}
