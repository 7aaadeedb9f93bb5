/**
 * The JSON-RPC 2.0 envelope: reading a request object and writing response objects.
 *
 * A2A §9.3 only says requests "MUST follow the standard JSON-RPC 2.0 format", so JSON-RPC 2.0
 * decides the framing, with these Beacon choices (docs/a2a.md explains each):
 *
 * - A batch (a JSON array, including the empty array) is answered with one -32600 error: A2A
 *   defines no batch semantics and no A2A SDK sends or supports batches (JSON-RPC 2.0 §6 lets
 *   an empty array be one -32600 error; for a non-empty one we refuse rather than run it).
 * - A request without `id` is a notification, which JSON-RPC 2.0 §4.1 says gets no reply. A2A
 *   defines no notifications, so running one would store a submission whose sender can never
 *   learn its receipt; the Beacon runs nothing and answers -32600 so the mistake is visible.
 * - `id` must be a string of at most {@linkcode MAX_ID_LENGTH} characters or a safe integer
 *   written as a plain integer (`-?(0|[1-9][0-9]*)`, not `-0`). JSON-RPC 2.0 §4 allows null
 *   and fractional numbers but discourages both; a null id is refused because a reply to it
 *   cannot be told apart from the reply to an unreadable request. The number's source text is
 *   checked, not the parsed double, because the echoed id must be exactly the id received:
 *   `1.0`, `1e0` and `0.000…1` (which underflows to 0) would come back as `1`, `1` and `0`.
 *   The length bound exists because the id is the one thing a response echoes (design
 *   principle 2).
 * - Every -32600 answer has `id: null` (JSON-RPC 2.0 §5: the id when it "could not be
 *   determined"; for an invalid request we do not trust any part of it).
 * - `params`, when present, must be an object (A2A params are by-name proto messages);
 *   anything else is -32602.
 *
 * @module
 */
import {
  codePointLengthWithin,
  isJsonObject,
  type JsonObject,
  type JsonValue,
} from "../json/value.ts";
import { jsonResponse } from "../http/json.ts";
import { A2AFailure, invalidParams, type JsonRpcErrorObject } from "./errors.ts";

/** Longest accepted string id, in Unicode code points: the bound on the only echo. */
export const MAX_ID_LENGTH = 128;

/** A JSON-RPC request id the Beacon accepts. */
export type RequestId = string | number;

/** A request that passed the envelope checks. */
export interface RpcRequest {
  /** The id, echoed in the response. */
  readonly id: RequestId;
  /** The method name, not yet known to exist. */
  readonly method: string;
  /** The params object, or undefined when the request had none. */
  readonly params: JsonObject | undefined;
}

/** What reading an envelope gives: a request, or a refusal and the id to answer it with. */
export type EnvelopeResult =
  | { ok: true; request: RpcRequest }
  | { ok: false; id: RequestId | null; failure: A2AFailure };

/** The only spelling of a number id whose echo is byte for byte the id received. */
const PLAIN_INTEGER = /^-?(?:0|[1-9][0-9]{0,15})$/;

function isValidId(value: JsonValue, sourceText: string | undefined): value is RequestId {
  if (typeof value === "string") return codePointLengthWithin(value, MAX_ID_LENGTH);
  if (typeof value !== "number" || !Number.isSafeInteger(value)) return false;
  // Without the source text (a caller that parsed by other means) the value is all there is.
  if (sourceText === undefined) return !Object.is(value, -0);
  return PLAIN_INTEGER.test(sourceText) && sourceText !== "-0" && String(value) === sourceText;
}

function invalidRequest(problem: string, field?: "jsonrpc" | "id" | "method"): EnvelopeResult {
  return {
    ok: false,
    id: null,
    failure: new A2AFailure(
      "invalidRequest",
      `Invalid request: ${problem}`,
      field === undefined ? {} : { field },
    ),
  };
}

/**
 * Checks a parsed body against the JSON-RPC 2.0 request object (§4) and the Beacon's rules
 * above. Never echoes anything but an accepted id. `rootNumberText` is the parser's source text
 * of the body's top-level numbers (strict_json.ts), so a number id is judged as it was written.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { readEnvelope } from "./jsonrpc.ts";
 *
 * assert.ok(readEnvelope({ jsonrpc: "2.0", id: 1, method: "GetTask", params: { id: "x" } }).ok);
 * assert.ok(!readEnvelope([]).ok); // -32600
 * ```
 */
export function readEnvelope(
  body: JsonValue,
  rootNumberText?: ReadonlyMap<string, string>,
): EnvelopeResult {
  if (Array.isArray(body)) {
    return invalidRequest("batch requests are not supported; send one request object");
  }
  if (!isJsonObject(body)) return invalidRequest("the body must be a JSON-RPC request object");
  if (body.jsonrpc !== "2.0") return invalidRequest('jsonrpc must be exactly "2.0"', "jsonrpc");
  if (!Object.hasOwn(body, "id")) {
    return invalidRequest(
      "a request without id is a notification, and A2A defines none; nothing was done",
      "id",
    );
  }
  const id = body.id;
  if (id === null) return invalidRequest("id must not be null", "id");
  if (!isValidId(id, rootNumberText?.get("id"))) {
    return invalidRequest(
      `id must be a string of at most ${MAX_ID_LENGTH} characters or an integer ` +
        "from -(2^53-1) to 2^53-1 written without fraction or exponent",
      "id",
    );
  }
  if (typeof body.method !== "string") return invalidRequest("method must be a string", "method");
  const params = body.params;
  if (params !== undefined && !isJsonObject(params)) {
    return {
      ok: false,
      id,
      failure: invalidParams("params", "must be an object"),
    };
  }
  return { ok: true, request: { id, method: body.method, params } };
}

/**
 * A JSON-RPC 2.0 success response object (§5).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { resultBody } from "./jsonrpc.ts";
 *
 * assert.deepEqual(resultBody(1, { tasks: [] }), { jsonrpc: "2.0", id: 1, result: { tasks: [] } });
 * ```
 */
export function resultBody(id: RequestId, result: unknown): Record<string, unknown> {
  return { jsonrpc: "2.0", id, result };
}

/**
 * A JSON-RPC 2.0 error response object (§5).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { errorBody } from "./jsonrpc.ts";
 * import { A2AFailure, toJsonRpcError } from "./errors.ts";
 *
 * const body = errorBody(null, toJsonRpcError(new A2AFailure("parse")));
 * assert.equal((body.error as { code: number }).code, -32700);
 * ```
 */
export function errorBody(
  id: RequestId | null,
  error: JsonRpcErrorObject,
): Record<string, unknown> {
  return { jsonrpc: "2.0", id, error };
}

/**
 * The HTTP response for a JSON-RPC response object: always `200` and `application/json`.
 * A2A does not fix the status of JSON-RPC errors; the Python and Go SDKs and the draft
 * conformance suite use 200, and the JS client reads error bodies at any status.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { resultBody, rpcResponse } from "./jsonrpc.ts";
 *
 * assert.equal(rpcResponse(resultBody(1, {})).status, 200);
 * ```
 */
export function rpcResponse(body: Record<string, unknown>): Response {
  return jsonResponse(200, body);
}
