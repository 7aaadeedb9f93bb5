/**
 * The A2A endpoint's answers for what happens before its body is read (the status-read budget)
 * or before its method runs (the submission budget of `SendMessage`), in JSON-RPC like every
 * other A2A answer, so a JSON-RPC client (the official SDKs read error bodies at any status)
 * gets an error object it can act on:
 *
 * - a rate refusal keeps HTTP `429` and `Retry-After` for HTTP-aware clients and proxies, and
 *   carries the wait in the error's data ({@linkcode rateLimitedError});
 * - a failure of the limiter itself (the shared limiter's database down) is -32603
 *   `UNAVAILABLE` at HTTP 200, exactly what a failed `SendMessage` commit answers, whichever
 *   limiter is configured.
 *
 * Before the body is read the request id is unknown, so those answers carry `id: null`
 * (JSON-RPC 2.0 §5: the id could not be determined).
 *
 * @module
 */
import type { Context } from "../http/context.ts";
import { jsonResponse } from "../http/json.ts";
import type { RateRefusalAnswer } from "../limits/budget.ts";
import { recordFailure } from "../http/request_log.ts";
import { failureKindOf, FAILURES, rateLimitedError, toJsonRpcError } from "./errors.ts";
import { errorBody, type RequestId, rpcResponse } from "./jsonrpc.ts";
import { StorageError } from "../errors.ts";

/**
 * The 429 of the A2A endpoint for request `id` (null before the body is read). The log records
 * the transport code `rate_limited`, as on the native surface.
 */
export function jsonRpcRateRefusal(id: RequestId | null): RateRefusalAnswer {
  return (context, { budget, retryAfterSeconds }) => {
    context.log.code = "rate_limited";
    context.log.outcome = "refused";
    return jsonResponse(429, errorBody(id, rateLimitedError(budget, retryAfterSeconds)), {
      "retry-after": String(retryAfterSeconds),
    });
  };
}

/**
 * The endpoint's answer while the Beacon cannot serve at all (its database never opened, or its
 * file changed): -32603 `UNAVAILABLE` with `id: null`, at HTTP 503 like the native answer, so a
 * JSON-RPC client reads a typed error and a balancer sees the outage.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { jsonRpcUnavailable } from "./transport.ts";
 *
 * const response = jsonRpcUnavailable();
 * assert.equal(response.status, 503);
 * assert.equal((await response.json()).error.data[0].reason, "UNAVAILABLE");
 * ```
 */
export function jsonRpcUnavailable(): Response {
  return jsonResponse(503, errorBody(null, toJsonRpcError(new StorageError())));
}

/**
 * Wraps the endpoint's transport steps (the status-read budget, the body limit): whatever they
 * throw (a limiter whose database is down) is answered in JSON-RPC with `id: null`, reported to
 * `onError` when unexpected, never as the native error body.
 */
export function jsonRpcTransportFailures(
  onError: ((error: unknown) => void) | undefined,
): (context: Context, next: () => Promise<Response>) => Promise<Response> {
  return (context, next) => {
    const answer = (error: unknown): Response => {
      const kind = failureKindOf(error);
      const expected = kind !== "internal" && kind !== "unavailable" && kind !== "outcomeUnknown";
      recordFailure(context, error, FAILURES[kind].code, expected, onError);
      return rpcResponse(errorBody(null, toJsonRpcError(error)));
    };
    try {
      return next().catch(answer);
    } catch (error) {
      return Promise.resolve(answer(error));
    }
  };
}
