/**
 * The endpoint handler in-process: the order of the checks, the request log facts, and the
 * total error mapping when the store fails or something unexpected throws (nothing leaks, the
 * operator's hook hears about it).
 */
import { assert, assertEquals, assertStrictEquals } from "../support/assert.ts";
import { a2aHandler } from "../../src/a2a/endpoint.ts";
import type { Context } from "../../src/http/context.ts";
import { realIntake } from "../support/intake.ts";
import { contextFor } from "../support/context.ts";
import { StorageError } from "../../src/errors.ts";
import { createBeacon } from "../../src/beacon.ts";
import type { RequestLogEntry } from "../../src/http/request_log.ts";

function context(body: unknown, headers: Record<string, string> = {}): Context {
  return contextFor("/a2a/v1", {
    method: "POST",
    headers: { "content-type": "application/json", "a2a-version": "1.0", ...headers },
    body,
    remoteAddress: "127.0.0.1",
  });
}

const SEND = {
  jsonrpc: "2.0",
  id: 1,
  method: "SendMessage",
  params: { message: { messageId: "m", role: "ROLE_USER", parts: [{ text: "hi" }] } },
};

Deno.test("a2aHandler() answers a StorageError with -32603 UNAVAILABLE and tells onError", async () => {
  const heard: unknown[] = [];
  const handler = a2aHandler({
    intake: await realIntake({ closed: true }),
    origin: (context) => context.url.origin,
    onError: (error) => heard.push(error),
  });
  for (
    const body of [SEND, {
      jsonrpc: "2.0",
      id: 2,
      method: "GetTask",
      params: { id: "A".repeat(30) },
    }]
  ) {
    const ctx = context(body);
    const response = await handler(ctx);
    assertStrictEquals(response.status, 200);
    const text = await response.text();
    assert(!text.includes("secret"));
    const json = JSON.parse(text);
    assertStrictEquals(json.error.code, -32603);
    assertStrictEquals(json.error.message, "Storage is unavailable; retry later");
    assertStrictEquals(json.error.data[0].reason, "UNAVAILABLE");
    assertStrictEquals(json.id, body.id);
    assertStrictEquals(ctx.log.outcome, "failed");
    assertStrictEquals(ctx.log.code, -32603);
  }
  assertEquals(heard.length, 2);
  assert(heard.every((error) => error instanceof StorageError));
});

Deno.test("a2aHandler() answers an unexpected error with a fixed -32603 and survives a bad hook", async () => {
  const handler = a2aHandler({
    intake: await realIntake({
      signReceipts: () =>
        Promise.reject(new TypeError("Cannot read properties of undefined (reading 'token-xyz')")),
    }),
    origin: (context) => context.url.origin,
    onError: () => {
      throw new Error("the hook itself fails");
    },
  });
  const response = await handler(context(SEND));
  const json = await response.json();
  assertEquals(json.error.code, -32603);
  assertEquals(json.error.message, "Internal error");
  assertEquals(json.error.data[0].reason, "INTERNAL");
});

Deno.test("a2aHandler() checks media type, then parse, then envelope, then version", async () => {
  const handler = a2aHandler({
    intake: await realIntake(),
    origin: (context) => context.url.origin,
  });
  const codeOf = async (ctx: Context) => (await (await handler(ctx)).json()).error.code;
  // Each request breaks every later rule too; the first rule in the order decides.
  assertStrictEquals(
    await codeOf(context("[", { "content-type": "text/plain", "a2a-version": "0.3" })),
    -32005,
  );
  assertStrictEquals(await codeOf(context("[", { "a2a-version": "0.3" })), -32700);
  assertStrictEquals(await codeOf(context([], { "a2a-version": "0.3" })), -32600);
  assertStrictEquals(
    await codeOf(context({ jsonrpc: "2.0", id: 1, method: "x" }, { "a2a-version": "0.3" })),
    -32009,
  );
  assertStrictEquals(await codeOf(context({ jsonrpc: "2.0", id: 1, method: "x" })), -32601);
  const ctx = context({ jsonrpc: "2.0", id: 1, method: "ListTasks" });
  const response = await handler(ctx);
  assertEquals((await response.json()).result.pageSize, 50);
  assertStrictEquals(ctx.log.outcome, "served");
});

Deno.test("the request log records the JSON-RPC code and the receipt id, never content", async () => {
  const directory = await Deno.makeTempDir({ prefix: "beacon-a2a-" });
  const entries: RequestLogEntry[] = [];
  const beacon = createBeacon({
    database: { url: `file:${directory}/x.db` },
    rateLimit: "off",
    log: (entry) => entries.push(entry),
  });
  try {
    const post = async (body: unknown) => {
      const response = await beacon.fetch(
        new Request("http://127.0.0.1/a2a/v1", {
          method: "POST",
          headers: { "content-type": "application/json", "a2a-version": "1.0" },
          body: JSON.stringify(body),
        }),
        { remoteAddress: "127.0.0.1" },
      );
      return await response.json();
    };
    const accepted = await post(SEND);
    const replayed = await post(SEND);
    await post({ ...SEND, id: 3, method: "CancelTask", params: { id: accepted.result.task.id } });
    assertEquals(replayed.result, accepted.result);
    const id = accepted.result.task.id;
    assertEquals(
      entries.map(({ route, status, outcome, code, receiptId }) => ({
        route,
        status,
        outcome,
        code,
        receiptId,
      })),
      [
        { route: "a2a", status: 200, outcome: "accepted", code: undefined, receiptId: id },
        { route: "a2a", status: 200, outcome: "replayed", code: undefined, receiptId: id },
        { route: "a2a", status: 200, outcome: "refused", code: -32002, receiptId: undefined },
      ],
    );
    assert(!JSON.stringify(entries).includes("hi"));
  } finally {
    await beacon.close();
    await Deno.remove(directory, { recursive: true });
  }
});
