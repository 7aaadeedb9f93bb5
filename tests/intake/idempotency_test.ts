/**
 * Idempotency keys across sources and instances: a key belongs to one source, and instances that
 * share a database share its keys (the check runs inside the commit, on the database).
 */
import { createClient } from "@libsql/client";
import { assertEquals } from "../support/assert.ts";
import { type Beacon, createBeacon } from "../../src/beacon.ts";

const SUBMIT = "http://127.0.0.1/beacon/0.1/submissions";

async function withDatabase(run: (url: string) => Promise<void>): Promise<void> {
  const directory = await Deno.makeTempDir({ prefix: "beacon-idempotency-" });
  try {
    await run(`file:${directory}/beacon.db`);
  } finally {
    await Deno.remove(directory, { recursive: true });
  }
}

Deno.test("idempotency keys are per source, and shared by instances on one database", async () => {
  await withDatabase(async (url) => {
    const a = createBeacon({ database: { url }, rateLimit: "off" });
    const b = createBeacon({ database: { url }, rateLimit: "off" });
    const send = (beacon: Beacon, address: string, body: string) =>
      beacon.fetch(
        new Request(SUBMIT, {
          method: "POST",
          headers: { "content-type": "text/plain; charset=utf-8", "idempotency-key": "k-1" },
          body,
        }),
        { remoteAddress: address },
      );
    try {
      // Two sources may use the same key for different content.
      assertEquals((await send(a, "192.0.2.1", "one")).status, 202);
      assertEquals((await send(a, "192.0.2.2", "two")).status, 202);
      // The same source retrying through another instance gets the first receipt back.
      const first = await (await send(a, "192.0.2.3", "three")).json();
      const retry = await send(b, "192.0.2.3", "three");
      assertEquals(retry.headers.get("idempotent-replayed"), "true");
      assertEquals(await retry.json(), first);
      assertEquals((await send(b, "192.0.2.3", "other")).status, 422);
      const reader = createClient({ url });
      assertEquals(
        Number((await reader.execute("SELECT count(*) AS n FROM submissions")).rows[0].n),
        3,
      );
      reader.close();
    } finally {
      await a.close();
      await b.close();
    }
  });
});
