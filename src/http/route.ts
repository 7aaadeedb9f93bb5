/**
 * What a route is: a path template and a handler per method. The router (src/middleware/router.ts)
 * dispatches on them; the protocol handlers are written against them.
 *
 * @module
 */
import type { Context } from "./context.ts";

/** What runs for one method of one route. */
export type RouteHandler = (context: Context) => Promise<Response>;

/** One route: a path (segments starting with `:` are parameters) and its methods. */
export interface Route {
  /** A name for logs, such as `native.submit`. */
  readonly name: string;
  /** The path template, for example `/beacon/0.1/submissions/:id`. */
  readonly path: string;
  /** Handlers by method; `HEAD` falls back to `GET` with the body dropped. */
  readonly methods: Readonly<Partial<Record<string, RouteHandler>>>;
}
