/**
 * One log entry per request for the operator: route, status, outcome, receipt id, body size and
 * latency. Never content, never a raw address (only whether it was known), never headers.
 *
 * @module
 */
import type { Middleware } from "./compose.ts";

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
  /** `accepted`, `served`, `refused` or `failed`. */
  outcome: string;
  /** Error code (native string or JSON-RPC number) for refusals. */
  code?: string | number;
  /** The receipt id for accepted submissions. */
  receiptId?: string;
  /** Body bytes read (0 when the body was never read). */
  bytes: number;
  /** Milliseconds from arrival to response headers. */
  ms: number;
}

/** Calls `log` with one entry per request, after the response is ready. */
export function requestLog(
  log: ((entry: RequestLogEntry) => void) | undefined,
  now: () => number,
): Middleware {
  if (log === undefined) return (_context, next) => next();
  return async (context, next) => {
    const response = await next();
    const entry: RequestLogEntry = {
      time: new Date(context.startedAt).toISOString(),
      route: context.log.route ?? "none",
      method: context.request.method,
      status: response.status,
      outcome: context.log.outcome,
      bytes: context.body?.byteLength ?? 0,
      ms: Math.round((now() - context.startedAt) * 10) / 10,
    };
    if (context.log.code !== undefined) entry.code = context.log.code;
    if (context.log.receiptId !== undefined) entry.receiptId = context.log.receiptId;
    try {
      log(entry);
    } catch {
      // Logging must never change an answer.
    }
    return response;
  };
}
