/**
 * The one mapping from anything the A2A endpoint can throw to a JSON-RPC 2.0 error object.
 *
 * Every error object carries `data`: an array holding one `google.rpc.ErrorInfo` with `@type`,
 * `reason`, `domain: "a2a-protocol.org"` and string-to-string `metadata` (A2A §9.5: `data` is an
 * array of `@type` objects; at v1.0.0 the ErrorInfo was a MUST for A2A errors, at v1.0.1 a
 * SHOULD, so always sending it satisfies both).
 *
 * Reasons follow the spec's rule for the gRPC and HTTP bindings (A2A §10.6, §11.6): the error's
 * name in UPPER_SNAKE case without "Error", so `TaskNotFoundError` is `TASK_NOT_FOUND` and the
 * standard `JSONParseError` of the A2A §9.5 table is `JSON_PARSE`. One reason is the Beacon's
 * refinement of a standard code: `UNAVAILABLE` (-32603, the google.rpc code name, telling a
 * client that nothing was stored and a retry may succeed), and `OUTCOME_UNKNOWN` (-32603: the
 * commit was sent and did not answer; `metadata.taskId` names the task it created if it was
 * stored, and `GetTask` or `metadata.statusUrl` says whether it was).
 *
 * The mapping is total and never leaks: an {@linkcode A2AFailure} carries only text and metadata
 * written here or by the endpoint's own code; a `StorageError` and an unknown thrown value become
 * -32603 with fixed messages, so no stack, driver message or submitted content can reach a
 * response (design principle 2).
 *
 * @module
 */
import { OutcomeUnknownError, stackless, StorageError } from "../errors.ts";

/** `@type` of a `google.rpc.ErrorInfo` in the ProtoJSON `Any` form (A2A §9.5). */
export const ERROR_INFO_TYPE = "type.googleapis.com/google.rpc.ErrorInfo";

/** `@type` of a `google.rpc.BadRequest` in the ProtoJSON `Any` form (A2A §9.5). */
export const BAD_REQUEST_TYPE = "type.googleapis.com/google.rpc.BadRequest";

/** `@type` of a `google.rpc.RetryInfo` in the ProtoJSON `Any` form (A2A §9.5). */
export const RETRY_INFO_TYPE = "type.googleapis.com/google.rpc.RetryInfo";

/** Most field violations one -32602 answer lists. */
export const MAX_FIELD_VIOLATIONS = 20;

/** `ErrorInfo.domain` of every error the Beacon sends (A2A §9.5 example). */
export const ERROR_DOMAIN = "a2a-protocol.org";

/** Every kind of JSON-RPC error the endpoint sends. */
export type FailureKind =
  | "parse"
  | "invalidRequest"
  | "methodNotFound"
  | "invalidParams"
  | "internal"
  | "unavailable"
  | "rateLimited"
  | "outcomeUnknown"
  | "taskNotFound"
  | "taskNotCancelable"
  | "pushNotificationNotSupported"
  | "unsupportedOperation"
  | "contentTypeNotSupported"
  | "versionNotSupported";

/** Code, ErrorInfo reason and fixed default message of one kind. */
export interface FailureSpec {
  /** The JSON-RPC error code (JSON-RPC 2.0 §5.1; A2A §5.4, §9.5). */
  readonly code: number;
  /** The `ErrorInfo.reason`. */
  readonly reason: string;
  /** The human text sent when the thrower gives none. */
  readonly message: string;
}

/** The code table (A2A §5.4 and §9.5; JSON-RPC 2.0 §5.1 for the standard codes). */
export const FAILURES: Readonly<Record<FailureKind, FailureSpec>> = {
  parse: { code: -32700, reason: "JSON_PARSE", message: "Invalid JSON payload" },
  invalidRequest: {
    code: -32600,
    reason: "INVALID_REQUEST",
    message: "Request payload validation error",
  },
  methodNotFound: { code: -32601, reason: "METHOD_NOT_FOUND", message: "Method not found" },
  invalidParams: { code: -32602, reason: "INVALID_PARAMS", message: "Invalid parameters" },
  internal: { code: -32603, reason: "INTERNAL", message: "Internal error" },
  unavailable: {
    code: -32603,
    reason: "UNAVAILABLE",
    message: "Storage is unavailable; retry later",
  },
  rateLimited: {
    code: -32603,
    reason: "RATE_LIMITED",
    message: "Too many requests from this source; retry after retryAfterSeconds (Retry-After)",
  },
  outcomeUnknown: {
    code: -32603,
    reason: "OUTCOME_UNKNOWN",
    message:
      "The commit did not answer in time: the task may or may not exist. GetTask with metadata.taskId says which",
  },
  taskNotFound: { code: -32001, reason: "TASK_NOT_FOUND", message: "Task not found" },
  taskNotCancelable: {
    code: -32002,
    reason: "TASK_NOT_CANCELABLE",
    message: "Task cannot be canceled: the submission store is append-only",
  },
  pushNotificationNotSupported: {
    code: -32003,
    reason: "PUSH_NOTIFICATION_NOT_SUPPORTED",
    message: "Push notifications are not supported: the Beacon never contacts anyone",
  },
  unsupportedOperation: {
    code: -32004,
    reason: "UNSUPPORTED_OPERATION",
    message: "This operation is not supported",
  },
  contentTypeNotSupported: {
    code: -32005,
    reason: "CONTENT_TYPE_NOT_SUPPORTED",
    message: "Incompatible content types",
  },
  versionNotSupported: {
    code: -32009,
    reason: "VERSION_NOT_SUPPORTED",
    message: "A2A version not supported: this interface speaks 1.0 only",
  },
};

