/**
 * The one error mapping: every kind has the spec's code and reason, an ErrorInfo in `data`,
 * and nothing unknown ever reaches a client.
 */
import { assertEquals, assertStrictEquals } from "../support/assert.ts";
import {
  A2AFailure,
  ERROR_DOMAIN,
  ERROR_INFO_TYPE,
  type FailureKind,
  failureKindOf,
  FAILURES,
  invalidParams,
  toJsonRpcError,
} from "../../src/a2a/errors.ts";
import { IdempotencyKeyReusedError, OutcomeUnknownError, StorageError } from "../../src/errors.ts";
import { BeaconError } from "../../src/http/errors.ts";

Deno.test("FAILURES has the A2A §5.4 and JSON-RPC 2.0 codes with UPPER_SNAKE reasons", () => {
  const expected: Record<FailureKind, [number, string]> = {
    parse: [-32700, "JSON_PARSE"],
    invalidRequest: [-32600, "INVALID_REQUEST"],
    methodNotFound: [-32601, "METHOD_NOT_FOUND"],
    invalidParams: [-32602, "INVALID_PARAMS"],
    internal: [-32603, "INTERNAL"],
    unavailable: [-32603, "UNAVAILABLE"],
    rateLimited: [-32603, "RATE_LIMITED"],
    outcomeUnknown: [-32603, "OUTCOME_UNKNOWN"],
    taskNotFound: [-32001, "TASK_NOT_FOUND"],
    taskNotCancelable: [-32002, "TASK_NOT_CANCELABLE"],
    pushNotificationNotSupported: [-32003, "PUSH_NOTIFICATION_NOT_SUPPORTED"],
    unsupportedOperation: [-32004, "UNSUPPORTED_OPERATION"],
    contentTypeNotSupported: [-32005, "CONTENT_TYPE_NOT_SUPPORTED"],
    versionNotSupported: [-32009, "VERSION_NOT_SUPPORTED"],
  };
  assertEquals(
    Object.fromEntries(
      Object.entries(FAILURES).map(([kind, spec]) => [kind, [spec.code, spec.reason]]),
    ),
    expected,
  );
});

Deno.test("toJsonRpcError() puts one google.rpc.ErrorInfo in data", () => {
  const error = toJsonRpcError(new A2AFailure("taskNotFound", undefined, { field: "id" }));
  assertEquals(error, {
    code: -32001,
    message: "Task not found",
    data: [{
      "@type": ERROR_INFO_TYPE,
      reason: "TASK_NOT_FOUND",
      domain: ERROR_DOMAIN,
      metadata: { field: "id" },
    }],
  });
  assertStrictEquals(ERROR_INFO_TYPE, "type.googleapis.com/google.rpc.ErrorInfo");
  assertStrictEquals(ERROR_DOMAIN, "a2a-protocol.org");
});

Deno.test("toJsonRpcError() maps a StorageError to -32603 UNAVAILABLE with a fixed message", () => {
  const error = toJsonRpcError(new StorageError(new Error("SQLITE_BUSY: /var/lib/beacon.db")));
  assertStrictEquals(error.code, -32603);
  assertStrictEquals(error.message, "Storage is unavailable; retry later");
  assertStrictEquals(error.data[0].reason, "UNAVAILABLE");
  assertEquals(error.data[0].metadata, {});
});

Deno.test("toJsonRpcError() maps an unknown commit outcome to -32603 OUTCOME_UNKNOWN naming the task", () => {
  const unknown = new OutcomeUnknownError("AAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", {
    cause: new Error("SQLITE_BUSY: /var/lib/beacon.db"),
  }).at((id) => `https://beacon.example/beacon/0.1/submissions/${id}`);
  const error = toJsonRpcError(unknown);
  assertStrictEquals(error.code, -32603);
  assertStrictEquals(error.data[0].reason, "OUTCOME_UNKNOWN");
  assertEquals(error.data[0].metadata, {
    taskId: "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
    statusUrl: "https://beacon.example/beacon/0.1/submissions/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
  });
  assertStrictEquals(failureKindOf(unknown), "outcomeUnknown");
  assertStrictEquals(JSON.stringify(error).includes("SQLITE"), false);
});

Deno.test("toJsonRpcError() never exposes an unknown error's message", () => {
  for (
    const thrown of [
      new Error("secret /etc/passwd"),
      new TypeError("x is undefined"),
      "text",
      42,
      null,
      undefined,
      { message: "leak" },
    ]
  ) {
    const error = toJsonRpcError(thrown);
    assertStrictEquals(error.code, -32603);
    assertStrictEquals(error.message, "Internal error");
    assertStrictEquals(error.data[0].reason, "INTERNAL");
    assertEquals(error.data[0].metadata, {});
  }
});

Deno.test("toJsonRpcError() has no MESSAGE_ID_REUSED: a reused key cannot reach the A2A path", () => {
  const error = toJsonRpcError(new IdempotencyKeyReusedError());
  assertStrictEquals(error.code, -32603);
  assertStrictEquals(error.data[0].reason, "INTERNAL");
  assertEquals(error.data[0].metadata, {});
  // Other native refusals have no JSON-RPC meaning here; their text is not reused either.
  assertStrictEquals(
    toJsonRpcError(new BeaconError("too_large", "custom")).message,
    "Internal error",
  );
  // A native refusal is not a protocol-neutral fact: only the intake's own errors map here.
  assertStrictEquals(failureKindOf(new BeaconError("unavailable")), "internal");
  assertStrictEquals(failureKindOf(new StorageError()), "unavailable");
});

Deno.test("invalidParams() names the field and states the problem", () => {
  const failure = invalidParams("message.parts[2]", "must be an object");
  assertStrictEquals(failure.kind, "invalidParams");
  assertStrictEquals(failure.message, "Invalid parameters: message.parts[2] must be an object");
  assertEquals(failure.metadata, { field: "message.parts[2]" });
});
