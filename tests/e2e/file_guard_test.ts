/**
 * Operator faults are loud (docs/threat-model.md §6.20): the real server
 * (`src/adapter/deno/server.ts`) on a real temporary database notices the database file removed,
 * replaced or overwritten in place, or its WAL or `-shm` index removed, writes one log line
 * naming it, and from then on acknowledges nothing: every submission (and every other request)
 * is `503 unavailable`. A second process (the real review CLI) refuses to open a database whose
 * `-shm` index was removed under a running server, instead of building a second index.
 */
import { createClient } from "@libsql/client";
import Database from "libsql";
import { assert, assertEquals, assertRejects } from "../support/assert.ts";
import { review } from "../../review/tests/support.ts";
import { type ServerProcess, startServer } from "../support/server.ts";
import { EmbeddedConnection } from "../../src/store/connection/embedded/checked_connection.ts";

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

/** The ids of every stored submission, read on a connection of the test's own. */
async function storedIds(path: string): Promise<string[]> {
  const client = createClient({ url: `file:${path}` });
  try {
    return (await client.execute("SELECT id FROM submissions")).rows.map((row) => String(row.id));
  } finally {
    client.close();
  }
}

for (const writerThread of ["off", "on"]) {
  Deno.test(`the -shm index removed under the running server: 503 from then on, the review tool refuses to build a new one, and no acknowledged row is lost (writer thread ${writerThread})`, async () => {
    const directory = await Deno.makeTempDir({ prefix: "beacon-test-" });
    const env = { BEACON_WRITER_THREAD: writerThread };
    const acknowledged: string[] = [];
    try {
      let server = await startServer({ env, directory });
      const path = server.databaseUrl.slice("file:".length);
      for (let i = 0; i < 5; i++) {
        const answer = await submit(server, `before the fault ${i}`);
        assertEquals(answer.status, 202);
        acknowledged.push(JSON.parse(answer.body).receipt.id);
      }
      await Deno.remove(`${path}-shm`);
      // A second process, right away (before the guard's next check): it must refuse, in one
      // line, and must not build a fresh index beside the server's.
      const mark = await review(`file:${path}`, ["mark", acknowledged[0], "--status", "reviewed"]);
      assert(mark.code !== 0, "review mark refused");
      assertEquals(mark.stderr.trim().split("\n").length, 1, mark.stderr);
      assert(mark.stderr.includes("-shm index is not"), mark.stderr);
      await assertRejects(() => Deno.stat(`${path}-shm`), Deno.errors.NotFound);
      assertEquals(await logged(server, '"DatabaseShmRemoved"'), 1);
      await assertNothingAcknowledged(server, acknowledged[0]);
      await server.stop();
      // Restarted on the same file: every 202 is there, and the review tool works again.
      server = await startServer({ env, directory });
      assertEquals((await storedIds(path)).sort(), [...acknowledged].sort());
      const after = await review(`file:${path}`, ["mark", acknowledged[0], "--status", "reviewed"]);
      assertEquals(after.code, 0, after.stderr);
      await server.stop();
    } finally {
      await Deno.remove(directory, { recursive: true }).catch(() => {});
    }
  });
}

for (const writerThread of ["off", "on"]) {
  Deno.test(`the database overwritten in place one second after the first submissions (cp backup.db beacon.db, same inode): 503 from then on, logged once (writer thread ${writerThread})`, async () => {
    const directory = await Deno.makeTempDir({ prefix: "beacon-test-" });
    const env = { BEACON_WRITER_THREAD: writerThread };
    try {
      let server = await startServer({ directory, env });
      const path = server.databaseUrl.slice("file:".length);
      assertEquals((await submit(server, "in the backup")).status, 202);
      await server.stop();
      await Deno.copyFile(path, `${directory}/backup.db`); // an ordinary backup, server stopped

      server = await startServer({ directory, env });
      const acknowledged: string[] = [];
      for (let i = 0; i < 3; i++) {
        const answer = await submit(server, `after the backup ${i}`);
        assertEquals(answer.status, 202);
        acknowledged.push(JSON.parse(answer.body).receipt.id);
      }
      // No waiting for a checkpoint: the file holds this start's token before the first 202.
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      const inode = (await Deno.stat(path)).ino;
      await Deno.copyFile(`${directory}/backup.db`, path); // `cp`: truncates and writes in place
      assertEquals((await Deno.stat(path)).ino, inode, "the same file, overwritten");
      assertEquals(await logged(server, '"DatabaseFileOverwritten"'), 1);
      await assertNothingAcknowledged(server, acknowledged[0]);
      assertEquals(await logged(server, '"DatabaseFileOverwritten"'), 1);
      await server.stop();
    } finally {
      await Deno.remove(directory, { recursive: true }).catch(() => {});
    }
  });
}

