/**
 * Interoperability with the official A2A JS client, `@a2a-js/sdk/client` 1.3.0 (A2A 1.0), driving
 * the real server (`src/adapter/deno/server.ts`) over HTTP: discovery from the card, SendMessage with a
 * text part and with a data part, GetTask on the returned id, and each unsupported method
 * surfacing as the SDK's typed error for the right JSON-RPC code.
 *
 * The SDK's typed errors are checked the way the SDK's own `instanceof` works (its
 * `A2AError[Symbol.hasInstance]`): the SDK brand `Symbol.for("@a2a-js/sdk.A2AError")` and a
 * constructor of that name on the prototype chain. (`@a2a-js/sdk/errors` is not mapped in
 * deno.json, and inline `npm:` specifiers are refused by the linter.)
 */
import { ClientFactory, JsonRpcTransportFactory } from "@a2a-js/sdk/client";
import { Role, TaskState } from "@a2a-js/sdk";
import type { Message, Part, SendMessageRequest } from "@a2a-js/sdk";
import { assert, assertEquals, assertStrictEquals } from "../support/assert.ts";
import { startServer } from "../support/server.ts";
import { exampleMessages } from "../../src/message/examples.ts";

const SDK_BRAND = Symbol.for("@a2a-js/sdk.A2AError");

/** What the SDK's `error instanceof <name>` answers. */
function isSdkError(error: unknown, name: string): boolean {
  if (typeof error !== "object" || error === null || !(SDK_BRAND in error)) return false;
  for (
    let proto = Object.getPrototypeOf(error);
    proto !== null;
    proto = Object.getPrototypeOf(proto)
  ) {
    if (proto.constructor?.name === name) return true;
  }
  return false;
}

async function rejectsWith(call: () => Promise<unknown>, name: string, code: number) {
  let caught: unknown;
  try {
    await call();
  } catch (error) {
    caught = error;
  }
  assert(caught !== undefined, `expected ${name}, but the call succeeded`);
  assert(isSdkError(caught, name), `expected the SDK's ${name}, got ${String(caught)}`);
  assertStrictEquals((caught as { envelopeCode?: number }).envelopeCode, code);
  assertStrictEquals((caught as { transport?: string }).transport, "jsonrpc");
}

function textPart(value: string): Part {
  return { content: { $case: "text", value }, metadata: undefined, filename: "", mediaType: "" };
}

