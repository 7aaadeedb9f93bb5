/**
 * Refuses a source that exceeds its rate with `429 rate_limited` and an exact `Retry-After`,
 * before the body is read and before any storage is touched (design principle 6).
 *
 * @module
 */
import { errorResponse } from "../errors.ts";
import type { RateLimiter } from "../limits/rate.ts";
import type { Middleware } from "./compose.ts";

/** The rate-limit middleware; with no limiter configured it passes everything on. */
export function rateLimit(limiter: RateLimiter | undefined): Middleware {
  if (limiter === undefined) return (_context, next) => next();
  return async (context, next) => {
    const decision = await limiter.check(context.source);
    if (decision.allowed) return next();
    context.log.outcome = "refused";
    context.log.code = "rate_limited";
    return errorResponse("rate_limited", undefined, {
      "retry-after": String(decision.retryAfterSeconds),
    });
  };
}
