/**
 * `POST /a2a/v1`: the A2A 1.0 JSON-RPC endpoint (A2A §9). The route has already passed the
 * transport refusals (405 and 413 body limit with the native error body; the 429 of the
 * status-read budget in JSON-RPC, src/a2a/transport.ts), so the body is in `context.body`. Then,
 * in order, each step answering one JSON-RPC error at HTTP 200:
 *
 * 1. media type: `application/json`, charset absent or UTF-8 (A2A §9.1), else -32005 as the A2A
 *    SDKs answer it;
 * 2. parse under the strict JSON profile, else -32700;
 * 3. the envelope (jsonrpc.ts), else -32600 with `id: null` (-32602 for non-object params);
 * 4. the version (version.ts), else -32009, before any dispatch (design principle 6);
 * 5. dispatch (methods.ts): unknown method -32601; `SendMessage` then spends the submission
 *    budget (HTTP 429 with a JSON-RPC error carrying the wait, transport.ts), so polling with
 *    `GetTask` never costs a submission; then the method's own answer.
 *
 * Any throw becomes a JSON-RPC error through the one mapping in errors.ts; only the bounded id
 * is ever echoed.
 *
 * @module
 */
import { parseStrictJson } from "../json/strict_json.ts";
import type { Intake } from "../intake/accept.ts";
import type { RateLimiter } from "../limits/rate.ts";
import { spendBudget } from "../limits/budget.ts";
import { recordFailure } from "../http/request_log.ts";
import type { RouteHandler } from "../http/route.ts";
import { parseMediaType } from "../http/media_type.ts";
import { A2AFailure, failureKindOf, FAILURES, toJsonRpcError } from "./errors.ts";
import { errorBody, readEnvelope, type RequestId, resultBody, rpcResponse } from "./jsonrpc.ts";
import { methodFor } from "./methods.ts";
import { checkVersion } from "./version.ts";
import { jsonRpcRateRefusal } from "./transport.ts";
import type { PublicOrigin } from "../http/context.ts";

/** What the endpoint needs. */
export interface A2AHandlerOptions {
  /** The intake shared with the native protocol. */
  readonly intake: Intake;
  /** The public origin for a request (receipt status URLs). */
  readonly origin: PublicOrigin;
  /** The per-source submission budget `SendMessage` spends; none when it is `off`. */
  readonly submissionLimiter?: RateLimiter;
  /**
   * Receives unexpected errors (not refusals), which the endpoint answers itself as -32603
   * instead of letting them reach the error boundary. Never sent to clients.
   */
  readonly onError?: (error: unknown) => void;
}

/**
 * The JSON-RPC route handler for `POST /a2a/v1` (and `/a2a/v1/`).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { a2aHandler } from "./endpoint.ts";
 * import { realIntake } from "../../tests/support/intake.ts";
 * import { contextFor } from "../../tests/support/context.ts";
 *
 * const handler = a2aHandler({ intake: await realIntake(), origin: (context) => context.url.origin });
 * const context = contextFor("/a2a/v1", {
 *   method: "POST",
 *   headers: { "content-type": "application/json", "a2a-version": "1.0" },
 *   body: { jsonrpc: "2.0", id: 7, method: "ListTasks", params: {} },
 * });
 * const response = await handler(context);
 * assert.equal(response.status, 200);
 * const { id, result } = await response.json();
 * assert.equal(id, 7);
 * assert.deepEqual(result.tasks, []); // a list would hand out other submitters' ids
 * assert.equal(context.log.outcome, "served");
 * ```
 */
export function a2aHandler(options: A2AHandlerOptions): RouteHandler {
  return async (context) => {
    let id: RequestId | null = null;
    try {
      const mediaType = parseMediaType(context.request.headers.get("content-type"));
      if (
        mediaType?.essence !== "application/json" ||
        (mediaType.charset !== undefined && mediaType.charset !== "utf-8")
      ) {
        throw new A2AFailure(
          "contentTypeNotSupported",
          "Incompatible content types: send Content-Type: application/json",
          { supportedContentTypes: "application/json" },
        );
      }
      const parsed = parseStrictJson(context.body ?? new Uint8Array(0));
      if (!parsed.ok) {
        // Where the JSON broke, as a byte offset: a number of ours, not submitted content.
        throw new A2AFailure("parse", undefined, { offset: String(parsed.offset) });
      }
      const envelope = readEnvelope(parsed.value, parsed.rootNumberText);
      if (!envelope.ok) {
        id = envelope.id;
        throw envelope.failure;
      }
      id = envelope.request.id;
      checkVersion(context.request, context.url);
      const method = methodFor(envelope.request.method);
      if (envelope.request.method === "SendMessage" && options.submissionLimiter !== undefined) {
        const refused = await spendBudget(
          options.submissionLimiter,
          "submissions",
          context,
          jsonRpcRateRefusal(id),
        );
        if (refused !== undefined) return refused;
      }
      const outcome = await method(envelope.request.params, {
        intake: options.intake,
        origin: options.origin(context),
        source: context.source,
      });
      context.log.outcome = outcome.outcome;
      if (outcome.receiptId !== undefined) context.log.receiptId = outcome.receiptId;
      return rpcResponse(resultBody(id, outcome.result));
    } catch (error) {
      const kind = failureKindOf(error);
      const expected = kind !== "internal" && kind !== "unavailable" && kind !== "outcomeUnknown";
      recordFailure(context, error, FAILURES[kind].code, expected, options.onError);
      return rpcResponse(errorBody(id, toJsonRpcError(error)));
    }
  };
}
