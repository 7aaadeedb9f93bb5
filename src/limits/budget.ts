/**
 * Spending one request of a per-source budget (docs/protocol-0.1.md §Rate limits): the rate-limit
 * middleware spends the `status` budget before any body is read, and the native submit and A2A
 * `SendMessage` paths spend `submissions` when they are about to store.
 *
 * @module
 */
import type { Context } from "../http/context.ts";
import { refuse } from "../http/errors.ts";
import type { RateLimiter } from "./rate.ts";

/** The two per-source budgets. */
export type RateBudget = "submissions" | "status";

const MESSAGES: Readonly<Record<RateBudget, string>> = {
  submissions: "Too many submissions from this source; retry after the time in Retry-After",
  status: "Too many status reads from this source; retry after the time in Retry-After",
};

/** A refused request: which budget, and how many whole seconds until one would be admitted. */
export interface RateRefusal {
  readonly budget: RateBudget;
  /** The same number as the `Retry-After` header (RFC 9110 §10.2.3). */
  readonly retryAfterSeconds: number;
}

/** How a protocol answers a rate refusal (native: {@linkcode nativeRateRefusal}). */
export type RateRefusalAnswer = (context: Context, refusal: RateRefusal) => Response;

/**
 * The native `429 rate_limited`: `Retry-After` and, in the body, the exhausted `budget` and the
 * same wait as a number (`retryAfterSeconds`), for a client whose library hides the headers.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { nativeRateRefusal } from "./budget.ts";
 *
 * const context = { log: {} } as Parameters<typeof nativeRateRefusal>[0];
 * const response = nativeRateRefusal(context, { budget: "status", retryAfterSeconds: 7 });
 * assert.equal(response.headers.get("retry-after"), "7");
 * assert.equal((await response.json()).error.retryAfterSeconds, 7);
 * ```
 */
export function nativeRateRefusal(context: Context, refusal: RateRefusal): Response {
  const { budget, retryAfterSeconds } = refusal;
  return refuse(context, "rate_limited", {
    message: MESSAGES[budget],
    headers: { "retry-after": String(retryAfterSeconds) },
    details: { budget, retryAfterSeconds },
    outcome: "refused",
  });
}

/**
 * Spends one request of `budget` for the context's source: undefined when admitted, the 429
 * response (`answer`'s, native by default) when not. With no limiter (the budget is `off`)
 * everything is admitted.
 */
export async function spendBudget(
  limiter: RateLimiter | undefined,
  budget: RateBudget,
  context: Context,
  answer: RateRefusalAnswer = nativeRateRefusal,
): Promise<Response | undefined> {
  if (limiter === undefined) return undefined;
  const decision = await limiter.check(context.source);
  if (decision.allowed) return undefined;
  return answer(context, { budget, retryAfterSeconds: decision.retryAfterSeconds });
}
