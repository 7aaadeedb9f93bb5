/**
 * One JSON-RPC answer for every A2A failure, whichever limiter is configured: with the shared
 * limiter (`rateLimitStore: "database"`, the multi-instance setup) on a real sqld that is then
 * killed, `POST /a2a/v1` answers -32603 `UNAVAILABLE` in JSON-RPC, as it does with the
 * in-memory limiter, never the native `{"error":…}` body; the native surface keeps its own.
 */
import { assertEquals, assertStrictEquals } from "../support/assert.ts";
import { startSqld } from "../support/sqld.ts";
import { createBeacon } from "../../src/beacon.ts";

function rpc(beacon: ReturnType<typeof createBeacon>, method: string, params: unknown) {
  return beacon.fetch(
    new Request("http://127.0.0.1/a2a/v1", {
      method: "POST",
      headers: { "content-type": "application/json", "a2a-version": "1.0" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 7, method, params }),
    }),
    { remoteAddress: "192.0.2.9" },
  );
}

const SEND = { message: { messageId: "m-1", role: "ROLE_USER", parts: [{ text: "hello" }] } };

for (const store of ["database", "memory"] as const) {
  for (const statusRateLimit of ["120/1m", "off"]) {
    Deno.test(`A2A during an outage answers JSON-RPC -32603 UNAVAILABLE (${store} limiter, status budget ${statusRateLimit})`, async () => {
      const sqld = await startSqld();
      const beacon = createBeacon({
        database: { url: sqld.url },
        rateLimit: "10/1m",
        statusRateLimit,
        rateLimitStore: store,
      });
      try {
        const sent = await (await rpc(beacon, "SendMessage", SEND)).json();
        const id = sent.result.task.id;
        await sqld.kill();
        for (const [method, params] of [["SendMessage", SEND], ["GetTask", { id }]]) {
          const answer = await rpc(beacon, method as string, params);
          assertStrictEquals(answer.status, 200, method as string);
          const body = await answer.json();
          assertEquals(body.jsonrpc, "2.0");
          assertStrictEquals(body.error.code, -32603);
          // With the memory limiter, SendMessage is the first commit after the kill, on the client
          // that had answers: Deno's fetch resends a statement whose connection closed, so a
          // refusal there cannot prove it never ran (src/store/connection/remote/).
          const firstCommit = method === "SendMessage" && store === "memory";
          assertStrictEquals(
            body.error.data[0].reason,
            firstCommit ? "OUTCOME_UNKNOWN" : "UNAVAILABLE",
          );
          // Refused before its body was read (the status budget), the id is unknown: null.
          const bodyRead = store === "memory" || statusRateLimit === "off";
          assertStrictEquals(body.id, bodyRead ? 7 : null);
        }
        const native = await beacon.fetch(
          new Request("http://127.0.0.1/beacon/0.1/submissions", {
            method: "POST",
            headers: { "content-type": "text/plain; charset=utf-8" },
            body: "native",
          }),
          { remoteAddress: "192.0.2.9" },
        );
        assertStrictEquals(native.status, 503);
        assertStrictEquals((await native.json()).error.code, "unavailable");
      } finally {
        await beacon.close();
        await sqld.close();
      }
    });
  }
}

Deno.test("A2A while the database was never opened answers JSON-RPC -32603 UNAVAILABLE at 503", async () => {
  const sqld = await startSqld();
  await sqld.kill();
  const beacon = createBeacon({ database: { url: sqld.url }, rateLimitStore: "database" });
  try {
    for (const path of ["/a2a/v1", "/a2a/v1/"]) {
      const answer = await beacon.fetch(
        new Request(`http://127.0.0.1${path}`, {
          method: "POST",
          headers: { "content-type": "application/json", "a2a-version": "1.0" },
          body: JSON.stringify({ jsonrpc: "2.0", id: 7, method: "SendMessage", params: SEND }),
        }),
        { remoteAddress: "192.0.2.9" },
      );
      assertStrictEquals(answer.status, 503);
      const body = await answer.json();
      assertStrictEquals(body.id, null);
      assertStrictEquals(body.error.code, -32603);
      assertStrictEquals(body.error.data[0].reason, "UNAVAILABLE");
    }
  } finally {
    await beacon.close();
    await sqld.close();
  }
});
