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

/**
 * Spends one request of `budget` for the context's source: undefined when admitted, the 429
 * response when not. With no limiter (the budget is `off`) everything is admitted.
 */
export async function spendBudget(
  limiter: RateLimiter | undefined,
  budget: RateBudget,
  context: Context,
): Promise<Response | undefined> {
  if (limiter === undefined) return undefined;
  const decision = await limiter.check(context.source);
  if (decision.allowed) return undefined;
  return refuse(context, "rate_limited", {
    message: MESSAGES[budget],
    headers: { "retry-after": String(decision.retryAfterSeconds) },
    details: { budget },
    outcome: "refused",
  });
}