function message(parts: Part[], messageId = crypto.randomUUID()): Message {
  return {
    messageId,
    contextId: "",
    taskId: "",
    role: Role.ROLE_USER,
    parts,
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
}

function request(parts: Part[]): SendMessageRequest {
  return { tenant: "", message: message(parts), configuration: undefined, metadata: undefined };
}

/** The transport's methods take the service parameters the Client would add. */
const V1 = { serviceParameters: { "A2A-Version": "1.0" } };

/** A push-notification config for `taskId`, which the Beacon refuses (it never calls out). */
function pushConfigFor(taskId: string) {
  return {
    tenant: "",
    id: "",
    taskId,
    url: "https://example.com/hook",
    token: "",
    authentication: undefined,
  };
}

Deno.test("@a2a-js/sdk client 1.3.0 interoperates with the Beacon", async (t) => {
  const server = await startServer();
  const sent: { headers: Headers; body: string }[] = [];
  // Records what the SDK puts on the wire, so the tests also show its exact requests.
  const recordingFetch: typeof fetch = async (input, init) => {
    if (init?.method === "POST") {
      sent.push({ headers: new Headers(init.headers), body: String(init.body) });
    }
    return await fetch(input, init);
  };
  try {
    const factory = new ClientFactory({
      transports: [new JsonRpcTransportFactory({ fetchImpl: recordingFetch })],
    });
    const client = await factory.createFromUrl(server.url);

    await t.step(
      "createFromUrl() discovers the card and picks the JSON-RPC 1.0 interface",
      async () => {
        const card = await client.getAgentCard();
        assertStrictEquals(card.supportedInterfaces.length, 1);
        assertStrictEquals(card.supportedInterfaces[0].url, `${server.url}/a2a/v1`);
        assertStrictEquals(card.supportedInterfaces[0].protocolBinding, "JSONRPC");
        assertStrictEquals(card.supportedInterfaces[0].protocolVersion, "1.0");
        assertStrictEquals(card.capabilities?.streaming, false);
        assertStrictEquals(card.capabilities?.pushNotifications, false);
        assertStrictEquals(client.protocolVersion, "1.0");
      },
    );

    let textTaskId = "";
    await t.step("sendMessage() with a text part returns a SUBMITTED task", async () => {
      const result = await client.sendMessage(request([textPart("Hello from the A2A JS SDK.")]));
      assert("status" in result, "expected a Task, not a Message");
      assertStrictEquals(result.status?.state, TaskState.TASK_STATE_SUBMITTED);
      assertEquals(result.history, []);
      assertEquals(result.artifacts, []);
      assert(/^[A-Za-z0-9_-]{30}$/.test(result.id));
      assert(/^[A-Za-z0-9_-]{22}$/.test(result.contextId));
      const receipt = result.metadata?.receipt;
      assertStrictEquals(receipt.id, result.id);
      assertStrictEquals(receipt.kind, "unstructured");
      assertStrictEquals(receipt.surface, "a2a");
      assertStrictEquals(result.status?.timestamp, receipt.receivedAt);
      textTaskId = result.id;
      // The wire request: 1.0 method name, the version header, ProtoJSON parts.
      const wire = JSON.parse(sent.at(-1)!.body);
      assertStrictEquals(wire.method, "SendMessage");
      assertStrictEquals(sent.at(-1)!.headers.get("a2a-version"), "1.0");
      assertEquals(wire.params.message.parts, [{ text: "Hello from the A2A JS SDK." }]);
      assertStrictEquals(wire.params.message.role, "ROLE_USER");
    });

    await t.step("getTask() finds the task sendMessage() returned", async () => {
      const task = await client.getTask({ tenant: "", id: textTaskId, historyLength: 0 });
      assertStrictEquals(task.id, textTaskId);
      assertStrictEquals(task.status?.state, TaskState.TASK_STATE_SUBMITTED);
    });

    await t.step(
      "sendMessage() with a beacon/0.1 data part is a structured submission",
      async () => {
        const data: Part = {
          content: { $case: "data", value: structuredClone(exampleMessages[1]) },
          metadata: undefined,
          filename: "",
          mediaType: "application/json",
        };
        const result = await client.sendMessage(request([data]));
        assert("status" in result);
        assertStrictEquals(result.status?.state, TaskState.TASK_STATE_SUBMITTED);
        const receipt = result.metadata?.receipt;
        assertStrictEquals(receipt.kind, "structured");
        assertStrictEquals(receipt.identity.verified, true);
        assert(String(receipt.identity.fingerprint).startsWith("sha256:"));
        const task = await client.getTask({ tenant: "", id: result.id });
        assertStrictEquals(task.id, result.id);
        assertStrictEquals(task.contextId, result.contextId);
      },
    );

    await t.step(
      "sendMessageStream() falls back to SendMessage: the card says streaming false",
      async () => {
        const events = [];
        for await (const event of client.sendMessageStream(request([textPart("Streamed?")]))) {
          events.push(event);
        }
        assertStrictEquals(events.length, 1);
        assertStrictEquals(events[0].payload?.$case, "task");
        assertStrictEquals(JSON.parse(sent.at(-1)!.body).method, "SendMessage");
      },
    );

    await t.step("getTask() of an unknown id is TaskNotFoundError (-32001)", async () => {
      await rejectsWith(
        () => client.getTask({ tenant: "", id: "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAA" }),
        "TaskNotFoundError",
        -32001,
      );
    });

    await t.step(
      "cancelTask() is TaskNotCancelableError (-32002), unknown TaskNotFoundError",
      async () => {
        await rejectsWith(
          () => client.cancelTask({ tenant: "", id: textTaskId, metadata: undefined }),
          "TaskNotCancelableError",
          -32002,
        );
        await rejectsWith(
          () => client.cancelTask({ tenant: "", id: "no-such-task", metadata: undefined }),
          "TaskNotFoundError",
          -32001,
        );
      },
    );

    await t.step("listTasks() is the empty list with all four fields", async () => {
      const list = await client.listTasks({
        tenant: "",
        contextId: "",
        status: TaskState.TASK_STATE_UNSPECIFIED,
        pageSize: 10,
        pageToken: "",
        statusTimestampAfter: undefined,
      });
      assertEquals(list, { tasks: [], nextPageToken: "", pageSize: 10, totalSize: 0 });
    });

    await t.step("resubscribeTask() is UnsupportedOperationError (-32004)", async () => {
      await rejectsWith(
        async () => {
          for await (const _ of client.resubscribeTask({ tenant: "", id: textTaskId })) {
            // no event is expected
          }
        },
        "UnsupportedOperationError",
        -32004,
      );
    });

    await t.step(
      "deleteTaskPushNotificationConfig() is PushNotificationNotSupportedError (-32003)",
      async () => {
        await rejectsWith(
          () =>
            client.deleteTaskPushNotificationConfig({ tenant: "", taskId: textTaskId, id: "x" }),
          "PushNotificationNotSupportedError",
          -32003,
        );
      },
    );

    await t.step("a file part is ContentTypeNotSupportedError (-32005)", async () => {
      const url: Part = {
        content: { $case: "url", value: "https://example.com/a.pdf" },
        metadata: undefined,
        filename: "a.pdf",
        mediaType: "application/pdf",
      };
      await rejectsWith(
        () => client.sendMessage(request([url])),
        "ContentTypeNotSupportedError",
        -32005,
      );
    });

    await t.step(
      "a message to an existing task is UnsupportedOperationError (-32004)",
      async () => {
        const continued = request([textPart("More")]);
        continued.message!.taskId = textTaskId;
        await rejectsWith(() => client.sendMessage(continued), "UnsupportedOperationError", -32004);
        continued.message!.taskId = "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAA";
        await rejectsWith(() => client.sendMessage(continued), "TaskNotFoundError", -32001);
      },
    );

    // The Client refuses some calls itself from the card (push with pushNotifications false,
    // no extended-card call without extendedAgentCard); the transport sends them anyway, so
    // the server's answers are checked through it, with the header the Client would add.
    const card = await client.getAgentCard();
    const transport = await new JsonRpcTransportFactory().create(
      card.supportedInterfaces[0].url,
      card,
    );

    await t.step("the Client itself refuses push-config calls, from the card", async () => {
      let caught: unknown;
      try {
        await client.getTaskPushNotificationConfig({ tenant: "", taskId: textTaskId, id: "x" });
      } catch (error) {
        caught = error;
      }
      assert(isSdkError(caught, "PushNotificationNotSupportedError"));
      const requests = sent.length;
      try {
        await client.createTaskPushNotificationConfig(pushConfigFor(textTaskId));
      } catch (error) {
        caught = error;
      }
      assert(isSdkError(caught, "PushNotificationNotSupportedError"));
      assertStrictEquals(sent.length, requests, "the Client refused without a request");
    });

    await t.step(
      "each push-config method on the wire is PushNotificationNotSupportedError (-32003)",
      async () => {
        const name = "PushNotificationNotSupportedError";
        await rejectsWith(
          () => transport.createTaskPushNotificationConfig(pushConfigFor(textTaskId), V1),
          name,
          -32003,
        );
        const byId = { tenant: "", taskId: textTaskId, id: "x" };
        const calls = [
          () => transport.getTaskPushNotificationConfig(byId, V1),
          () =>
            transport.listTaskPushNotificationConfig(
              { tenant: "", taskId: textTaskId, pageSize: 0, pageToken: "" },
              V1,
            ),
          () => transport.deleteTaskPushNotificationConfig(byId, V1),
        ];
        for (const call of calls) await rejectsWith(call, name, -32003);
      },
    );

    await t.step(
      "SendStreamingMessage on the wire is UnsupportedOperationError (-32004)",
      async () => {
        await rejectsWith(
          async () => {
            for await (const _ of transport.sendMessageStream(request([textPart("x")]), V1)) {
              // no event is expected
            }
          },
          "UnsupportedOperationError",
          -32004,
        );
      },
    );

    await t.step(
      "GetExtendedAgentCard on the wire is UnsupportedOperationError (-32004)",
      async () => {
        await rejectsWith(
          () => transport.getExtendedAgentCard({ tenant: "" }, V1),
          "UnsupportedOperationError",
          -32004,
        );
      },
    );

    await t.step("a request without A2A-Version is VersionNotSupportedError (-32009)", async () => {
      await rejectsWith(
        () => transport.getTask({ tenant: "", id: textTaskId }, { serviceParameters: {} }),
        "VersionNotSupportedError",
        -32009,
      );
    });
  } finally {
    await server.stop();
    await Deno.remove(server.directory, { recursive: true }).catch(() => {});
  }
});
