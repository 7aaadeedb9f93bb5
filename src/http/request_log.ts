/**
 * One log entry per request for the operator: route, status, outcome, receipt id, body size and
 * latency. Never content, never a raw address (only whether it was known), never headers. The
 * entry is written by the door (`door.ts`), the one way out of the Beacon.
 *
 * @module
 */
import type { Outcome, RequestLog } from "./context.ts";

export type { Outcome } from "../http/context.ts";

/** What the log hook receives for each request. */
export interface RequestLogEntry {
  /** ISO time the request arrived. */
  time: string;
  /** Route name, or `none` when no route matched. */
  route: string;
  /** HTTP method. */
  method: string;
  /** Response status. */
  status: number;
  /** What became of the request. */
  outcome: Outcome;
  /** Error code (native string or JSON-RPC number) for refusals. */
  code?: string | number;
  /** The receipt id for accepted submissions. */
  receiptId?: string;
  /** Body bytes read (0 when the body was never read). */
  bytes: number;
  /** Milliseconds from arrival to response headers. */
  ms: number;
}

/**
 * The outcome a status implies: below 400 `served`, 4xx `refused`, 5xx `failed`. Handlers set
 * an outcome only where the status says less (`accepted`, `replayed`, a JSON-RPC refusal in a
 * `200`, a `503` for a body the client broke off).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { outcomeOf } from "./request_log.ts";
 *
 * assert.equal(outcomeOf(304, {}), "served");
 * assert.equal(outcomeOf(404, {}), "refused");
 * assert.equal(outcomeOf(503, {}), "failed");
 * assert.equal(outcomeOf(202, { outcome: "replayed" }), "replayed");
 * ```
 */
export function outcomeOf(status: number, log: RequestLog): Outcome {
  if (log.outcome !== undefined) return log.outcome;
  if (status < 400) return "served";
  return status < 500 ? "refused" : "failed";
}

/** The facts of one request the log entry is made of. */
export interface Departure {
  readonly request: { readonly method: string };
  readonly startedAt: number;
  readonly log: RequestLog;
  readonly bytes: number;
}

/** The log entry for a request that is answered `status` at time `now`. */
export function logEntry(departure: Departure, status: number, now: number): RequestLogEntry {
  const { log, startedAt } = departure;
  const entry: RequestLogEntry = {
    time: new Date(startedAt).toISOString(),
    route: log.route ?? "none",
    method: departure.request.method,
    status,
    outcome: outcomeOf(status, log),
    bytes: departure.bytes,
    ms: Math.round((now - startedAt) * 10) / 10,
  };
  if (log.code !== undefined) entry.code = log.code;
  if (log.receiptId !== undefined) entry.receiptId = log.receiptId;
  return entry;
}

/**
 * Records a caught error in the request log and hands an unexpected one to `onError` (the
 * operator's log), never to the client. The one place a caught error is classified: this
 * boundary and the A2A endpoint, which answers in JSON-RPC inside its own `catch` because only it
 * knows the request id, both use it.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { recordFailure } from "./request_log.ts";
 *
 * const reported: unknown[] = [];
 * const context = { log: {} };
 * recordFailure(context, new Error("disk"), "internal", false, (error) => reported.push(error));
 * assert.deepEqual(context.log, { code: "internal", outcome: "failed" });
 * assert.equal(reported.length, 1);
 * ```
 */
export function recordFailure(
  context: { readonly log: RequestLog },
  error: unknown,
  code: string | number,
  expected: boolean,
  onError: ((error: unknown) => void) | undefined,
): void {
  context.log.code = code;
  // An expected refusal is not a fault worth reporting.
  context.log.outcome = expected ? "refused" : "failed";
  if (expected) return;
  try {
    onError?.(error);
  } catch {
    // A failing log hook must not turn a mapped error into an unmapped one.
  }
}
