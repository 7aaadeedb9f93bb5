/**
 * The whole middleware engine. A middleware either answers (returns a Response without calling
 * `next`) or passes the request on; a middleware's expected refusals are early returns
 * (`refuse`, src/http/errors.ts), not exceptions.
 *
 * Route handlers refuse by throwing instead (`BeaconError` in src/native/, `A2AFailure` in
 * src/a2a/): their refusals are found several calls down, in functions that return a value (the
 * submission to store, the parsed JSON-RPC request), where an early return would turn every
 * signature on the way into a union with `Response`. A thrown refusal is answered in one place
 * per protocol, through the same `recordFailure` (src/http/request_log.ts): the error boundary
 * (`error_boundary.ts`) for the native surface, the endpoint (src/a2a/endpoint.ts, which alone
 * knows the JSON-RPC id) for A2A. Either way it gets its code and status and one log line, is
 * logged as refused, and is never reported to `onError`, exactly as an early return would be.
 *
 * @module
 */

import type { Context } from "../http/context.ts";

/** A middleware: answer, or call `next` to pass the request on. */
export type Middleware = (context: Context, next: () => Promise<Response>) => Promise<Response>;

/**
 * Composes middleware in front of `terminal` (the router, in src/handler.ts): each middleware
 * answers or calls `next`, and the last `next` hands the request to `terminal`.
 */
export function compose(
  middleware: readonly Middleware[],
  terminal: (context: Context) => Promise<Response>,
): (context: Context) => Promise<Response> {
  // Linked once, here: a request then allocates one `next` per middleware and nothing else.
  let chain = terminal;
  for (let index = middleware.length - 1; index >= 0; index--) {
    const current = middleware[index];
    const rest = chain;
    chain = (context) => current(context, () => rest(context));
  }
  return chain;
}
