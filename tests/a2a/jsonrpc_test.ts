/** The JSON-RPC 2.0 envelope: what is a request, what each refusal is, and the response shape. */
import { assert, assertEquals, assertStrictEquals } from "../support/assert.ts";
import { codePointLengthWithin, isJsonObject } from "../../src/json/value.ts";
import {
  type EnvelopeResult,
  errorBody,
  MAX_ID_LENGTH,
  readEnvelope,
  resultBody,
  rpcResponse,
} from "../../src/a2a/jsonrpc.ts";
import { A2AFailure, toJsonRpcError } from "../../src/a2a/errors.ts";
import type { JsonValue } from "../../src/json/value.ts";

function refused(body: JsonValue): Extract<EnvelopeResult, { ok: false }> {
  const result = readEnvelope(body);
  assert(!result.ok, JSON.stringify(body));
  return result;
}

Deno.test("readEnvelope() accepts string and safe-integer ids, with or without params", () => {
  for (
    const id of [
      "",
      "abc",
      "x".repeat(MAX_ID_LENGTH),
      "😀".repeat(MAX_ID_LENGTH),
      0,
      -1,
      2 ** 53 - 1,
    ]
  ) {
    const result = readEnvelope({ jsonrpc: "2.0", id, method: "GetTask", params: { id: "x" } });
    assert(result.ok);
    assertEquals(result.request, { id, method: "GetTask", params: { id: "x" } });
  }
  const bare = readEnvelope({ jsonrpc: "2.0", id: 1, method: "GetExtendedAgentCard" });
  assert(bare.ok);
  assertStrictEquals(bare.request.params, undefined);
});

Deno.test("readEnvelope() refuses batches, notifications and bad ids with -32600 and id null", () => {
  const valid = { jsonrpc: "2.0", id: 1, method: "GetTask" };
  const cases: JsonValue[] = [
    [],
    [valid],
    1,
    "x",
    null,
    { ...valid, jsonrpc: "1.0" },
    { id: 1, method: "GetTask" },
    { jsonrpc: "2.0", method: "GetTask" },
    { ...valid, id: null },
    { ...valid, id: 1.5 },
    { ...valid, id: 2 ** 53 },
    { ...valid, id: true },
    { ...valid, id: {} },
    { ...valid, id: [] },
    { ...valid, id: "x".repeat(MAX_ID_LENGTH + 1) },
    { ...valid, id: "😀".repeat(MAX_ID_LENGTH + 1) },
    { jsonrpc: "2.0", id: 1 },
    { ...valid, method: 1 },
    { ...valid, method: null },
  ];
  for (const body of cases) {
    const result = refused(body);
    assertStrictEquals(result.id, null);
    assertStrictEquals(result.failure.kind, "invalidRequest");
  }
});

Deno.test("readEnvelope() refuses non-object params with -32602 and keeps the id", () => {
  for (const params of [[], "x", 1, null, false]) {
    const result = refused({ jsonrpc: "2.0", id: "r", method: "GetTask", params });
    assertStrictEquals(result.id, "r");
    assertStrictEquals(result.failure.kind, "invalidParams");
    assertEquals(result.failure.metadata, { field: "params" });
  }
});

Deno.test("readEnvelope() refusal messages never contain the request's content", () => {
  const marker = "MARKER-ENVELOPE";
  for (
    const body of [
      [marker],
      { jsonrpc: marker, id: 1, method: "m" },
      { jsonrpc: "2.0", id: marker.repeat(20), method: "m" },
      { jsonrpc: "2.0", method: marker },
    ] as JsonValue[]
  ) {
    const result = refused(body);
    assert(!JSON.stringify(toJsonRpcError(result.failure)).includes(marker));
  }
});

Deno.test("codePointLengthWithin() counts code points, not UTF-16 units", () => {
  assert(codePointLengthWithin("😀😀", 2));
  assert(!codePointLengthWithin("😀😀😀", 2));
  assert(codePointLengthWithin("", 0));
  assert(!codePointLengthWithin("a".repeat(5), 2));
});

Deno.test("isJsonObject() is true for objects only", () => {
  assert(isJsonObject({}));
  for (const value of [[], null, "s", 1, true, undefined]) assert(!isJsonObject(value));
});

Deno.test("rpcResponse() is HTTP 200 application/json with the response object", async () => {
  const ok = rpcResponse(resultBody(3, { a: 1 }));
  assertStrictEquals(ok.status, 200);
  assertStrictEquals(ok.headers.get("content-type"), "application/json");
  assertEquals(await ok.json(), { jsonrpc: "2.0", id: 3, result: { a: 1 } });
  const error = rpcResponse(errorBody(null, toJsonRpcError(new A2AFailure("parse"))));
  assertStrictEquals(error.status, 200);
  const body = await error.json();
  assertStrictEquals(body.id, null);
  assertStrictEquals(body.error.code, -32700);
  assertEquals(Object.keys(body), ["jsonrpc", "id", "error"]);
});
