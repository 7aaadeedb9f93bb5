/**
 * Operator faults are loud (issue 10, finding 6): the real server (`src/runtime/deno.ts`) on a
 * real temporary database notices the database file removed or replaced, or its WAL removed,
 * writes one log line naming it, and from then on acknowledges nothing: every submission (and
 * every other request) is `503 unavailable`.
 */
import { createClient } from "@libsql/client";
import { assert, assertEquals } from "../support/assert.ts";
import { type ServerProcess, startServer } from "../support/server.ts";

const SUBMIT = "/beacon/0.1/submissions";

async function submit(
  server: ServerProcess,
  text: string,
): Promise<{ status: number; body: string }> {
  const response = await fetch(server.url + SUBMIT, {
    method: "POST",
    headers: { "content-type": "text/plain; charset=utf-8" },
    body: text,
  });
  return { status: response.status, body: await response.text() };
}

/** Waits (bounded: 20 s) for the server's stderr to name `what`; how often it names it. */
async function logged(server: ServerProcess, what: string): Promise<number> {
  for (let i = 0; i < 200 && !server.stderr().includes(what); i++) {
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return server.stderr().split(what).length - 1;
}

async function assertNothingAcknowledged(server: ServerProcess, id: string): Promise<void> {
  for (let i = 0; i < 5; i++) {
    const answer = await submit(server, `after the fault ${i}`);
    assertEquals(answer.status, 503);
    assertEquals(JSON.parse(answer.body).error.code, "unavailable");
  }
  const status = await fetch(`${server.url}${SUBMIT}/${id}`);
  await status.body?.cancel();
  assertEquals(status.status, 503);
  const discovery = await fetch(`${server.url}/.well-known/autonomous-agent`);
  await discovery.body?.cancel();
  assertEquals(discovery.status, 503);
}

/**
 * After the server stopped (closing, and so checkpointing, whatever it had open): no file left in
 * its folder holds the text of a submission made after the fault (contents are stored as raw
 * bytes, so a stored one would be found).
 */
async function assertNoLaterContent(server: ServerProcess): Promise<void> {
  await server.stop();
  for await (const entry of Deno.readDir(server.directory)) {
    if (!entry.isFile) continue;
    const bytes = await Deno.readFile(`${server.directory}/${entry.name}`);
    const text = new TextDecoder("latin1").decode(bytes);
    assert(!text.includes("after the fault"), `${entry.name} holds a later submission`);
  }
}

async function running(
  run: (server: ServerProcess, path: string) => Promise<void>,
  env: Record<string, string> = {},
): Promise<void> {
  const server = await startServer({ env });
  const path = server.databaseUrl.slice("file:".length);
  try {
    await run(server, path);
  } finally {
    await server.stop();
    await Deno.remove(server.directory, { recursive: true }).catch(() => {});
  }
}

for (const writerThread of ["off", "on"]) {
  Deno.test(`the running server keeps acknowledging while its files are untouched (writer thread ${writerThread})`, async () => {
    await running(async (server, path) => {
      for (let i = 0; i < 3; i++) {
        assertEquals((await submit(server, `before ${i}`)).status, 202);
        // Longer than the guard's 2 s interval, so checks ran between the submissions.
        await new Promise((resolve) => setTimeout(resolve, 1_500));
      }
      assert((await Deno.stat(`${path}-wal`)).isFile, "the WAL is there while the server runs");
      assert(!server.stderr().includes("DatabaseFile") && !server.stderr().includes("DatabaseWal"));
    }, { BEACON_WRITER_THREAD: writerThread });
  });
}

Deno.test("database, WAL and SHM removed under the running server: 503 from then on, logged once", async () => {
  await running(async (server, path) => {
    const first = await submit(server, "before the fault");
    assertEquals(first.status, 202);
    const id = JSON.parse(first.body).receipt.id;
    for (const suffix of ["", "-wal", "-shm"]) await Deno.remove(path + suffix).catch(() => {});
    assertEquals(await logged(server, '"DatabaseFileRemoved"'), 1);
    await assertNothingAcknowledged(server, id);
    assertEquals(await logged(server, '"DatabaseFileRemoved"'), 1);
    await assertNoLaterContent(server);
  });
});

Deno.test("another database moved over the running server's file: 503 from then on, nothing written to it", async () => {
  await running(async (server, path) => {
    const first = await submit(server, "before the fault");
    assertEquals(first.status, 202);
    const id = JSON.parse(first.body).receipt.id;
    const other = `${server.directory}/other.db`;
    const client = createClient({ url: `file:${other}` });
    await client.execute("CREATE TABLE unrelated (x)");
    client.close();
    await Deno.rename(other, path);
    assertEquals(await logged(server, '"DatabaseFileReplaced"'), 1);
    await assertNothingAcknowledged(server, id);
    await assertNoLaterContent(server);
  });
});

Deno.test("the WAL removed under the running server: 503 from then on, logged once", async () => {
  await running(async (server, path) => {
    const first = await submit(server, "before the fault");
    assertEquals(first.status, 202);
    const id = JSON.parse(first.body).receipt.id;
    await Deno.remove(`${path}-wal`);
    assertEquals(await logged(server, '"DatabaseWalRemoved"'), 1);
    await assertNothingAcknowledged(server, id);
    await assertNoLaterContent(server);
  });
});
