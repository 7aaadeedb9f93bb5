/**
 * Redaction erases: after `review redact`, a word found only in the redacted
 * submission is in no file of the database, neither `x.db` nor `-wal` nor `-shm`, although it
 * was in them (content and review search index) before.
 */
import { createClient } from "@libsql/client";
import { encodeSeed, generateSeed } from "../../src/signing/key.ts";
import { catchUpIndex, prepareSearch } from "../search/search.ts";
import { assert, assertMatch, assertStrictEquals } from "../../tests/support/assert.ts";
import { startSqld } from "../../tests/support/sqld.ts";
import { startServer } from "../../tests/support/server.ts";
import { filesHolding, fill, review, startConsole, tempDatabase, text } from "./support.ts";

const SEED = encodeSeed(generateSeed());
const WORD = "zqxvorblatterwick" + crypto.randomUUID().slice(0, 8).replace(/[^a-f]/g, "q");

Deno.test("after redact, the redacted word is in no database file (db, wal, shm)", async () => {
  const database = await tempDatabase();
  try {
    const receipts = await fill(database, [
      text("an ordinary message that stays"),
      text(`the court ordered ${WORD} erased from the store`),
      text("another ordinary message"),
    ], { signingKey: SEED });
    // Build the review search index, as the console does before a search.
    const client = createClient({ url: database.url });
    try {
      const mode = await prepareSearch(client);
      assertStrictEquals(mode, "fts5");
      assert(await catchUpIndex(client, mode) === 3);
      const hits = await client.execute({
        sql: "SELECT rowid FROM review_fts WHERE review_fts MATCH ?",
        args: [WORD],
      });
      assertStrictEquals(hits.rows.length, 1);
    } finally {
      client.close();
    }
    assert((await filesHolding(database.directory, WORD)).length > 0, "the word is stored");

    const run = await review(database, [
      "redact",
      String(receipts[1].id),
      "--reason",
      "erasure order 7",
      "--reviewer",
      "ops",
    ], { BEACON_SIGNING_KEY: SEED });
    assertStrictEquals(run.code, 0, run.stderr);
    assert(!run.stdout.includes("did not complete"), run.stdout);
    assertStrictEquals((await filesHolding(database.directory, WORD)).join(", "), "");
    // Nor any prefix long enough to identify it (FTS5 stores terms prefix-compressed).
    assertStrictEquals((await filesHolding(database.directory, WORD.slice(0, 10))).join(", "), "");
  } finally {
    await Deno.remove(database.directory, { recursive: true });
  }
});

Deno.test("redact while the server runs and the console has searched: after everything stops, no file holds the old record", async () => {
  // The redacted submission comes early and many follow, so that the B-tree pages it was
  // written to split and rebalance under the server: SQLite leaves the bytes of moved cells in
  // a page's free space unless every connection that writes erases what it frees.
  const server = await startServer({ env: { BEACON_SIGNING_KEY: SEED } });
  try {
    const submit = async (body: string) => {
      const response = await fetch(`${server.url}/beacon/0.1/submissions`, {
        method: "POST",
        headers: { "content-type": "text/plain; charset=utf-8" },
        body,
      });
      assertStrictEquals(response.status, 202);
      return String((await response.json()).receipt.id);
    };
    const filler = (i: number) => `ordinary message ${i} ` + "padding ".repeat(20 + (i % 9) * 6);
    for (let i = 0; i < 5; i++) await submit(filler(i));
    const id = await submit(`the court ordered ${WORD} erased from the store ` + "x".repeat(300));
    for (let i = 5; i < 160; i++) await submit(filler(i));

    const console = await startConsole(server.databaseUrl);
    try {
      const found = await fetch(`${console.origin}/api/queue?q=${WORD}`, {
        headers: { authorization: `Bearer ${await console.session()}` },
      });
      assertStrictEquals(found.status, 200);
      assert((await found.text()).includes(id), "the console's search finds it");
      const run = await review(server.databaseUrl, [
        "redact",
        id,
        "--reason",
        "erasure order 9",
        "--reviewer",
        "ops",
      ], { BEACON_SIGNING_KEY: SEED });
      assertStrictEquals(run.code, 0, run.stderr);
    } finally {
      await console.stop();
    }
    for (let i = 160; i < 170; i++) await submit(filler(i)); // the server goes on writing
  } finally {
    await server.stop();
  }
  const client = createClient({ url: server.databaseUrl });
  try {
    await client.execute("PRAGMA wal_checkpoint(TRUNCATE)");
  } finally {
    client.close();
  }
  try {
    assertStrictEquals((await filesHolding(server.directory, WORD)).join(", "), "");
    assertStrictEquals((await filesHolding(server.directory, WORD.slice(0, 10))).join(", "), "");
    assertStrictEquals((await filesHolding(server.directory, "x".repeat(300))).join(", "), "");
  } finally {
    await Deno.remove(server.directory, { recursive: true });
  }
});

Deno.test("redact on a file another writer left copies in (secure_delete off): it says so and how to erase them", async () => {
  const database = await tempDatabase();
  try {
    const receipts = await fill(database, [
      text(`the court ordered ${WORD} erased from the store ` + "y".repeat(300)),
    ], { signingKey: SEED });
    // A writer whose connection leaves freed bytes in place (SQLite's default), as every
    // connection did before the Beacon's set `secure_delete`: rows added after the one to be
    // redacted make its page split, and the moved cells' old bytes stay in free space.
    const writer = createClient({ url: database.url });
    try {
      await writer.execute("PRAGMA secure_delete = OFF");
      for (let i = 0; i < 120; i++) {
        await writer.execute({
          sql: "INSERT INTO submissions (id, context_id, received_at, surface, kind, " +
            "content_type, size, digest, source_hash, content) SELECT ?, context_id, " +
            "received_at, surface, kind, content_type, size, digest, source_hash, ? " +
            "FROM submissions WHERE id = ?",
          args: [
            `filler-${i}`,
            new TextEncoder().encode("z".repeat(200 + i)),
            String(receipts[0].id),
          ],
        });
      }
    } finally {
      writer.close();
    }
    const run = await review(database, [
      "redact",
      String(receipts[0].id),
      "--reason",
      "erasure order 10",
      "--reviewer",
      "ops",
    ], { BEACON_SIGNING_KEY: SEED });
    assertStrictEquals(run.code, 0, run.stderr);
    assertMatch(run.stdout, /^copies of the old content remain .* run VACUUM/m);
    assert((await filesHolding(database.directory, WORD)).length > 0, "the copies are there");
  } finally {
    await Deno.remove(database.directory, { recursive: true });
  }
});

Deno.test("redact on a remote database (real sqld) signs, merges the index and says what is left", async () => {
  const sqld = await startSqld();
  try {
    const receipts = await fill({ url: sqld.url }, [text("to be erased")], {
      signingKey: SEED,
    });
    const run = await review(sqld.url, [
      "redact",
      String(receipts[0].id),
      "--reason",
      "erasure order 8",
      "--reviewer",
      "ops",
    ], { BEACON_SIGNING_KEY: SEED });
    assertStrictEquals(run.code, 0, run.stderr);
    assertMatch(run.stdout, /record signed by key /);
    assertMatch(run.stdout, /^the database is remote: .* erase them there/m);
    const verify = await review(sqld.url, ["verify"], { BEACON_SIGNING_KEY: SEED });
    assertStrictEquals(verify.code, 0, verify.stdout);
    assertMatch(verify.stdout, /1 redacted/);
  } finally {
    await sqld.close();
  }
});
