/**
 * The middleware `Context` of one request, as `src/handler.ts` builds it, for tests (and doc
 * examples) that call a middleware or a route handler in-process.
 *
 * @module
 */
import type { Context } from "../../src/http/context.ts";

/** What a test may set; everything else is what the handler sets for a loopback request. */
export interface ContextOptions {
  readonly method?: string;
  readonly headers?: Readonly<Record<string, string>>;
  /** The body bytes as the body limit would have read them; a string or a JSON value is encoded. */
  readonly body?: unknown;
  readonly remoteAddress?: string;
}

/** A fresh context for `path` on `http://127.0.0.1`. */
export function contextFor(path = "/", options: ContextOptions = {}): Context {
  const url = new URL(path, "http://127.0.0.1");
  const { body } = options;
  return {
    request: new Request(url, { method: options.method ?? "GET", headers: options.headers }),
    url,
    remoteAddress: options.remoteAddress,
    basePath: "",
    startedAt: 0,
    source: options.remoteAddress ?? "unknown",
    params: {},
    body: body === undefined
      ? undefined
      : new TextEncoder().encode(typeof body === "string" ? body : JSON.stringify(body)),
    log: {},
  };
}
