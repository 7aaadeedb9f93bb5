/**
 * The floor (bench/floor.ts) against a real database: it answers like the Beacon only after each
 * commit, stores every submission it acknowledges with its receipt signature, and reports its
 * commits on shutdown, as the bench's integrity checks expect of it.
 */
import { createClient } from "@libsql/client";
import { assert, assertEquals } from "../../tests/support/assert.ts";
import { verifyReceipt } from "../../src/signing/receipt.ts";
import { signatureColumns, signatureJoin, storedSignatureOf } from "../../src/store/rows.ts";
import { sendMessageBody, textBody } from "../lib/payload.ts";
import { startServer } from "../lib/process.ts";
import { floorSpec } from "../lib/servers.ts";

Deno.test("the floor stores and signs what it acknowledges, and counts its commits", async () => {
  const dir = await Deno.makeTempDir({ prefix: "beacon-floor-test-" });
  const server = await startServer(floorSpec(`${dir}/floor.db`));
  let stopped;
  try {
    const a2a = await Promise.all(Array.from({ length: 8 }, async (_, i) => {
      const response = await fetch(server.origin + "/a2a/v1", {
        method: "POST",
        headers: { "content-type": "application/json", "a2a-version": "1.0" },
        body: sendMessageBody(`floor-test-${i}`, 600, i),
      });
      assertEquals(response.status, 200);
      assertEquals(response.headers.get("x-content-type-options"), "nosniff");
      return (await response.json()).result.task.metadata.receipt;
    }));
    const native = await fetch(server.origin + "/beacon/0.1/submissions", {
      method: "POST",
      headers: { "content-type": "text/plain; charset=utf-8" },
      body: textBody("floor-test-native", 600),
    });
    assertEquals(native.status, 202);
    const { receipt } = await native.json();
    assertEquals(native.headers.get("location"), receipt.status);
    for (const stored of [...a2a, receipt]) assert(typeof stored.signature === "string");
  } finally {
    stopped = await server.stop();
  }
  const shutdown = JSON.parse(stopped.stdout.at(-1)!);
  assertEquals(shutdown.event, "shutdown");
  assertEquals(shutdown.submissions, 9);
  assert(shutdown.commits >= 1 && shutdown.commits <= 9);
  const client = createClient({ url: `file:${dir}/floor.db` });
  try {
    const rows = (await client.execute(
      `SELECT s.id, s.received_at, s.digest, s.size, s.kind, ${signatureColumns("s")} ` +
        `FROM submissions s ${signatureJoin("s")}`,
    )).rows as unknown as Record<string, unknown>[];
    assertEquals(rows.length, 9);
    // Each stored signature verifies for its row, as the Beacon's do.
    const listening = stopped.stdout.map((line) => JSON.parse(line))
      .find((event) => event.event === "listening");
    const publicKey = String(listening.publicKey);
    for (const row of rows) {
      const fields = {
        id: String(row.id),
        receivedAt: String(row.received_at),
        digest: String(row.digest),
        size: Number(row.size),
        kind: String(row.kind),
      };
      const stored = storedSignatureOf(row);
      assert(stored !== undefined);
      assert(await verifyReceipt(publicKey, fields, stored.signature, stored.batch));
    }
  } finally {
    client.close();
    await Deno.remove(dir, { recursive: true });
  }
});
