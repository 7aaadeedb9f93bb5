/**
 * `GET /metrics`: the Prometheus text exposition, only to a request that carries the operator's
 * bearer token (`Authorization: Bearer <BEACON_METRICS_TOKEN>`, RFC 6750 §2.1). Without a
 * configured token the route does not exist (404). A missing or wrong token is `401
 * unauthorized` with `WWW-Authenticate: Bearer` and nothing else: the metrics say how busy the
 * intake is and how it fails, which is the operator's business.
 *
 * The token is compared in constant time: both sides are hashed (SHA-256) and the digests
 * compared byte by byte without an early exit, so neither the position of the first wrong byte
 * nor the token's length shows in the time of an answer.
 *
 * @module
 */
import type { Context } from "../http/context.ts";
import { refuse } from "../http/errors.ts";

/** The media type of the text exposition format 0.0.4. */
export const METRICS_TYPE = "text/plain; version=0.0.4; charset=utf-8";

async function digest(text: string): Promise<Uint8Array> {
  return new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text)));
}

/**
 * Whether `header` (an `Authorization` value) carries `token`, compared in constant time.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { carriesToken } from "./endpoint.ts";
 *
 * assert.equal(await carriesToken("Bearer s3cret-token-0123456789", "s3cret-token-0123456789"), true);
 * assert.equal(await carriesToken("Bearer s3cret-token-0123456788", "s3cret-token-0123456789"), false);
 * assert.equal(await carriesToken(null, "s3cret-token-0123456789"), false);
 * ```
 */
export async function carriesToken(header: string | null, token: string): Promise<boolean> {
  // The scheme is case-insensitive (RFC 9110 §11.1); one space, then the token (RFC 6750 §2.1).
  const match = /^bearer ([^ ]+)$/i.exec(header ?? "");
  const [given, expected] = await Promise.all([digest(match?.[1] ?? ""), digest(token)]);
  let difference = match === null ? 1 : 0;
  for (let i = 0; i < expected.length; i++) difference |= given[i] ^ expected[i];
  return difference === 0;
}

/** The `/metrics` handler for `token`, rendering with `render`. */
export function metricsHandler(
  token: string,
  render: () => string,
): (context: Context) => Promise<Response> {
  return async (context) => {
    if (!(await carriesToken(context.request.headers.get("authorization"), token))) {
      return refuse(context, "unauthorized", {
        headers: { "www-authenticate": 'Bearer realm="metrics"' },
      });
    }
    return new Response(render(), { status: 200, headers: { "content-type": METRICS_TYPE } });
  };
}
