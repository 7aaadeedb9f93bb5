/**
 * The one JSON response builder: every JSON body the Beacon sends (documents aside, which are
 * prepared once with validators in `cacheable.ts`) is serialised and labelled here.
 *
 * @module
 */

const JSON_TYPE = "application/json";

/**
 * A JSON response with the given status and extra headers.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { jsonResponse } from "./json.ts";
 *
 * const response = jsonResponse(202, { ok: true }, { location: "/x" });
 * assert.equal(response.status, 202);
 * assert.equal(response.headers.get("content-type"), "application/json");
 * assert.equal(response.headers.get("location"), "/x");
 * assert.deepEqual(await response.json(), { ok: true });
 * ```
 */
export function jsonResponse(
  status: number,
  value: unknown,
  headers?: Readonly<Record<string, string>>,
): Response {
  return new Response(JSON.stringify(value), {
    status,
    headers: headers === undefined
      ? { "content-type": JSON_TYPE }
      : { "content-type": JSON_TYPE, ...headers },
  });
}