/** The tokens of the guard's table in the file itself, WAL aside, read as the guard reads them. */
async function tokensInFile(path: string): Promise<string[]> {
  const rows = await EmbeddedConnection.readFile(path, "SELECT token FROM database_identity");
  return rows.map((row) => String(row.token));
}

/** A stopped server's database holding one submission, copied to `target`. */
async function anotherBeaconDatabase(target: string): Promise<void> {
  const server = await startServer();
  try {
    assertEquals((await submit(server, "in another database")).status, 202);
    await server.stop();
    await Deno.copyFile(server.databaseUrl.slice("file:".length), target);
  } finally {
    await server.stop();
    await Deno.remove(server.directory, { recursive: true }).catch(() => {});
  }
}

const OVERWRITES_WITH_A_READER = [
  { name: "another Beacon's database", writerThread: "off" },
  { name: "a backup older than the start", writerThread: "on" },
];

for (const { name, writerThread } of OVERWRITES_WITH_A_READER) {
  Deno.test(`the database overwritten in place with ${name} while another process's reader held every checkpoint back across the start: 503 from then on (writer thread ${writerThread})`, async () => {
    const directory = await Deno.makeTempDir({ prefix: "beacon-test-" });
    const env = { BEACON_WRITER_THREAD: writerThread };
    const overwrite = `${directory}/overwrite.db`;
    let reader: InstanceType<typeof Database> | undefined;
    try {
      let server = await startServer({ directory, env });
      const path = server.databaseUrl.slice("file:".length);
      assertEquals((await submit(server, "before the backup")).status, 202);
      await server.stop();
      if (name === "a backup older than the start") await Deno.copyFile(path, overwrite);
      else await anotherBeaconDatabase(overwrite);
      server = await startServer({ directory, env });
      assertEquals((await submit(server, "after the backup")).status, 202);
      await server.stop(); // closed, so checkpointed: the file now holds that row

      // This test process is the other process: a read transaction open before the start and
      // for the whole test, as a backup or `review export` of a large store holds one.
      reader = new Database(path);
      reader.exec("BEGIN");
      reader.prepare("SELECT count(*) FROM submissions").get();
      const before = await tokensInFile(path);
      server = await startServer({ directory, env });
      const first = await submit(server, "after the start");
      assertEquals(first.status, 202);
      assertEquals(await tokensInFile(path), before, "the reader held the start's token back");

      await new Promise((resolve) => setTimeout(resolve, 2_000));
      // Another process overwrites it in place, as the shell's `cp` does (same inode).
      const inode = (await Deno.stat(path)).ino;
      const copy = await new Deno.Command("cp", { args: [overwrite, path] }).output();
      assertEquals(copy.code, 0, new TextDecoder().decode(copy.stderr));
      assertEquals((await Deno.stat(path)).ino, inode, "the same file, overwritten");
      assertEquals(await logged(server, '"DatabaseFileOverwritten"'), 1);
      await assertNothingAcknowledged(server, JSON.parse(first.body).receipt.id);
      await server.stop();
    } finally {
      reader?.exec("COMMIT");
      reader?.close();
      await Deno.remove(directory, { recursive: true }).catch(() => {});
    }
  });
}

Deno.test("a reader held across the start and released, with nothing overwritten: the guard never trips and the token reaches the file", async () => {
  const directory = await Deno.makeTempDir({ prefix: "beacon-test-" });
  let reader: InstanceType<typeof Database> | undefined;
  try {
    let server = await startServer({ directory });
    const path = server.databaseUrl.slice("file:".length);
    assertEquals((await submit(server, "before the start")).status, 202);
    await server.stop();
    reader = new Database(path);
    reader.exec("BEGIN");
    reader.prepare("SELECT count(*) FROM submissions").get();
    const before = await tokensInFile(path);
    server = await startServer({ directory });
    for (let i = 0; i < 3; i++) {
      assertEquals((await submit(server, `while held ${i}`)).status, 202);
      await new Promise((resolve) => setTimeout(resolve, 1_500)); // checks ran in between
    }
    assertEquals(await tokensInFile(path), before, "still held back");
    reader.exec("COMMIT");
    reader.close();
    reader = undefined;
    const settled = async () => (await tokensInFile(path)).some((token) => !before.includes(token));
    for (let i = 0; i < 40 && !(await settled()); i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    assert(await settled(), "a later check put this start's token into the file");
    assertEquals((await submit(server, "after the release")).status, 202);
    assert(!server.stderr().includes("DatabaseFile"), server.stderr());
    await server.stop();
  } finally {
    reader?.exec("COMMIT");
    reader?.close();
    await Deno.remove(directory, { recursive: true }).catch(() => {});
  }
});