/** A `google.rpc.ErrorInfo` as it travels in `error.data`. */
export interface ErrorInfo {
  /** Always {@linkcode ERROR_INFO_TYPE}. */
  readonly "@type": typeof ERROR_INFO_TYPE;
  /** UPPER_SNAKE reason, such as `TASK_NOT_FOUND`. */
  readonly reason: string;
  /** Always {@linkcode ERROR_DOMAIN}. */
  readonly domain: typeof ERROR_DOMAIN;
  /** google.rpc `map<string, string>`: values are always strings. */
  readonly metadata: Readonly<Record<string, string>>;
}

/** One `google.rpc.BadRequest.FieldViolation`: a path of ours and a fixed text. */
export interface FieldViolation {
  /** The field's path, built from A2A's and the message schema's own names and indices. */
  readonly field: string;
  /** Fixed human text, such as "is required"; never a value. */
  readonly description: string;
}

/** A `google.rpc.BadRequest` as it travels in `error.data` beside the ErrorInfo. */
export interface BadRequest {
  /** Always {@linkcode BAD_REQUEST_TYPE}. */
  readonly "@type": typeof BAD_REQUEST_TYPE;
  /** Every violation found, at most {@linkcode MAX_FIELD_VIOLATIONS}. */
  readonly fieldViolations: readonly FieldViolation[];
}

/** A `google.rpc.RetryInfo`: how long to wait, as a ProtoJSON `Duration` (`"12s"`). */
export interface RetryInfo {
  /** Always {@linkcode RETRY_INFO_TYPE}. */
  readonly "@type": typeof RETRY_INFO_TYPE;
  /** Whole seconds and `s`, the same number as the `Retry-After` header. */
  readonly retryDelay: string;
}

/** A JSON-RPC 2.0 error object (JSON-RPC 2.0 §5.1). */
export interface JsonRpcErrorObject {
  /** The error code. */
  readonly code: number;
  /** Fixed human text, never submitted content. */
  readonly message: string;
  /**
   * One ErrorInfo, then for -32602 one BadRequest naming every violation (A2A §9.5: an array
   * of `@type` objects; ErrorInfo and BadRequest are the two types it names).
   */
  readonly data:
    | readonly [ErrorInfo]
    | readonly [ErrorInfo, BadRequest]
    | readonly [ErrorInfo, RetryInfo];
}

/**
 * An expected refusal of the A2A endpoint. `message` and every `metadata` value must be text
 * written by us (they are sent to the client): never interpolate submitted content into them.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { A2AFailure } from "./errors.ts";
 *
 * assert.throws(() => {
 *   throw new A2AFailure("taskNotFound");
 * }, A2AFailure);
 * ```
 */
export class A2AFailure extends Error {
  /** Which row of {@linkcode FAILURES} this is. */
  readonly kind: FailureKind;
  /** `ErrorInfo.metadata`: fixed names and values chosen by our code. */
  readonly metadata: Readonly<Record<string, string>>;
  /** For -32602: the violations sent as a `google.rpc.BadRequest`. */
  readonly violations: readonly FieldViolation[] | undefined;

  /** Creates a refusal; `message` defaults to the kind's fixed text. */
  constructor(
    kind: FailureKind,
    message?: string,
    metadata: Record<string, string> = {},
    violations?: readonly FieldViolation[],
  ) {
    const limit = stackless(); // an expected refusal needs no stack (see src/errors.ts)
    super(message ?? FAILURES[kind].message);
    Error.stackTraceLimit = limit;
    this.name = "A2AFailure";
    this.kind = kind;
    this.metadata = metadata;
    this.violations = violations?.slice(0, MAX_FIELD_VIOLATIONS);
  }
}

