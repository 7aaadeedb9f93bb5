/**
 * The last line of the error mapping: anything thrown below becomes a native error response
 * through {@linkcode responseForError}, which never exposes an unknown error's message or stack.
 * Unexpected errors (anything but an expected refusal, `isRefusal` in src/errors.ts) go to the operator's
 * `onError` hook (for logs), never to the client.
 *
 * @module
 */
import { codeForError, isRefusal, responseForError } from "../errors.ts";
import type { Middleware, RequestLog } from "./compose.ts";

/**
 * Records a caught error in the request log and hands an unexpected one to `onError` (the
 * operator's log), never to the client. The one place a caught error is classified: this
 * boundary and the A2A endpoint, which answers in JSON-RPC inside its own `catch` because only it
 * knows the request id, both use it.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { recordFailure } from "./error_boundary.ts";
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

/** Catches everything thrown further down the chain. */
export function errorBoundary(onError: ((error: unknown) => void) | undefined): Middleware {
  return async (context, next) => {
    try {
      return await next();
    } catch (error) {
      recordFailure(context, error, codeForError(error), isRefusal(error), onError);
      return responseForError(error);
    }
  };
}
