/**
 * The A2A endpoint over raw HTTP through the real server: transport refusals, media type,
 * parse errors, every JSON-RPC envelope edge case, version negotiation and dispatch, each
 * checked for its code, its `id`, its ErrorInfo, and that nothing was stored.
 */
import { assert, assertEquals, assertStrictEquals } from "../support/assert.ts";
import {
  type A2AServer,
  checkRpcAnswer,
  errorInfo,
  type RpcAnswer,
  startA2AServer,
  textMessage,
} from "../support/a2a.ts";

const GET_TASK = {
  jsonrpc: "2.0",
  id: 7,
  method: "GetTask",
  params: { id: "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAA" },
};
const SEND = (id: unknown) => ({
  jsonrpc: "2.0",
  id,
  method: "SendMessage",
  params: textMessage("Please store me."),
});

function expectError(answer: RpcAnswer, code: number, id: string | number | null, reason?: string) {
  checkRpcAnswer(answer);
  assertStrictEquals(answer.json.error?.code, code, answer.text);
  assertStrictEquals(answer.json.id, id);
  if (reason !== undefined) assertStrictEquals(errorInfo(answer).reason, reason);
}

async function unchanged(a2a: A2AServer, run: () => Promise<void>): Promise<void> {
  const before = await a2a.count();
  await run();
  assertStrictEquals(await a2a.count(), before, "a refusal stores nothing");
}

Deno.test("A2A endpoint: transport refusals (405, 413 native; 429 in JSON-RPC)", async (t) => {
  const a2a = await startA2AServer({ BEACON_RATE_LIMIT: "3/1m", BEACON_STATUS_RATE_LIMIT: "3/1m" });
  try {
    await t.step("GET /a2a/v1 is 405 method_not_allowed with Allow: POST", async () => {
      const response = await fetch(a2a.url + "/a2a/v1", { headers: { "a2a-version": "1.0" } });
      assertStrictEquals(response.status, 405);
      assertStrictEquals(response.headers.get("allow"), "POST, OPTIONS");
      assertEquals((await response.json()).error.code, "method_not_allowed");
    });

    await t.step(
      "a body over 64 KiB is 413 too_large, before any JSON-RPC processing",
      async () => {
        await unchanged(a2a, async () => {
          const answer = await a2a.post("x".repeat(65_537));
          assertStrictEquals(answer.status, 413);
          assertEquals(answer.json, {
            error: {
              code: "too_large",
              message: "The body exceeds the size limit",
              maxBodyBytes: 65_536,
            },
          });
        });
      },
    );

    await t.step(
      "the rate limit answers 429 in JSON-RPC with Retry-After and the wait in data",
      async () => {
        let last: RpcAnswer | undefined;
        for (let i = 0; i < 4; i++) last = await a2a.post(GET_TASK);
        assertStrictEquals(last!.status, 429);
        assertStrictEquals(last!.json.id, null, "refused before the body (and its id) was read");
        assertStrictEquals(last!.json.error.code, -32603);
        const [info, retry] = last!.json.error.data;
        assertStrictEquals(info.reason, "RATE_LIMITED");
        assertStrictEquals(info.metadata.budget, "status", "every A2A request reads first");
        const wait = Number(last!.headers.get("retry-after"));
        assert(wait > 0);
        assertStrictEquals(info.metadata.retryAfterSeconds, String(wait));
        assertStrictEquals(retry["@type"], "type.googleapis.com/google.rpc.RetryInfo");
        assertStrictEquals(retry.retryDelay, `${wait}s`);
      },
    );
  } finally {
    await a2a.close();
  }
});

