/**
 * JSON responses.
 *
 * @module
 */

const JSON_TYPE = "application/json";

/** A JSON response with the given status and extra headers. */
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
