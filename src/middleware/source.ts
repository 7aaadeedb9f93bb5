/**
 * Source identification: which sender a request counts against. The key is the peer address the
 * runtime saw, reduced to what one party plausibly controls: an IPv4 address (/32), an IPv6 /64
 * (the smallest prefix RFC 6177 / RFC 7421 let a site assign, so rotating addresses inside one
 * prefix does not escape a limit), and IPv4-mapped IPv6 (RFC 4291 §2.5.5.2) collapsed to IPv4.
 *
 * Forwarding headers are written by the client unless a proxy we trust overwrote them, so they are
 * ignored unless `trustedProxies` is set; then the one configured header is read right to left,
 * skipping one entry per trusted proxy (each proxy appends the address it received the request
 * from).
 *
 * @module
 */
import type { Middleware } from "./compose.ts";
import { parseIPv4, parseIPv6 } from "../http/ip.ts";

/** The key used when no address is known (every such request shares one bucket). */
export const UNKNOWN_SOURCE = "unknown";

/** Reduces an address to its rate-limit key; `unknown` when it is not an IP address. */
export function sourceKey(address: string | undefined): string {
  if (address === undefined) return UNKNOWN_SOURCE;
  let text = address.trim();
  if (text.startsWith("[")) {
    text = text.slice(1, text.indexOf("]") > 0 ? text.indexOf("]") : undefined);
  }
  const zone = text.indexOf("%"); // RFC 6874 zone ids name an interface, not a host
  if (zone >= 0) text = text.slice(0, zone);
  const v4 = parseIPv4(text);
  if (v4 !== undefined) return v4;
  const groups = parseIPv6(text);
  if (groups === undefined) return UNKNOWN_SOURCE;
  const mapped = groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff;
  if (mapped) {
    return `${groups[6] >> 8}.${groups[6] & 255}.${groups[7] >> 8}.${groups[7] & 255}`;
  }
  return `${groups.slice(0, 4).map((g) => g.toString(16)).join(":")}::/64`;
}

/** The forwarding header a trusted proxy writes. */
export type ForwardingHeader = "x-forwarded-for" | "forwarded";

/**
 * The client address according to the forwarding header written by `trustedProxies` proxies, or
 * undefined when it does not hold enough entries (then the peer address is used). Only the one
 * configured header is read: a proxy that appends to `X-Forwarded-For` passes a client's own
 * `Forwarded` header through untouched (and the other way round), so reading both would let the
 * client choose its source.
 */
export function forwardedAddress(
  headers: Headers,
  trustedProxies: number,
  header: ForwardingHeader = "x-forwarded-for",
): string | undefined {
  if (trustedProxies <= 0) return undefined;
  const entries = header === "forwarded"
    ? forwardedFor(headers.get("forwarded"))
    : (headers.get("x-forwarded-for") ?? "").split(",").map((entry) => entry.trim()).filter(
      (entry) => entry !== "",
    );
  if (entries.length < trustedProxies) return undefined;
  return entries[entries.length - trustedProxies];
}

/** The `for=` values of an RFC 7239 `Forwarded` header, one per element, in order. */
function forwardedFor(forwarded: string | null): string[] {
  if (forwarded === null) return [];
  const out: string[] = [];
  for (const element of forwarded.split(",")) {
    for (const pair of element.split(";")) {
      const eq = pair.indexOf("=");
      if (eq < 0 || pair.slice(0, eq).trim().toLowerCase() !== "for") continue;
      let value = pair.slice(eq + 1).trim();
      if (value.startsWith('"') && value.endsWith('"')) value = value.slice(1, -1);
      if (value.startsWith("[")) value = value.slice(1, value.indexOf("]"));
      else if (value.split(":").length === 2) value = value.slice(0, value.indexOf(":"));
      out.push(value);
    }
  }
  return out;
}

/** Sets `context.source` from the peer address, or from trusted forwarding headers. */
export function identifySource(
  trustedProxies: number,
  header: ForwardingHeader = "x-forwarded-for",
): Middleware {
  return (context, next) => {
    const address = forwardedAddress(context.request.headers, trustedProxies, header) ??
      context.remoteAddress;
    context.source = sourceKey(address);
    return next();
  };
}
