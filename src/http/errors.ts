/**
 * The native error vocabulary and its one mapping to HTTP. Every refusal of the native protocol
 * and every transport-level refusal of the A2A endpoint leaves the Beacon through
 * {@linkcode errorResponse}; every thrown error through {@linkcode responseForError}, which is
 * total: an error it does not know becomes `500 internal` with a fixed message, so no unknown
 * message, stack or submitted content can reach a response.
 *
 * @module
 */
import {
  IdempotencyKeyReusedError,
  OutcomeUnknownError,
  stackless,
  StorageError,
} from "../errors.ts";
import type { Outcome, RequestLog } from "./context.ts";
import { jsonResponse } from "./json.ts";

/** The stable error codes of beacon/0.1 (docs/protocol-0.1.md §Errors). */
export type ErrorCode =
  | "invalid_json"
  | "invalid_message"
  | "invalid_host"
  | "unauthorized"
  | "not_found"
  | "method_not_allowed"
  | "request_timeout"
  | "idempotency_key_reused"
  | "too_large"
  | "unsupported_media_type"
  | "rate_limited"
  | "internal"
  | "unavailable"
  | "outcome_unknown";

/** HTTP status and default human text of each code. */
export const ERRORS: Readonly<Record<ErrorCode, { status: number; message: string }>> = {
  invalid_json: { status: 400, message: "The body is not valid JSON under the strict profile" },
  invalid_host: { status: 400, message: "The Host header is not a valid host and port" },
  unauthorized: {
    status: 401,
    message: "This resource needs the operator's bearer token (Authorization: Bearer …)",
  },
  not_found: { status: 404, message: "No such resource" },
  method_not_allowed: { status: 405, message: "Method not allowed on this resource" },
  request_timeout: { status: 408, message: "The body did not arrive in time" },
  too_large: { status: 413, message: "The body exceeds the size limit" },
  unsupported_media_type: {
    status: 415,
    message: "Send application/json or text/plain; charset=utf-8",
  },
  invalid_message: { status: 422, message: "The submission is not acceptable" },
  idempotency_key_reused: {
    status: 422,
    message: "This idempotency key was already used with different content",
  },
  rate_limited: { status: 429, message: "Too many requests from this source" },
  internal: { status: 500, message: "Internal error" },
  unavailable: { status: 503, message: "Storage is unavailable; retry later" },
  outcome_unknown: {
    status: 503,
    message:
      "The commit did not answer in time: the submission may or may not be stored. Its status URL says which (404 until it is stored)",
  },
};

/**
 * Members an error body may carry beside `code` and `message`, so a refusal says what to change
 * (docs/protocol-0.1.md §Errors): the violations of an invalid message (`fields`), the size limit
 * (`maxBodyBytes`), where the JSON broke (`offset`), the exhausted rate budget (`budget`). Values
 * are facts of our own (schema paths, fixed texts, numbers), never submitted content.
 */
export interface ErrorDetails {
  /** `invalid_message`: each violation, by schema path and fixed problem text (bounded). */
  readonly fields?: readonly { readonly field: string; readonly description: string }[];
  /** `too_large`: the largest accepted body, in bytes. */
  readonly maxBodyBytes?: number;
  /** `invalid_json`: the byte offset in the body where the first error was found. */
  readonly offset?: number;
  /** `rate_limited`: which per-source budget was exhausted. */
  readonly budget?: "submissions" | "status";
  /** `rate_limited`: whole seconds to wait, the same number as the `Retry-After` header. */
  readonly retryAfterSeconds?: number;
  /** `outcome_unknown`: the receipt id the submission has if it was stored. */
  readonly id?: string;
  /** `outcome_unknown`: its status URL (404 until it is stored, 200 once it is). */
  readonly status?: string;
}

/**
 * An expected refusal. `message` must be fixed text written by us (it is sent to the client):
 * never interpolate submitted content into it.
 */
export class BeaconError extends Error {
  /** The stable code. */
  readonly code: ErrorCode;
  /** Extra response headers, such as `Retry-After` or `Allow`. */
  readonly headers: Readonly<Record<string, string>> | undefined;
  /** Extra members of the error body. */
  readonly details: ErrorDetails | undefined;

  /** Creates a refusal with a fixed, non-echoing message. */
  constructor(
    code: ErrorCode,
    message?: string,
    { headers, details }: Omit<ErrorResponseOptions, "message"> = {},
  ) {
    const limit = stackless();
    super(message ?? ERRORS[code].message);
    Error.stackTraceLimit = limit;
    this.name = "BeaconError";
    this.code = code;
    this.headers = headers;
    this.details = details;
  }
}

/** Whether a thrown value is an expected refusal (logged as refused, not reported as a fault). */
export function isRefusal(error: unknown): boolean {
  return error instanceof BeaconError || error instanceof IdempotencyKeyReusedError;
}

/** What a native error response may carry besides its code. */
export interface ErrorResponseOptions {
  /** A fixed text of ours; default: the code's message. Never submitted content. */
  readonly message?: string;
  /** Extra members of the error object (numbers and names of ours, never submitted content). */
  readonly details?: ErrorDetails;
  /** Extra response headers (`Retry-After`, `Allow`). */
  readonly headers?: Readonly<Record<string, string>>;
}

/** A native error body `{"error":{"code","message", …details}}` with the code's HTTP status. */
export function errorResponse(code: ErrorCode, options: ErrorResponseOptions = {}): Response {
  const { message = ERRORS[code].message, details, headers } = options;
  return jsonResponse(ERRORS[code].status, { error: { code, message, ...details } }, headers);
}

/** What a refusal carries besides its code. */
export interface RefusalOptions extends ErrorResponseOptions {
  /** The log's outcome where the status cannot tell (a 503 that is the client's doing). */
  readonly outcome?: Outcome;
}

/**
 * Refuses a request inside the pipeline: records the code (and outcome) in the request log and
 * builds the native error response, which leaves through the door (src/middleware/door.ts) like
 * every other answer.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { refuse } from "./errors.ts";
 * import type { RequestLog } from "./context.ts";
 *
 * const context: { log: RequestLog } = { log: {} };
 * const response = refuse(context, "too_large", { details: { maxBodyBytes: 10 } });
 * assert.equal(response.status, 413);
 * assert.equal(context.log.code, "too_large");
 * assert.equal((await response.json()).error.maxBodyBytes, 10);
 * ```
 */
export function refuse(
  context: { readonly log: RequestLog },
  code: ErrorCode,
  options: RefusalOptions = {},
): Response {
  context.log.code = code;
  if (options.outcome !== undefined) context.log.outcome = options.outcome;
  return errorResponse(code, options);
}

/** The code a thrown value maps to. Total: anything unknown is `internal`. */
export function codeForError(error: unknown): ErrorCode {
  if (error instanceof BeaconError) return error.code;
  if (error instanceof IdempotencyKeyReusedError) return "idempotency_key_reused";
  if (error instanceof OutcomeUnknownError) return "outcome_unknown";
  if (error instanceof StorageError) return "unavailable";
  return "internal";
}

/** Maps any thrown value to a native error response, never exposing an unknown message. */
export function responseForError(error: unknown): Response {
  if (error instanceof BeaconError) {
    const { message, headers, details } = error;
    return errorResponse(error.code, { message, headers, details });
  }
  if (error instanceof OutcomeUnknownError) {
    const details: ErrorDetails = error.status === undefined
      ? { id: error.receiptId }
      : { id: error.receiptId, status: error.status };
    return errorResponse("outcome_unknown", { details });
  }
  return errorResponse(codeForError(error));
}
