/**
 * The whole middleware engine. A middleware either answers (returns a Response without calling
 * `next`) or passes the request on; expected refusals are early returns, not exceptions.
 *
 * @module
 */

import type { Context } from "../http/context.ts";

/** A middleware: answer, or call `next` to pass the request on. */
export type Middleware = (context: Context, next: () => Promise<Response>) => Promise<Response>;

/** Composes middleware into one function; the last `next` answers `404 not_found`-style. */
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
