/**
 * Commits on a remote database go out on one Hrana stream kept open from commit to commit
 * (src/store/connection/remote/droppable_client.ts): sqld opens a SQLite connection for every
 * stream, so a stream a commit would have the database open a connection, and parse the whole
 * schema, for every commit. Tested on a real sqld: by what the Beacon sends it (through a real proxy), across a
 * restart of sqld under a kept stream, and by the idle rule that replaces a stream before sqld
 * would expire it.
 *
 * @module
 */
import { createClient } from "@libsql/client/web";
import { assert, assertEquals, assertStrictEquals } from "../support/assert.ts";
import { startFaultProxy } from "../support/fault_proxy.ts";
import { startSqld } from "../support/sqld.ts";
import { createBeacon } from "../../src/beacon.ts";
import { RemoteConnection } from "../../src/store/connection/remote/droppable_client.ts";

const TEXT = { "content-type": "text/plain; charset=utf-8" };

function submit(beacon: ReturnType<typeof createBeacon>, body: string) {
  return beacon.fetch(
    new Request("http://127.0.0.1/beacon/0.1/submissions", { method: "POST", headers: TEXT, body }),
    { remoteAddress: "192.0.2.1" },
  );
}

/** The JSON bodies of the Hrana pipeline requests in `sent` (HTTP/1.1 with `Content-Length`). */
function pipelineBodies(sent: string): string[] {
  const bodies: string[] = [];
  for (const head of sent.matchAll(/POST \/v\d\/pipeline HTTP\/1\.1\r\n([\s\S]*?)\r\n\r\n/g)) {
    const length = Number(/content-length: *(\d+)/i.exec(head[1])?.[1]);
    const start = head.index! + head[0].length;
    bodies.push(sent.slice(start, start + length));
  }
  return bodies;
}

async function storedTexts(url: string): Promise<string[]> {
  const db = createClient({ url });
  try {
    const rows = (await db.execute("SELECT content FROM submissions ORDER BY seq")).rows;
    return rows.map((row) => new TextDecoder().decode(row.content as ArrayBuffer));
  } finally {
    db.close();
  }
}

Deno.test("commits on sqld share one Hrana stream: after the first, every commit names the stream's baton", async () => {
  const sqld = await startSqld();
  // A real proxy in between records what the Beacon sends: each Hrana pipeline request names the
  // stream it continues (`baton`), or none to open a new one, and with it a new sqld connection.
  const proxy = startFaultProxy(sqld.port);
  const beacon = createBeacon({
    database: { url: proxy.url },
    rateLimit: "off",
    checkpointIntervalMs: "off",
  });
  try {
    assertEquals((await submit(beacon, "first")).status, 202);
    const before = proxy.sentToServer().length;
    for (let i = 0; i < 10; i++) {
      const response = await submit(beacon, `commit ${i}`);
      assertEquals(response.status, 202);
      await response.body?.cancel();
    }
    const commits = pipelineBodies(proxy.sentToServer().slice(before))
      .filter((body) => body.includes("INSERT INTO submissions"));
    assertEquals(commits.length, 10);
    const batons = commits.map((body) => JSON.parse(body).baton);
    assert(batons.every((baton) => typeof baton === "string"), "each commit continues a stream");
    assertEquals((await storedTexts(sqld.url)).length, 11);
  } finally {
    await beacon.close();
    await proxy.close();
    await sqld.close();
  }
});

Deno.test("a commit on a kept stream after sqld restarted is refused unapplied, sent again on a fresh stream, and stored once", async () => {
  const sqld = await startSqld();
  const beacon = createBeacon({
    database: { url: sqld.url },
    rateLimit: "off",
    checkpointIntervalMs: "off",
  });
  try {
    assertEquals((await submit(beacon, "before the restart")).status, 202);
    await sqld.stop();
    await sqld.restart();
    // The kept stream's baton names a stream the new sqld process never had.
    const after = await submit(beacon, "after the restart");
    assertEquals(after.status, 202);
    assertEquals((await submit(beacon, "later")).status, 202);
    assertEquals(await storedTexts(sqld.url), ["before the restart", "after the restart", "later"]);
  } finally {
    await beacon.close();
    await sqld.close();
  }
});

Deno.test("a write stream is kept while in use and replaced after 5 s idle, before sqld's 10 s expiry", async () => {
  const sqld = await startSqld();
  const connection = await RemoteConnection.open({ url: sqld.url });
  try {
    const start = Date.now();
    const first = connection.writeStream(start)!;
    assertEquals(first.reused, false);
    const again = connection.writeStream(start + 4_000)!;
    assertStrictEquals(again, first);
    assertEquals(again.reused, true);
    const fresh = connection.writeStream(start + 4_000 + 5_000)!;
    assert(fresh !== first, "an idle stream is replaced");
    assertEquals(fresh.reused, false);
    connection.abandonWriteStream();
    const afterFailure = connection.writeStream(start + 9_001)!;
    assert(afterFailure !== fresh, "an abandoned stream is never used again");
  } finally {
    connection.close();
    await sqld.close();
  }
});
