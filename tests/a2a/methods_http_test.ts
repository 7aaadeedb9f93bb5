/**
 * Every row of the design's A2A method table over raw HTTP through the real server, the
 * SendMessage mapping (what is stored, byte for byte), idempotent retries, parameter
 * validation, no echo of any submitted content, and no row written by any refusal.
 */
import { assert, assertEquals, assertMatch, assertStrictEquals } from "../support/assert.ts";
import { exampleMessages } from "../../src/message/examples.ts";
import { idempotencyKeyOf } from "../../src/a2a/send_message.ts";
import type { JsonObject } from "../../src/json/value.ts";
import {
  type A2AServer,
  errorInfo,
  type RpcAnswer,
  startA2AServer,
  textMessage,
} from "../support/a2a.ts";

const UNKNOWN_ID = "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAA";
const decoder = new TextDecoder();

function expectError(answer: RpcAnswer, code: number, reason?: string, field?: string) {
  assertStrictEquals(answer.json.error?.code, code, answer.text);
  if (reason !== undefined) assertStrictEquals(errorInfo(answer).reason, reason);
  if (field !== undefined) assertStrictEquals(errorInfo(answer).metadata.field, field);
}

async function unchanged(a2a: A2AServer, run: () => Promise<void>): Promise<void> {
  const before = await a2a.count();
  await run();
  assertStrictEquals(await a2a.count(), before, "a refusal stores nothing");
}

async function storedRow(a2a: A2AServer, id: string) {
  const result = await a2a.db.execute({
    sql:
      "SELECT surface, kind, content_type, content, idempotency_key FROM submissions WHERE id = ?",
    args: [id],
  });
  assertStrictEquals(result.rows.length, 1);
  const row = result.rows[0];
  return {
    surface: row.surface,
    kind: row.kind,
    contentType: row.content_type,
    content: decoder.decode(row.content as ArrayBuffer),
    idempotencyKey: row.idempotency_key,
  };
}

