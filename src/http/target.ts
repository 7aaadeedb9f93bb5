/**
 * The request's URL as the Beacon trusts it: the path and query from the request target, the
 * authority from a syntactically valid `Host` header, and the scheme from the listener (the entry
 * file's fact), never from the request.
 *
 * Runtimes build `request.url` from whatever the request line names: an absolute-form target
 * (`GET http://evil.example:444/x HTTP/1.1`, RFC 9112 §3.2.2) becomes the URL's scheme, host and
 * port, whatever the `Host` header says. RFC 9112 §3.2.2 asks an origin server to prefer that
 * target; the Beacon does not, because a cache or proxy in front keys what it stores on `Host`
 * (and forwards origin-form targets), so an origin taken from the target would let one client
 * place a foreign origin in what everyone else is served. A `Host` that is
 * not a valid `uri-host [ ":" port ]` (RFC 9110 §7.2, RFC 3986 §3.2.2-3.2.3), or appears twice, is
 * refused with `400`, as RFC 9112 §3.2 requires; nothing of it is echoed.
 *
 * Without a `Host` header (HTTP/2 carries the authority in `:authority`, RFC 9113 §8.3.1, and a
 * `Request` an embedding application builds has none), the URL's own host is used, under the same
 * grammar.
 *
 * @module
 */
import { parseIPv6 } from "./ip.ts";

/** The scheme the listener speaks: `https` only when the entry terminates TLS itself. */
export type ListenerScheme = "http" | "https";

/**
 * Longest accepted `Host` value: a DNS name of at most 253 characters (RFC 1035 §2.3.4, in its
 * dotted text form), a colon and a five-digit port. An IPv6 literal is shorter.
 */
export const MAX_HOST_LENGTH = 253 + 6;

/**
 * `reg-name` or `IPv4address`, then an optional port. RFC 3986's `reg-name` also allows
 * percent-encoding and sub-delimiters (`!$&'()*+,;=`); no DNS name contains them (RFC 1123
 * §2.1), so they are refused here rather than carried into published URLs.
 */
const NAME_HOST = /^[A-Za-z0-9._~-]+(?::[0-9]{0,5})?$/;
/** `IP-literal` with an IPv6 address (no IPvFuture, no RFC 6874 zone), then an optional port. */
const LITERAL_HOST = /^\[([0-9A-Fa-f:.]{2,45})\](?::[0-9]{0,5})?$/;

/**
 * The normalised `host[:port]` of a `Host` value for `scheme`, or undefined when it is not valid
 * (too long, outside the grammar, a port above 65535).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { validHost } from "./target.ts";
 *
 * assert.equal(validHost("Beacon.Example:8000", "http"), "beacon.example:8000");
 * assert.equal(validHost("beacon.example:443", "https"), "beacon.example");
 * assert.equal(validHost("[::1]:8000", "http"), "[::1]:8000");
 * assert.equal(validHost("evil.example/x", "http"), undefined);
 * assert.equal(validHost("a.example, b.example", "http"), undefined);
 * assert.equal(validHost("x".repeat(10_000), "http"), undefined);
 * ```
 */
export function validHost(value: string, scheme: ListenerScheme): string | undefined {
  if (value.length === 0 || value.length > MAX_HOST_LENGTH) return undefined;
  const literal = LITERAL_HOST.exec(value);
  if (literal !== null) {
    if (parseIPv6(literal[1]) === undefined) return undefined;
  } else if (!NAME_HOST.test(value)) {
    return undefined;
  }
  const colon = value.lastIndexOf(":");
  if (colon > value.lastIndexOf("]") && Number(value.slice(colon + 1)) > 65535) return undefined;
  try {
    // The WHATWG parser lowercases, drops the default port and refuses what the grammar above
    // still lets through but no host can be (`1.2.3.4.5`, an empty label run such as `..`).
    return new URL(`${scheme}://${value}`).host;
  } catch {
    return undefined;
  }
}

/**
 * Validated `Host` values by scheme and value: a server sees the same few, and each check costs a
 * URL parse. Bounded (cleared when full), since every client may send a different one.
 */
const validated = new Map<string, string | undefined>();

function validHostCached(value: string, scheme: ListenerScheme): string | undefined {
  if (value.length > MAX_HOST_LENGTH) return undefined; // never kept: bounded memory
  const key = scheme + " " + value;
  if (validated.has(key)) return validated.get(key);
  const authority = validHost(value, scheme);
  if (validated.size >= 64) validated.clear();
  validated.set(key, authority);
  return authority;
}

/** Why a request has no URL the Beacon can trust. */
export type TargetRefusal = "invalid_host" | "not_found";

/**
 * The trusted URL of `request` for a listener speaking `scheme`, or why there is none:
 * `invalid_host` for a `Host` outside the grammar, `not_found` for a target no URL can be made of.
 *
 * @example An absolute-form target does not choose the origin
 * ```ts
 * import assert from "node:assert/strict";
 * import { trustedUrl } from "./target.ts";
 *
 * // What a runtime hands over for `GET https://evil.example:444/x?y HTTP/1.1` + `Host: good.example`
 * const request = new Request("https://evil.example:444/x?y", {
 *   headers: { host: "good.example" },
 * });
 * const url = trustedUrl(request, "http");
 * assert.ok(url instanceof URL);
 * assert.equal(url.href, "http://good.example/x?y");
 * ```
 */
export function trustedUrl(request: Request, scheme: ListenerScheme): URL | TargetRefusal {
  const host = request.headers.get("host");
  const fromHost = host === null ? undefined : validHostCached(host, scheme);
  // Before the target is parsed: runtimes build `request.url` from the Host, so an invalid Host
  // also makes it unparsable, and the answer must name the Host.
  if (host !== null && fromHost === undefined) return "invalid_host";
  let target: URL;
  try {
    target = new URL(request.url);
  } catch {
    return "not_found";
  }
  const authority = fromHost ?? validHost(target.host, scheme);
  if (authority === undefined) return "not_found";
  if (target.protocol === `${scheme}:` && target.host === authority) return target;
  // The path is set, not resolved against a base: a target path `//other.example/` must stay a
  // path, never become an authority.
  const url = new URL(`${scheme}://${authority}`);
  url.pathname = target.pathname;
  url.search = target.search;
  return url;
}
