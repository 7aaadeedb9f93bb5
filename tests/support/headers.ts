/**
 * The hardening headers every response of the Beacon carries (src/middleware/response_headers.ts),
 * checked from the outside.
 *
 * @module
 */
import { assertStrictEquals } from "./assert.ts";

/** Asserts that `response` is data no browser renders or runs, readable from any origin. */
export function assertHardened(response: Response, what = ""): void {
  const header = (name: string) => response.headers.get(name);
  assertStrictEquals(header("x-content-type-options"), "nosniff", what);
  assertStrictEquals(
    header("content-security-policy"),
    "default-src 'none'; frame-ancestors 'none'",
    what,
  );
  assertStrictEquals(header("access-control-allow-origin"), "*", what);
}
