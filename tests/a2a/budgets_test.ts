/**
 * Polling is not submitting: through the real HTTP server, reads of a receipt (native status,
 * A2A GetTask, and every A2A request before its body is read) spend the status budget, and
 * only storing (native submit, A2A SendMessage) spends the submission budget. The discovery
 * document states both budgets, and a 429 says which one ran out.
 */
import { assert, assertStrictEquals } from "../support/assert.ts";
import { serveBeacon } from "../support/in_process.ts";

for (const store of ["memory", "database"] as const) {
  Deno.test(`status reads and submissions spend separate budgets (${store} limiter)`, async (t) => {
    await budgets(t, store);
  });
}

async function budgets(t: Deno.TestContext, store: "memory" | "database"): Promise<void> {
  let now = 1_800_000_000_000;
  const served = await serveBeacon({
    rateLimit: "2/1m",
    statusRateLimit: "6/1m",
    rateLimitStore: store,
    now: () => now,
  });
  const rpc = (method: string, params: unknown) =>
    fetch(served.url + "/a2a/v1", {
      method: "POST",
      headers: { "content-type": "application/json", "a2a-version": "1.0" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
    });
  try {
    await t.step("the discovery document states both budgets", async () => {
      const { limits } = await (await fetch(served.url + "/.well-known/autonomous-agent")).json();
      assertStrictEquals(limits.rateLimit.text, "2/1m");
      assertStrictEquals(limits.statusRateLimit.text, "6/1m");
      assert(limits.statusRateLimit.spentBy.includes("GetTask"));
    });

    let statusUrl = "";
    let taskId = "";
    await t.step("a submission, then polling, then a second submission", async () => {
      const submitted = await fetch(served.url + "/beacon/0.1/submissions", {
        method: "POST",
        headers: { "content-type": "text/plain; charset=utf-8" },
        body: "First.",
      });
      assertStrictEquals(submitted.status, 202);
      statusUrl = (await submitted.json()).receipt.status;
      for (let i = 0; i < 3; i++) assertStrictEquals((await fetch(statusUrl)).status, 200);
      const sent = await (await rpc("SendMessage", {
        message: { messageId: "m-1", role: "ROLE_USER", parts: [{ text: "Second." }] },
      })).json();
      taskId = sent.result.task.id;
      const got = await (await rpc("GetTask", { id: taskId })).json();
      assertStrictEquals(got.result.id, taskId);
    });

    await t.step("the third submission is refused by the submission budget", async () => {
      const before = await served.count();
      const refused = await rpc("SendMessage", {
        message: { messageId: "m-2", role: "ROLE_USER", parts: [{ text: "Third." }] },
      });
      assertStrictEquals(refused.status, 429);
      const wait = Number(refused.headers.get("retry-after"));
      assert(wait > 0);
      // JSON-RPC, with the request's id and the wait in the error's data.
      const { id, error } = await refused.json();
      assertStrictEquals(id, 1);
      assertStrictEquals(error.code, -32603);
      assertStrictEquals(error.data[0].reason, "RATE_LIMITED");
      assertStrictEquals(error.data[0].metadata.budget, "submissions");
      assertStrictEquals(error.data[0].metadata.retryAfterSeconds, String(wait));
      assertStrictEquals(error.data[1].retryDelay, `${wait}s`);
      assertStrictEquals(await served.count(), before);
    });

    await t.step(
      "the seventh read is refused by the status budget, before any lookup",
      async () => {
        const refused = await fetch(statusUrl);
        assertStrictEquals(refused.status, 429);
        const { error } = await refused.json();
        assertStrictEquals(error.budget, "status");
        assertStrictEquals(error.retryAfterSeconds, Number(refused.headers.get("retry-after")));
        const getTask = await rpc("GetTask", { id: taskId });
        assertStrictEquals(getTask.status, 429);
        const rpcError = (await getTask.json()).error;
        assertStrictEquals(rpcError.data[0].metadata.budget, "status");
        assertStrictEquals(
          rpcError.data[0].metadata.retryAfterSeconds,
          getTask.headers.get("retry-after"),
        );
      },
    );

    // The database limiter runs on the database's clock, which the test cannot move.
    if (store === "memory") {
      await t.step("both budgets refill with time", async () => {
        now += 60_000;
        assertStrictEquals((await fetch(statusUrl)).status, 200);
      });
    } else {
      await t.step("the shared table keeps the two budgets under separate keys", async () => {
        const rows = await served.query("SELECT key FROM rate_limits ORDER BY key");
        assertStrictEquals(rows.length, 2);
        assert(String(rows[1].key).startsWith("status "), JSON.stringify(rows));
      });
    }
  } finally {
    await served.close();
  }
}