Deno.test("A2A methods over HTTP: every row of the table", async (t) => {
  const a2a = await startA2AServer();
  try {
    let task: Record<string, unknown> = {};

    await t.step("SendMessage with text parts stores the message whole, unstructured", async () => {
      const params = {
        message: {
          messageId: "text-1",
          role: "ROLE_USER",
          parts: [{ text: "First part." }, { text: "Second part.", mediaType: "text/plain" }],
          metadata: { note: "kept" },
        },
        configuration: { returnImmediately: false, historyLength: 0, acceptedOutputModes: ["x/y"] },
      };
      const answer = await a2a.call("SendMessage", params, "s-1");
      assertStrictEquals(answer.json.id, "s-1");
      assertEquals(Object.keys(answer.json.result), ["task"]);
      task = answer.json.result.task;
      assertEquals(Object.keys(task), ["id", "contextId", "status", "metadata"]);
      assertMatch(String(task.id), /^[A-Za-z0-9_-]{30}$/);
      assertMatch(String(task.contextId), /^[A-Za-z0-9_-]{22}$/);
      assert(task.id !== task.contextId);
      const receipt = (task.metadata as { receipt: Record<string, unknown> }).receipt;
      assertEquals(task.status, { state: "TASK_STATE_SUBMITTED", timestamp: receipt.receivedAt });
      assertMatch(String(receipt.receivedAt), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      assertStrictEquals(receipt.id, task.id);
      assertStrictEquals(receipt.surface, "a2a");
      assertStrictEquals(receipt.kind, "unstructured");
      assertStrictEquals(receipt.status, `${a2a.url}/beacon/0.1/submissions/${task.id}`);

      const row = await storedRow(a2a, String(task.id));
      assertEquals(row, {
        surface: "a2a",
        kind: "unstructured",
        contentType: "application/json",
        content: JSON.stringify(params.message),
        idempotencyKey: `a2a:${idempotencyKeyOf(params.message as JsonObject)}`,
      });
      assertStrictEquals(receipt.size, new TextEncoder().encode(row.content).byteLength);

      // The native status endpoint knows the same id: one store, two protocols.
      const status = await fetch(String(receipt.status));
      assertStrictEquals(status.status, 200);
      assertStrictEquals((await status.json()).id, task.id);
    });

    await t.step(
      "SendMessage retried with the same messageId and content returns the same task",
      async () => {
        const params = textMessage("Retry me.", "retry-1");
        const first = await a2a.call("SendMessage", params, 1);
        const before = await a2a.count();
        const second = await a2a.call("SendMessage", params, 2);
        assertEquals(second.json.result, first.json.result);
        assertStrictEquals(await a2a.count(), before);
      },
    );

    await t.step(
      "a retry with its members in another order still returns the first task",
      async () => {
        const first = await a2a.call("SendMessage", textMessage("Reordered retry.", "order-1"));
        const before = await a2a.count();
        // The same message, re-serialised by a client that orders members differently.
        const reordered =
          '{"params":{"message":{"parts":[{"text":"Reordered retry."}],"role":"ROLE_USER",' +
          '"messageId":"order-1"}},"method":"SendMessage","id":9,"jsonrpc":"2.0"}';
        const second = await a2a.post(reordered);
        assertEquals(second.json.result, first.json.result);
        assertStrictEquals(await a2a.count(), before);
      },
    );

    await t.step(
      "the same messageId with other content is a new submission, never MESSAGE_ID_REUSED",
      async () => {
        const first = await a2a.call("SendMessage", textMessage("Original.", "reuse-1"));
        const before = await a2a.count();
        const second = await a2a.call("SendMessage", textMessage("Changed.", "reuse-1"));
        assert(!second.text.includes("MESSAGE_ID_REUSED"), second.text);
        const task = second.json.result.task;
        assert(task.id !== first.json.result.task.id, "a new task");
        assertStrictEquals(task.status.state, "TASK_STATE_SUBMITTED");
        assertStrictEquals(await a2a.count(), before + 1);
        assertStrictEquals((await storedRow(a2a, task.id)).content.includes("Changed."), true);
      },
    );

    await t.step(
      "SendMessage with one beacon/0.1 data part is structured; the data is stored",
      async () => {
        const data = structuredClone(exampleMessages[0]);
        const params = {
          message: {
            messageId: "data-1",
            role: 1, // the ProtoJSON number of ROLE_USER
            parts: [{ data, mediaType: "application/json" }, { text: "a note beside it" }],
          },
        };
        const answer = await a2a.call("SendMessage", params);
        const result = answer.json.result.task;
        assertStrictEquals(result.metadata.receipt.kind, "structured");
        assertStrictEquals(result.metadata.receipt.identity, undefined);
        const row = await storedRow(a2a, result.id);
        assertStrictEquals(row.kind, "structured");
        assertStrictEquals(row.contentType, "application/json");
        assertStrictEquals(row.content, JSON.stringify(data));
      },
    );

    await t.step("a signed data part records the verified identity in the receipt", async () => {
      const params = {
        message: {
          messageId: "signed-1",
          role: "ROLE_USER",
          parts: [{ data: structuredClone(exampleMessages[1]) }],
        },
      };
      const receipt = (await a2a.call("SendMessage", params)).json.result.task.metadata.receipt;
      assertStrictEquals(receipt.identity.verified, true);
      assertMatch(receipt.identity.fingerprint, /^sha256:[0-9a-f]{64}$/);
    });

    await t.step("an invalid data part beside text falls back to unstructured", async () => {
      const params = {
        message: {
          messageId: "mixed-1",
          role: "ROLE_USER",
          parts: [{ data: { any: "json" } }, { text: "hello" }],
        },
      };
      const receipt = (await a2a.call("SendMessage", params)).json.result.task.metadata.receipt;
      assertStrictEquals(receipt.kind, "unstructured");
    });

    await t.step(
      "two valid data parts and text are unstructured (only exactly one is structured)",
      async () => {
        const data = structuredClone(exampleMessages[0]);
        const params = {
          message: {
            messageId: "two-1",
            role: "ROLE_USER",
            parts: [{ data }, { data }, { text: "x" }],
          },
        };
        const receipt = (await a2a.call("SendMessage", params)).json.result.task.metadata.receipt;
        assertStrictEquals(receipt.kind, "unstructured");
      },
    );

    await t.step("a lone invalid data part is -32602 naming the schema field", async () => {
      await unchanged(a2a, async () => {
        const { sender: _, ...noSender } = structuredClone(exampleMessages[0]);
        const answer = await a2a.call("SendMessage", {
          message: { messageId: "bad-data", role: "ROLE_USER", parts: [{ data: noSender }] },
        });
        expectError(answer, -32602, "INVALID_PARAMS", "message.parts[0].data.sender");
      });
    });

    await t.step("raw and url parts are -32005, never fetched, nothing stored", async () => {
      await unchanged(a2a, async () => {
        for (
          const [part, field] of [
            [{ raw: "aGVsbG8=", mediaType: "image/png" }, "message.parts[1].raw"],
            [{ url: "http://127.0.0.1:1/never", mediaType: "text/html" }, "message.parts[1].url"],
          ] as const
        ) {
          const answer = await a2a.call("SendMessage", {
            message: {
              messageId: crypto.randomUUID(),
              role: "ROLE_USER",
              parts: [{ text: "x" }, part],
            },
          });
          expectError(answer, -32005, "CONTENT_TYPE_NOT_SUPPORTED", field);
        }
      });
    });

    await t.step("a push config in SendMessage is -32003, nothing stored", async () => {
      await unchanged(a2a, async () => {
        const answer = await a2a.call("SendMessage", {
          ...textMessage("Call me back."),
          configuration: { taskPushNotificationConfig: { url: "https://example.com/hook" } },
        });
        expectError(answer, -32003, "PUSH_NOTIFICATION_NOT_SUPPORTED");
      });
    });

    await t.step("message.taskId: unknown -32001, existing -32004; contextId -32004", async () => {
      await unchanged(a2a, async () => {
        const send = (extra: Record<string, string>) =>
          a2a.call("SendMessage", {
            message: { ...textMessage("More.").message, ...extra },
          });
        expectError(await send({ taskId: UNKNOWN_ID }), -32001, "TASK_NOT_FOUND", "message.taskId");
        expectError(await send({ taskId: "not-a-receipt-id" }), -32001, "TASK_NOT_FOUND");
        expectError(await send({ taskId: String(task.id) }), -32004, "UNSUPPORTED_OPERATION");
        expectError(
          await send({ contextId: String(task.contextId) }),
          -32004,
          "UNSUPPORTED_OPERATION",
          "message.contextId",
        );
        expectError(await send({ contextId: "anything" }), -32004);
        expectError(await send({ taskId: UNKNOWN_ID, contextId: "c" }), -32001);
      });
      // Empty ids are the ProtoJSON defaults: not set.
      const answer = await a2a.call("SendMessage", {
        message: { ...textMessage("Empty ids.").message, taskId: "", contextId: "" },
      });
      assertStrictEquals(answer.json.result.task.status.state, "TASK_STATE_SUBMITTED");
    });

    await t.step("SendMessage params are validated: -32602 naming the field", async () => {
      const base = textMessage("x").message;
      const cases: [unknown, string][] = [
        [undefined, "message"],
        [{}, "message"],
        [{ message: "hi" }, "message"],
        [{ message: { ...base, messageId: undefined } }, "message.messageId"],
        [{ message: { ...base, messageId: "" } }, "message.messageId"],
        [{ message: { ...base, messageId: 7 } }, "message.messageId"],
        [{ message: { ...base, messageId: "m".repeat(129) } }, "message.messageId"],
        [{ message: { ...base, role: undefined } }, "message.role"],
        [{ message: { ...base, role: "ROLE_AGENT" } }, "message.role"],
        [{ message: { ...base, role: 2 } }, "message.role"],
        [{ message: { ...base, parts: undefined } }, "message.parts"],
        [{ message: { ...base, parts: [] } }, "message.parts"],
        [{ message: { ...base, parts: {} } }, "message.parts"],
        [{ message: { ...base, parts: Array(65).fill({ text: "x" }) } }, "message.parts"],
        [{ message: { ...base, parts: ["text"] } }, "message.parts[0]"],
        [{ message: { ...base, parts: [{}] } }, "message.parts[0]"],
        [{ message: { ...base, parts: [{ text: "a", data: {} }] } }, "message.parts[0]"],
        [{ message: { ...base, parts: [{ text: 5 }] } }, "message.parts[0].text"],
        [
          { message: { ...base, parts: [{ text: "a", metadata: [] }] } },
          "message.parts[0].metadata",
        ],
        [{ message: { ...base, parts: [{ text: "   " }] } }, "message.parts"],
        [{ message: { ...base, taskId: 3 } }, "message.taskId"],
        [{ message: { ...base, extensions: [1] } }, "message.extensions[0]"],
        [{ message: base, tenant: "acme" }, "tenant"],
        [{ message: base, configuration: [] }, "configuration"],
        [{ message: base, configuration: { historyLength: -1 } }, "configuration.historyLength"],
        [
          { message: base, configuration: { returnImmediately: "yes" } },
          "configuration.returnImmediately",
        ],
        [{ message: base, metadata: "m" }, "metadata"],
      ];
      await unchanged(a2a, async () => {
        for (const [params, field] of cases) {
          expectError(await a2a.call("SendMessage", params), -32602, "INVALID_PARAMS", field);
        }
      });
    });

    await t.step(
      "SendMessage ignores unknown members, an empty tenant and null members",
      async () => {
        const answer = await a2a.call("SendMessage", {
          tenant: "",
          futureField: { x: 1 },
          message: { ...textMessage("ok").message, contextId: null, future: true },
          configuration: null,
        });
        assertStrictEquals(answer.json.result.task.status.state, "TASK_STATE_SUBMITTED");
      },
    );

    await t.step("GetTask returns id, contextId and status only", async () => {
      const answer = await a2a.call("GetTask", { id: task.id, historyLength: 3 }, 11);
      assertEquals(answer.json, {
        jsonrpc: "2.0",
        id: 11,
        result: { id: task.id, contextId: task.contextId, status: task.status },
      });
    });

    await t.step("GetTask of an unknown or malformed id is -32001; bad params -32602", async () => {
      expectError(await a2a.call("GetTask", { id: UNKNOWN_ID }), -32001, "TASK_NOT_FOUND", "id");
      expectError(await a2a.call("GetTask", { id: "../../etc/passwd" }), -32001);
      expectError(await a2a.call("GetTask", { id: String(task.id).toLowerCase() + "x" }), -32001);
      expectError(await a2a.call("GetTask", {}), -32602, "INVALID_PARAMS", "id");
      expectError(await a2a.call("GetTask"), -32602, "INVALID_PARAMS", "id");
      expectError(await a2a.call("GetTask", { id: 5 }), -32602, "INVALID_PARAMS", "id");
      expectError(
        await a2a.call("GetTask", { id: task.id, historyLength: -1 }),
        -32602,
        "INVALID_PARAMS",
        "historyLength",
      );
      expectError(
        await a2a.call("GetTask", { id: task.id, tenant: "t" }),
        -32602,
        undefined,
        "tenant",
      );
    });

    await t.step("CancelTask: known -32002, unknown -32001", async () => {
      await unchanged(a2a, async () => {
        expectError(await a2a.call("CancelTask", { id: task.id }), -32002, "TASK_NOT_CANCELABLE");
        expectError(await a2a.call("CancelTask", { id: task.id }), -32002, "TASK_NOT_CANCELABLE");
        expectError(await a2a.call("CancelTask", { id: UNKNOWN_ID }), -32001, "TASK_NOT_FOUND");
        expectError(await a2a.call("CancelTask", {}), -32602, "INVALID_PARAMS", "id");
      });
      const status = await a2a.call("GetTask", { id: task.id });
      assertStrictEquals(status.json.result.status.state, "TASK_STATE_SUBMITTED");
    });

    await t.step("ListTasks is always empty, with the given or default pageSize", async () => {
      const empty = { tasks: [], nextPageToken: "", totalSize: 0 };
      assertEquals((await a2a.call("ListTasks", {})).json.result, { ...empty, pageSize: 50 });
      assertEquals((await a2a.call("ListTasks")).json.result, { ...empty, pageSize: 50 });
      const full = {
        tenant: "",
        contextId: String(task.contextId),
        status: "TASK_STATE_SUBMITTED",
        pageSize: 100,
        pageToken: "",
        historyLength: 0,
        statusTimestampAfter: "2020-01-01T00:00:00.5+02:00",
        includeArtifacts: true,
      };
      assertEquals((await a2a.call("ListTasks", full)).json.result, { ...empty, pageSize: 100 });
      assertEquals((await a2a.call("ListTasks", { pageSize: 1, status: 1 })).json.result, {
        ...empty,
        pageSize: 1,
      });
    });

    await t.step("ListTasks params are validated: -32602 naming the field", async () => {
      const cases: [unknown, string][] = [
        [{ pageSize: 0 }, "pageSize"],
        [{ pageSize: 101 }, "pageSize"],
        [{ pageSize: 1.5 }, "pageSize"],
        [{ pageSize: "10" }, "pageSize"],
        [{ status: "TASK_STATE_DONE" }, "status"],
        [{ status: "submitted" }, "status"],
        [{ status: 9 }, "status"],
        [{ pageToken: 1 }, "pageToken"],
        [{ historyLength: -1 }, "historyLength"],
        [{ statusTimestampAfter: "yesterday" }, "statusTimestampAfter"],
        [{ statusTimestampAfter: "2026-02-30T00:00:00Z" }, "statusTimestampAfter"],
        [{ includeArtifacts: "yes" }, "includeArtifacts"],
        [{ contextId: 1 }, "contextId"],
        [{ tenant: "other" }, "tenant"],
      ];
      for (const [params, field] of cases) {
        expectError(await a2a.call("ListTasks", params), -32602, "INVALID_PARAMS", field);
      }
    });

    await t.step(
      "SendStreamingMessage and SubscribeToTask are -32004, plain JSON not SSE",
      async () => {
        await unchanged(a2a, async () => {
          for (const method of ["SendStreamingMessage", "SubscribeToTask"]) {
            const answer = await a2a.call(
              method,
              method === "SubscribeToTask" ? { id: task.id } : textMessage("s"),
              3,
              {
                headers: { accept: "text/event-stream" },
              },
            );
            expectError(answer, -32004, "UNSUPPORTED_OPERATION");
            assertStrictEquals(answer.headers.get("content-type"), "application/json");
          }
        });
      },
    );

    await t.step("the four push-config methods are -32003", async () => {
      for (
        const method of [
          "CreateTaskPushNotificationConfig",
          "GetTaskPushNotificationConfig",
          "ListTaskPushNotificationConfigs",
          "DeleteTaskPushNotificationConfig",
        ]
      ) {
        const answer = await a2a.call(method, {
          taskId: task.id,
          id: "c",
          url: "https://x.example",
        });
        expectError(answer, -32003, "PUSH_NOTIFICATION_NOT_SUPPORTED");
      }
    });

    await t.step("GetExtendedAgentCard is -32004 (with or without params)", async () => {
      expectError(await a2a.call("GetExtendedAgentCard"), -32004, "UNSUPPORTED_OPERATION");
      expectError(await a2a.call("GetExtendedAgentCard", {}), -32004, "UNSUPPORTED_OPERATION");
    });

    await t.step("JSON-RPC answers are not cacheable and carry the hardening headers", async () => {
      const answer = await a2a.call("ListTasks", {});
      assertStrictEquals(answer.headers.get("cache-control"), "no-store");
      assertStrictEquals(answer.headers.get("x-content-type-options"), "nosniff");
      assertStrictEquals(answer.headers.get("access-control-allow-origin"), "*");
    });
  } finally {
    await a2a.close();
  }
});

Deno.test("A2A methods over HTTP: no response contains submitted content", async () => {
  const a2a = await startA2AServer();
  try {
    const marker = `ECHO${crypto.randomUUID().replaceAll("-", "")}`;
    const part = { text: `text ${marker}`, metadata: { [marker]: marker }, filename: marker };
    const message = {
      messageId: `${marker}-id`,
      role: "ROLE_USER",
      parts: [part],
      metadata: { [marker]: marker },
      extensions: [`https://${marker}.example`],
      referenceTaskIds: [marker],
      [marker]: marker,
    };
    const answers: RpcAnswer[] = [];
    const call = async (method: string, params: unknown, id: string | number = 1) => {
      answers.push(await a2a.call(method, params, id));
    };
    // Accepted submissions, text and structured, with the marker in every field.
    await call("SendMessage", { message, metadata: { [marker]: marker }, [marker]: marker });
    const data = { ...structuredClone(exampleMessages[0]), body: marker, subject: marker };
    await call("SendMessage", {
      message: { ...message, messageId: `${marker}-2`, parts: [{ data, metadata: { m: marker } }] },
    });
    // The same messageId with other content: a third submission, not a refusal.
    await call("SendMessage", {
      message: { ...message, messageId: `${marker}-id`, parts: [{ text: "changed" }] },
    });
    // Refusals of each kind, with the marker where the client chose a value.
    await call("SendMessage", { message: { ...message, role: marker } });
    await call("SendMessage", { message: { ...message, messageId: marker.repeat(10) } });
    await call("SendMessage", {
      message: { ...message, parts: [{ url: `https://${marker}.example` }] },
    });
    await call("SendMessage", { message: { ...message, parts: [{ raw: btoa(marker) }] } });
    await call("SendMessage", { message: { ...message, parts: [{ [marker]: marker }] } });
    await call("SendMessage", { message: { ...message, parts: [{ text: marker, data: marker }] } });
    await call("SendMessage", { message: { ...message, taskId: marker } });
    await call("SendMessage", { message: { ...message, contextId: marker } });
    await call("SendMessage", { message, tenant: marker });
    await call("SendMessage", {
      message: { ...message, parts: [{ data: { ...data, [marker]: marker } }] },
    });
    await call("SendMessage", {
      message,
      configuration: { taskPushNotificationConfig: { url: `https://${marker}.example` } },
    });
    await call("GetTask", { id: marker });
    await call("GetTask", { id: marker, historyLength: marker });
    await call("CancelTask", { id: marker });
    await call("ListTasks", { status: marker, pageToken: marker });
    await call("ListTasks", { statusTimestampAfter: marker });
    await call(marker, {});
    await call("GetTask", { id: UNKNOWN_ID }, marker.repeat(5));
    answers.push(await a2a.post({ jsonrpc: "2.0", id: 1, method: "GetTask" }, { version: marker }));
    answers.push(await a2a.post(`{"jsonrpc":"2.0","id":1,"method":"${marker}"`));
    answers.push(await a2a.post({ jsonrpc: marker, id: 1, method: "GetTask" }));
    answers.push(
      await a2a.post({ jsonrpc: "2.0", id: 1, method: "GetTask" }, {
        headers: { "content-type": `text/${marker}` },
      }),
    );
    for (const answer of answers) {
      assert(!answer.text.includes(marker), `echoed submitted content: ${answer.text}`);
      assert(!answer.text.includes(btoa(marker)));
    }
    assertStrictEquals(await a2a.count(), 3, "only the three valid submissions were stored");
  } finally {
    await a2a.close();
  }
});
