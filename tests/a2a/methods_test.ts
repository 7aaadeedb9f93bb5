/** The method table: every A2A 1.0 JSON-RPC method is present, 0.3 names point to 1.0 names. */
import { assert, assertEquals, assertRejects, assertStrictEquals } from "../support/assert.ts";
import { StorageError } from "../../src/errors.ts";
import { LEGACY_METHODS, methodFor, METHODS } from "../../src/a2a/methods.ts";
import { A2AFailure, toJsonRpcError } from "../../src/a2a/errors.ts";
import type { Intake } from "../../src/intake/accept.ts";
import { realIntake } from "../support/intake.ts";

/** The eleven methods of A2A 1.0 §9.4 (the JSON-RPC names the JS SDK 1.3.0 transport sends). */
const A2A_METHODS = [
  "SendMessage",
  "SendStreamingMessage",
  "GetTask",
  "ListTasks",
  "CancelTask",
  "SubscribeToTask",
  "CreateTaskPushNotificationConfig",
  "GetTaskPushNotificationConfig",
  "ListTaskPushNotificationConfigs",
  "DeleteTaskPushNotificationConfig",
  "GetExtendedAgentCard",
];

const untouchable = new Proxy({}, {
  get() {
    throw new Error("this method must not touch the intake");
  },
}) as Intake;

async function codeOf(
  method: string,
  params?: Record<string, unknown>,
  intake: Intake = untouchable,
): Promise<number | undefined> {
  try {
    await methodFor(method)(params as never, {
      intake,
      origin: "http://x",
      source: "s",
    });
  } catch (error) {
    assert(error instanceof A2AFailure, String(error));
    return toJsonRpcError(error).code;
  }
  return undefined;
}

Deno.test("METHODS holds exactly the A2A 1.0 JSON-RPC methods", () => {
  assertEquals([...METHODS.keys()].sort(), [...A2A_METHODS].sort());
});

Deno.test("methodFor() refuses unknown names with -32601 and names the 1.0 method for 0.3 names", () => {
  for (
    const name of [
      "",
      "sendMessage",
      "SENDMESSAGE",
      "constructor",
      "__proto__",
      "toString",
      "hasOwnProperty",
    ]
  ) {
    let failure: unknown;
    try {
      methodFor(name);
    } catch (error) {
      failure = error;
    }
    assert(failure instanceof A2AFailure && failure.kind === "methodNotFound", name);
    assertEquals(failure.metadata, {});
  }
  for (const [legacy, current] of LEGACY_METHODS) {
    assert(METHODS.has(current), current);
    try {
      methodFor(legacy);
      throw new Error("expected -32601");
    } catch (error) {
      assert(error instanceof A2AFailure);
      assertEquals(error.metadata, { replacementMethod: current });
    }
  }
  assertStrictEquals(LEGACY_METHODS.size, 10);
});

Deno.test("capability gates answer without params or storage: -32004 and -32003", async () => {
  for (const method of ["SendStreamingMessage", "SubscribeToTask", "GetExtendedAgentCard"]) {
    assertStrictEquals(await codeOf(method), -32004, method);
    assertStrictEquals(await codeOf(method, { anything: [1, 2] }), -32004, method);
  }
  for (const method of A2A_METHODS.filter((name) => name.includes("PushNotification"))) {
    assertStrictEquals(await codeOf(method), -32003, method);
  }
});

Deno.test("GetTask and CancelTask refuse malformed ids with -32001 without touching storage", async () => {
  const intake = await realIntake({ closed: true });
  // A well-formed id does reach the (closed) store, and fails there.
  await assertRejects(
    () =>
      methodFor("GetTask")({ id: "A".repeat(30) } as never, { intake, origin: "o", source: "s" }),
    StorageError,
  );
  for (const id of ["short", "A".repeat(23), "A".repeat(21) + "=", "A".repeat(21) + "/"]) {
    assertStrictEquals(await codeOf("GetTask", { id }, intake), -32001, id);
    assertStrictEquals(await codeOf("CancelTask", { id }, intake), -32001, id);
  }
});

Deno.test("ListTasks never touches storage", async () => {
  const outcome = await methodFor("ListTasks")({ pageSize: 7 }, {
    intake: untouchable,
    origin: "o",
    source: "s",
  });
  assertEquals(outcome.result, { tasks: [], nextPageToken: "", pageSize: 7, totalSize: 0 });
});
