/**
 * Storage faults: when the database goes away mid-service, the Beacon answers `503 unavailable`
 * (native) or -32603 `UNAVAILABLE` (A2A), issues no receipt, stores nothing partial, and recovers
 * by itself when the database returns. The database is a real remote one: the Hrana test server
 * (tests/support/hrana_server.ts) over the real `@libsql/client/web`, stopped and restarted.
 */
import { createClient } from "@libsql/client";
import { assert, assertEquals } from "../support/assert.ts";
import { startHranaServer } from "../support/hrana_server.ts";
import { createBeacon } from "../../mod.ts";

const TEXT = { "content-type": "text/plain; charset=utf-8" };

function submit(beacon: ReturnType<typeof createBeacon>, body: string) {
  return beacon.fetch(
    new Request("http://127.0.0.1/beacon/0.1/submissions", { method: "POST", headers: TEXT, body }),
    { remoteAddress: "192.0.2.1" },
  );
}

function sendMessage(beacon: ReturnType<typeof createBeacon>, messageId: string) {
  return beacon.fetch(
    new Request("http://127.0.0.1/a2a/v1", {
      method: "POST",
      headers: { "content-type": "application/json", "a2a-version": "1.0" },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 7,
        method: "SendMessage",
        params: { message: { messageId, role: "ROLE_USER", parts: [{ text: "hello" }] } },
      }),
    }),
    { remoteAddress: "192.0.2.1" },
  );
}

Deno.test("a database outage answers 503 / -32603 with no receipt, then recovers by itself", async () => {
  const directory = await Deno.makeTempDir({ prefix: "beacon-faults-" });
  const path = `${directory}/remote.db`;
  let hrana = await startHranaServer({ path });
  const port = Number(new URL(hrana.url).port);
  const beacon = createBeacon({ database: { url: hrana.url }, rateLimit: "off" });
  try {
    assertEquals((await submit(beacon, "before the outage")).status, 202);

    await hrana.close();
    const native = await submit(beacon, "during the outage");
    assertEquals(native.status, 503);
    const nativeBody = await native.json();
    assertEquals(nativeBody, {
      error: { code: "unavailable", message: "Storage is unavailable; retry later" },
    });
    const a2a = await sendMessage(beacon, "outage-1");
    assertEquals(a2a.status, 200);
    const rpc = await a2a.json();
    assertEquals(rpc.error.code, -32603);
    assertEquals(rpc.error.data[0].reason, "UNAVAILABLE");
    assert(!("result" in rpc));

    hrana = await startHranaServer({ path, port });
    assertEquals((await submit(beacon, "after the outage")).status, 202);
    assertEquals((await sendMessage(beacon, "outage-1")).status, 200);

    const db = createClient({ url: `file:${path}` });
    const rows = (await db.execute("SELECT content FROM submissions ORDER BY seq")).rows;
    const texts = rows.map((row) => new TextDecoder().decode(row.content as ArrayBuffer));
    assertEquals(texts.length, 3);
    assertEquals(texts[0], "before the outage");
    assertEquals(texts[1], "after the outage");
    assert(!texts.includes("during the outage"), "nothing from the outage was stored");
    db.close();
  } finally {
    await beacon.close();
    await hrana.close();
    await Deno.remove(directory, { recursive: true });
  }
});

Deno.test("a database that is down at start answers 503 until it comes up", async () => {
  const directory = await Deno.makeTempDir({ prefix: "beacon-faults-" });
  const probe = await startHranaServer({ path: `${directory}/remote.db` });
  const url = probe.url;
  await probe.close(); // a port that nothing listens on now
  const beacon = createBeacon({ database: { url }, rateLimit: "off" });
  try {
    assertEquals((await submit(beacon, "too early")).status, 503);
    const hrana = await startHranaServer({
      path: `${directory}/remote.db`,
      port: Number(new URL(url).port),
    });
    try {
      assertEquals((await submit(beacon, "now it works")).status, 202);
    } finally {
      await beacon.close();
      await hrana.close();
    }
  } finally {
    await Deno.remove(directory, { recursive: true });
  }
});

Deno.test("a slow database delays answers but breaks nothing; failing mid-request answers 503", async () => {
  const directory = await Deno.makeTempDir({ prefix: "beacon-faults-" });
  const path = `${directory}/remote.db`;
  const hrana = await startHranaServer({ path });
  const beacon = createBeacon({ database: { url: hrana.url }, rateLimit: "off" });
  try {
    assertEquals((await submit(beacon, "warm up")).status, 202);
    hrana.setDelay(300);
    const slow = await Promise.all(
      Array.from({ length: 10 }, (_, i) => submit(beacon, `slow ${i}`).then((r) => r.status)),
    );
    assertEquals(slow, Array(10).fill(202), "slow commits still succeed, shared");

    // The database goes away while the commit is on its way: no receipt, 503.
    hrana.setDelay(1_000);
    const inFlight = submit(beacon, "lost mid-request");
    await new Promise((resolve) => setTimeout(resolve, 200));
    await hrana.close();
    const failed = await inFlight;
    assertEquals(failed.status, 503);
    assertEquals((await failed.json()).error.code, "unavailable");

    const db = createClient({ url: `file:${path}` });
    const texts = (await db.execute("SELECT content FROM submissions")).rows.map((row) =>
      new TextDecoder().decode(row.content as ArrayBuffer)
    );
    assertEquals(texts.length, 11);
    assert(!texts.includes("lost mid-request"), "nothing partial was stored");
    db.close();
  } finally {
    await beacon.close();
    await hrana.close();
    await Deno.remove(directory, { recursive: true });
  }
});