Deno.test("A2A endpoint: media type, parse errors and the JSON-RPC envelope", async (t) => {
  const a2a = await startA2AServer();
  try {
    await t.step("answers at /a2a/v1/ too (clients that append a slash)", async () => {
      const answer = await a2a.post(GET_TASK, { path: "/a2a/v1/" });
      expectError(answer, -32001, 7, "TASK_NOT_FOUND");
    });

    for (
      const [label, headers] of [
        ["text/plain", { "content-type": "text/plain; charset=utf-8" }],
        ["application/a2a+json", { "content-type": "application/a2a+json" }],
        ["a latin-1 charset", { "content-type": "application/json; charset=iso-8859-1" }],
        ["form data", { "content-type": "application/x-www-form-urlencoded" }],
      ] as const
    ) {
      await t.step(`Content-Type ${label} is -32005 with id null`, async () => {
        await unchanged(a2a, async () => {
          const answer = await a2a.post(SEND(1), { headers });
          expectError(answer, -32005, null, "CONTENT_TYPE_NOT_SUPPORTED");
          assertEquals(errorInfo(answer).metadata, { supportedContentTypes: "application/json" });
        });
      });
    }

    await t.step("a missing Content-Type is -32005", async () => {
      const response = await fetch(a2a.url + "/a2a/v1", {
        method: "POST",
        headers: { "a2a-version": "1.0" },
        body: new TextEncoder().encode(JSON.stringify(SEND(1))),
      });
      const json = await response.json();
      assertStrictEquals(response.status, 200);
      assertStrictEquals(json.error.code, -32005);
    });

    await t.step("application/json with charset=UTF-8 (any case) is accepted", async () => {
      const answer = await a2a.post(GET_TASK, {
        headers: { "content-type": 'Application/JSON; Charset="UTF-8"' },
      });
      expectError(answer, -32001, 7);
    });

    for (
      const [label, body] of [
        ["truncated JSON", '{"jsonrpc": "2.0", "id": 1, "method": "SendMessage"'],
        ["an empty body", ""],
        [
          "a duplicate member (strict profile)",
          '{"jsonrpc":"2.0","id":1,"id":2,"method":"GetTask"}',
        ],
        ["trailing data", '{"jsonrpc":"2.0","id":1,"method":"GetTask"} {}'],
        ["a byte-order mark", '\ufeff{"jsonrpc":"2.0","id":1,"method":"GetTask"}'],
        ["invalid UTF-8", new Uint8Array([0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d])],
      ] as const
    ) {
      await t.step(`${label} is -32700 with id null`, async () => {
        await unchanged(a2a, async () => {
          expectError(await a2a.post(body), -32700, null, "JSON_PARSE");
        });
      });
    }

    await t.step("a batch is -32600 with id null, and nothing in it runs", async () => {
      await unchanged(a2a, async () => {
        expectError(await a2a.post([SEND(1), SEND(2)]), -32600, null, "INVALID_REQUEST");
      });
    });

    await t.step("an empty batch is one -32600 with id null (JSON-RPC 2.0 §6)", async () => {
      const answer = await a2a.post([]);
      expectError(answer, -32600, null, "INVALID_REQUEST");
      assert(!Array.isArray(answer.json));
    });

    await t.step("a notification (no id) is answered -32600 and stores nothing", async () => {
      await unchanged(a2a, async () => {
        const { id: _, ...notification } = SEND(1);
        expectError(await a2a.post(notification), -32600, null, "INVALID_REQUEST");
      });
    });

    for (
      const [label, id] of [
        ["null", null],
        ["a boolean", true],
        ["a fraction", 1.5],
        ["an unsafe integer", 2 ** 53],
        ["an object", { a: 1 }],
        ["an array", [1]],
      ] as const
    ) {
      await t.step(`an id that is ${label} is -32600 with id null`, async () => {
        await unchanged(a2a, async () => {
          const answer = await a2a.post(SEND(id));
          expectError(answer, -32600, null, "INVALID_REQUEST");
          assertEquals(errorInfo(answer).metadata, { field: "id" });
        });
      });
    }

    for (
      const [label, idText] of [
        ["0.000…1 with 10,000 zeros (it parses to 0)", "0." + "0".repeat(10_000) + "1"],
        ["1.0", "1.0"],
        ["1e0", "1e0"],
        ["-0", "-0"],
        ["2^53 written out", "9007199254740992"],
        ["-(2^53)", "-9007199254740992"],
        ["1e400 (out of range)", "1e400"],
      ] as const
    ) {
      await t.step(`a number id written ${label} is -32600: its echo would differ`, async () => {
        await unchanged(a2a, async () => {
          const body = JSON.stringify(SEND(0)).replace('"id":0', `"id":${idText}`);
          const answer = await a2a.post(body);
          if (idText === "1e400") {
            expectError(answer, -32700, null, "JSON_PARSE"); // no double holds it at all
          } else {
            expectError(answer, -32600, null, "INVALID_REQUEST");
            assertEquals(errorInfo(answer).metadata, { field: "id" });
          }
        });
      });
    }

    await t.step("the echoed number id is exactly the id received, at both ends", async () => {
      for (const idText of ["0", "-1", "9007199254740991", "-9007199254740991"]) {
        const body = JSON.stringify(GET_TASK).replace('"id":7', `"id":${idText}`);
        const answer = await a2a.post(body);
        expectError(answer, -32001, Number(idText));
        assert(answer.text.includes(`"id":${idText},`), answer.text);
      }
    });

    await t.step("a string id of 129 characters is -32600; 128 is echoed", async () => {
      await unchanged(a2a, async () => {
        expectError(await a2a.post(SEND("i".repeat(129))), -32600, null);
        expectError(await a2a.post(SEND("😀".repeat(129))), -32600, null);
      });
      expectError(await a2a.post({ ...GET_TASK, id: "😀".repeat(128) }), -32001, "😀".repeat(128));
      expectError(await a2a.post({ ...GET_TASK, id: "" }), -32001, "");
      expectError(await a2a.post({ ...GET_TASK, id: -42 }), -32001, -42);
    });

    for (
      const [label, body] of [
        ["a scalar body", 1],
        ["a string body", '"SendMessage"'],
        ["jsonrpc 1.0", { ...GET_TASK, jsonrpc: "1.0" }],
        ["a missing jsonrpc", { id: 1, method: "GetTask" }],
        ["a missing method", { jsonrpc: "2.0", id: 1 }],
        ["a numeric method", { jsonrpc: "2.0", id: 1, method: 7 }],
      ] as const
    ) {
      await t.step(`${label} is -32600 with id null`, async () => {
        expectError(await a2a.post(body), -32600, null, "INVALID_REQUEST");
      });
    }

    for (const params of [[], "x", 3, null, true]) {
      await t.step(`params ${JSON.stringify(params)} is -32602 with the id`, async () => {
        const answer = await a2a.post({ ...GET_TASK, params });
        expectError(answer, -32602, 7, "INVALID_PARAMS");
        assertEquals(errorInfo(answer).metadata, { field: "params" });
      });
    }

    await t.step("unknown members of the envelope are ignored", async () => {
      expectError(await a2a.post({ ...GET_TASK, extra: { deep: [1] } }), -32001, 7);
    });
  } finally {
    await a2a.close();
  }
});

