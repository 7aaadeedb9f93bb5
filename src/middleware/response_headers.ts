/**
 * Hardening headers on every response, set in one place so no route can forget them: the door
 * (`door.ts`), the one way every response leaves the Beacon, applies them.
 *
 * - `X-Content-Type-Options: nosniff` and `Content-Security-Policy: default-src 'none'`: a
 *   response is data, never a document a browser should render or run.
 * - `Access-Control-Allow-Origin: *`: the Beacon has no cookies or other ambient authority, so a
 *   cross-origin read reveals nothing a direct request would not; discovery must be readable from
 *   any origin (A2A §8.2).
 * - `Cache-Control: no-store` unless the route chose a policy (the card and discovery document
 *   are cacheable; receipts and statuses are not).
 *
 * @module
 */
const FIXED: ReadonlyArray<readonly [string, string]> = [
  ["x-content-type-options", "nosniff"],
  ["content-security-policy", "default-src 'none'; frame-ancestors 'none'"],
  ["referrer-policy", "no-referrer"],
  ["access-control-allow-origin", "*"],
  ["access-control-expose-headers", "location, retry-after, etag, idempotent-replayed"],
];

/** Adds the hardening headers to a response (in place) and returns it. */
export function harden(response: Response): Response {
  const headers = response.headers;
  for (const [name, value] of FIXED) headers.set(name, value);
  if (!headers.has("cache-control")) headers.set("cache-control", "no-store");
  return response;
}
