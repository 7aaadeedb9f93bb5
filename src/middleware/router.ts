/**
 * Routing: exact paths and one-parameter templates, matched segment by segment (no regular
 * expressions on the request path). An unknown path is `404 not_found`, a known path with another
 * method `405 method_not_allowed` with `Allow` (RFC 9110 §15.5.6), and `OPTIONS` a CORS preflight
 * answer, all before any body is read or any limit consumed.
 *
 * @module
 */
import { refuse } from "../http/errors.ts";
import type { Context } from "../http/context.ts";
import type { Route, RouteHandler } from "../http/route.ts";

interface CompiledRoute extends Route {
  readonly segments: readonly string[];
  readonly allow: string;
}

/** Request headers a cross-origin caller may send (answered in preflights). */
const ALLOWED_HEADERS = "content-type, a2a-version, a2a-extensions, idempotency-key, if-none-match";

function split(path: string): string[] {
  return path.split("/").filter((segment, index, all) =>
    index > 0 || segment !== "" || all.length === 1
  );
}

function match(
  route: CompiledRoute,
  segments: readonly string[],
): Record<string, string> | undefined {
  // A last segment `*` matches the rest of the path, one segment or more (the log's tiles,
  // whose index takes as many segments as it has groups of three digits: c2sp.org/tlog-tiles).
  const rest = route.segments.at(-1) === "*";
  if (rest ? segments.length < route.segments.length : route.segments.length !== segments.length) {
    return undefined;
  }
  let params: Record<string, string> | undefined;
  for (let i = 0; i < route.segments.length; i++) {
    const expected = route.segments[i];
    if (rest && i === route.segments.length - 1) {
      (params ??= {})["*"] = segments.slice(i).join("/");
      break;
    }
    if (expected.startsWith(":")) {
      if (segments[i] === "") return undefined;
      (params ??= {})[expected.slice(1)] = segments[i];
    } else if (expected !== segments[i]) {
      return undefined;
    }
  }
  return params ?? {};
}

/** The router: dispatches to the matched route's handler for the method (the chain's end). */
export function router(routes: readonly Route[]): RouteHandler {
  const compiled: CompiledRoute[] = routes.map((route) => {
    const methods = Object.keys(route.methods);
    if (route.methods.GET && !route.methods.HEAD) methods.push("HEAD");
    methods.push("OPTIONS");
    return { ...route, segments: split(route.path), allow: methods.join(", ") };
  });
  // Paths without parameters, for one lookup instead of a split and a walk over every route. A
  // pathname starts with `/`, so it has the segments of such a path exactly when it is that
  // path; a path that an earlier route also matches is left to the walk, which keeps the order.
  const exact = new Map<string, CompiledRoute>();
  for (const [index, route] of compiled.entries()) {
    if (route.segments.some((segment) => segment.startsWith(":") || segment === "*")) continue;
    if (compiled.slice(0, index).some((earlier) => match(earlier, route.segments))) continue;
    exact.set(route.path, route);
  }
  const answer = (
    route: CompiledRoute,
    params: Record<string, string>,
    context: Context,
  ): Promise<Response> => {
    context.params = params;
    context.log.route = route.name;
    const method = context.request.method;
    const handler = route.methods[method];
    // The handler's own promise, not another one around it.
    if (handler !== undefined) return handler(context);
    if (method === "HEAD" && route.methods.GET !== undefined) {
      return route.methods.GET(context).then((response) =>
        response.body !== null ? new Response(null, response) : response
      );
    }
    return Promise.resolve(refusal(route, method, context));
  };
  const refusal = (route: CompiledRoute, method: string, context: Context): Response => {
    if (method === "OPTIONS") {
      return new Response(null, {
        status: 204,
        headers: {
          allow: route.allow,
          "access-control-allow-methods": route.allow,
          "access-control-allow-headers": ALLOWED_HEADERS,
          "access-control-max-age": "86400",
        },
      });
    }
    return refuse(context, "method_not_allowed", { headers: { allow: route.allow } });
  };
  return (context) => {
    const known = exact.get(context.url.pathname);
    if (known !== undefined) return answer(known, {}, context);
    const segments = split(context.url.pathname);
    for (const route of compiled) {
      const params = match(route, segments);
      if (params !== undefined) return answer(route, params, context);
    }
    return Promise.resolve(refuse(context, "not_found"));
  };
}