Deno.test("A2A endpoint: version negotiation and dispatch", async (t) => {
  const a2a = await startA2AServer();
  try {
    await t.step("no A2A-Version is -32009 (absent means 0.3), naming 1.0 only", async () => {
      await unchanged(a2a, async () => {
        const answer = await a2a.post(SEND(3), { version: null });
        expectError(answer, -32009, 3, "VERSION_NOT_SUPPORTED");
        assertEquals(errorInfo(answer).metadata, { supportedVersions: "1.0" });
      });
    });

    await t.step("an empty A2A-Version header is -32009", async () => {
      expectError(await a2a.post(GET_TASK, { version: "" }), -32009, 7);
    });

    for (const version of ["0.3", "1.1", "2.0", "1", "0.3.0", "1.01"]) {
      await t.step(`A2A-Version ${version} is -32009 naming it back`, async () => {
        await unchanged(a2a, async () => {
          const answer = await a2a.post(SEND(4), { version });
          expectError(answer, -32009, 4, "VERSION_NOT_SUPPORTED");
          assertEquals(errorInfo(answer).metadata, {
            supportedVersions: "1.0",
            requestedVersion: version,
          });
        });
      });
    }

    await t.step("a long or odd A2A-Version is refused without naming it back", async () => {
      for (const version of ["1.0-beta", "v1.0", "1.0.0.0", "1234.0", "x".repeat(300)]) {
        const answer = await a2a.post(GET_TASK, { version });
        expectError(answer, -32009, 7);
        assertEquals(errorInfo(answer).metadata, { supportedVersions: "1.0" });
        assert(!answer.text.includes(version));
      }
    });

    for (const version of ["1.0", "1.0.0", "1.0.3"]) {
      await t.step(`A2A-Version ${version} is accepted (the patch is ignored)`, async () => {
        expectError(await a2a.post(GET_TASK, { version }), -32001, 7);
      });
    }

    await t.step("the A2A-Version query parameter is read when no header is sent", async () => {
      expectError(
        await a2a.post(GET_TASK, { version: null, path: "/a2a/v1?A2A-Version=1.0" }),
        -32001,
        7,
      );
      expectError(
        await a2a.post(GET_TASK, { version: null, path: "/a2a/v1?a2a-version=1.0" }),
        -32001,
        7,
      );
      expectError(
        await a2a.post(GET_TASK, { version: null, path: "/a2a/v1?A2A-Version=0.3" }),
        -32009,
        7,
      );
      expectError(
        await a2a.post(GET_TASK, {
          version: null,
          path: "/a2a/v1?A2A-Version=1.0&A2A-Version=1.0",
        }),
        -32009,
        7,
      );
    });

    await t.step("the header wins over the query parameter", async () => {
      expectError(
        await a2a.post(GET_TASK, { version: "0.3", path: "/a2a/v1?A2A-Version=1.0" }),
        -32009,
        7,
      );
      expectError(
        await a2a.post(GET_TASK, { version: "1.0", path: "/a2a/v1?A2A-Version=0.3" }),
        -32001,
        7,
      );
    });

    await t.step(
      "the version is checked before dispatch: an unknown method gets -32009",
      async () => {
        expectError(
          await a2a.post({ ...GET_TASK, method: "NoSuchMethod" }, { version: null }),
          -32009,
          7,
        );
      },
    );

    for (
      const [legacy, current] of [
        ["message/send", "SendMessage"],
        ["message/stream", "SendStreamingMessage"],
        ["tasks/get", "GetTask"],
        ["tasks/cancel", "CancelTask"],
        ["tasks/resubscribe", "SubscribeToTask"],
        ["tasks/pushNotificationConfig/set", "CreateTaskPushNotificationConfig"],
        ["agent/getAuthenticatedExtendedCard", "GetExtendedAgentCard"],
      ]
    ) {
      await t.step(`the 0.3 name ${legacy} is -32601 naming ${current}`, async () => {
        await unchanged(a2a, async () => {
          const answer = await a2a.call(legacy, textMessage("hi"), 9);
          expectError(answer, -32601, 9, "METHOD_NOT_FOUND");
          assertEquals(errorInfo(answer).metadata, { replacementMethod: current });
          assert(answer.json.error.message.includes(current));
        });
      });
    }

    await t.step("an unknown method is -32601 and its name is not echoed", async () => {
      for (const name of ["sendMessage", "Frobnicate-xyzzy", "constructor", "__proto__", ""]) {
        const answer = await a2a.call(name, {}, 5);
        expectError(answer, -32601, 5, "METHOD_NOT_FOUND");
        assertEquals(errorInfo(answer).metadata, {});
        if (name.length > 3) assert(!answer.text.includes(name));
      }
    });
  } finally {
    await a2a.close();
  }
});