/**
 * A -32602 refusal naming the field (A2A §3.3.2: say which field; design: never its value).
 * `field` must be a path built from our own member names and array indices, such as
 * `message.parts[2]`, and `problem` fixed text such as "must be a string". The answer carries
 * a `google.rpc.BadRequest` beside the ErrorInfo (A2A §9.5) listing `violations`: by default
 * this one, or every one found when the caller collected several.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { A2AFailure, invalidParams } from "./errors.ts";
 *
 * assert.ok(invalidParams("message.messageId", "is required") instanceof A2AFailure);
 * ```
 */
export function invalidParams(
  field: string,
  problem: string,
  violations: readonly FieldViolation[] = [{ field, description: problem }],
): A2AFailure {
  return new A2AFailure(
    "invalidParams",
    `Invalid parameters: ${field} ${problem}`,
    { field },
    violations,
  );
}

function errorObject(
  kind: FailureKind,
  message: string,
  metadata: Readonly<Record<string, string>>,
  violations?: readonly FieldViolation[],
): JsonRpcErrorObject {
  const spec = FAILURES[kind];
  const info: ErrorInfo = {
    "@type": ERROR_INFO_TYPE,
    reason: spec.reason,
    domain: ERROR_DOMAIN,
    metadata,
  };
  if (violations === undefined || violations.length === 0) {
    return { code: spec.code, message, data: [info] };
  }
  return {
    code: spec.code,
    message,
    data: [info, { "@type": BAD_REQUEST_TYPE, fieldViolations: violations }],
  };
}

/**
 * The JSON-RPC error of a rate refusal (-32603 `RATE_LIMITED`, a Beacon refinement like
 * `UNAVAILABLE`): the exhausted budget and the wait in the ErrorInfo's metadata
 * (`retryAfterSeconds`, a string as google.rpc metadata values are), and the same wait as a
 * `google.rpc.RetryInfo`, the type gRPC clients read it from.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { rateLimitedError } from "./errors.ts";
 *
 * const error = rateLimitedError("submissions", 12);
 * assert.equal(error.data[0].metadata.retryAfterSeconds, "12");
 * assert.deepEqual(error.data[1], {
 *   "@type": "type.googleapis.com/google.rpc.RetryInfo",
 *   retryDelay: "12s",
 * });
 * ```
 */
export function rateLimitedError(
  budget: "submissions" | "status",
  retryAfterSeconds: number,
): JsonRpcErrorObject {
  const seconds = String(retryAfterSeconds);
  const info: ErrorInfo = {
    "@type": ERROR_INFO_TYPE,
    reason: FAILURES.rateLimited.reason,
    domain: ERROR_DOMAIN,
    metadata: { budget, retryAfterSeconds: seconds },
  };
  return {
    code: FAILURES.rateLimited.code,
    message: FAILURES.rateLimited.message,
    data: [info, { "@type": RETRY_INFO_TYPE, retryDelay: `${seconds}s` }],
  };
}

/**
 * The kind a thrown value maps to. Total: anything unknown is `internal`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { failureKindOf } from "./errors.ts";
 *
 * assert.equal(failureKindOf(new TypeError("x")), "internal");
 * ```
 */
export function failureKindOf(error: unknown): FailureKind {
  if (error instanceof A2AFailure) return error.kind;
  if (error instanceof OutcomeUnknownError) return "outcomeUnknown";
  if (error instanceof StorageError) return "unavailable";
  // The A2A path asks the intake to replay on any key match, so it never meets an
  // IdempotencyKeyReusedError; were it to, it would be a defect, answered as internal.
  return "internal";
}

/**
 * Maps any thrown value to a JSON-RPC error object. Only an {@linkcode A2AFailure} keeps its own
 * message and metadata; every other value gets the fixed text of its kind, so an unknown
 * error's message never reaches a client.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { A2AFailure, toJsonRpcError } from "./errors.ts";
 *
 * assert.equal(toJsonRpcError(new A2AFailure("taskNotFound")).code, -32001);
 * assert.equal(toJsonRpcError(new Error("secret path /var/db")).message, "Internal error");
 * ```
 */
export function toJsonRpcError(error: unknown): JsonRpcErrorObject {
  if (error instanceof A2AFailure) {
    return errorObject(error.kind, error.message, error.metadata, error.violations);
  }
  if (error instanceof OutcomeUnknownError) {
    // Our own minted id and URL, never submitted content (so no echo).
    const metadata: Record<string, string> = { taskId: error.receiptId };
    if (error.status !== undefined) metadata.statusUrl = error.status;
    return errorObject("outcomeUnknown", FAILURES.outcomeUnknown.message, metadata);
  }
  const kind = failureKindOf(error);
  return errorObject(kind, FAILURES[kind].message, {});
}
