/**
 * Redaction erases (issue 19, item 6): after `review redact`, a word found only in the redacted
 * submission is in no file of the database, neither `x.db` nor `-wal` nor `-shm`, although it
 * was in them (content and review search index) before.
 */
import { createClient } from "@libsql/client";
import { encodeSeed, generateSeed } from "../../src/signing/key.ts";
import { catchUpIndex, prepareSearch } from "../search.ts";
import { assert, assertMatch, assertStrictEquals } from "../../tests/support/assert.ts";
import { startSqld } from "../../tests/support/sqld.ts";
import { fill, review, tempDatabase, text } from "./support.ts";

const SEED = encodeSeed(generateSeed());
const WORD = "zqxvorblatterwick" + crypto.randomUUID().slice(0, 8).replace(/[^a-f]/g, "q");

async function filesHolding(directory: string, word: string): Promise<string[]> {
  const needle = new TextEncoder().encode(word);
  const found: string[] = [];
  for await (const entry of Deno.readDir(directory)) {
    const bytes = await Deno.readFile(`${directory}/${entry.name}`);
    outer: for (let start = 0; start + needle.length <= bytes.length; start++) {
      for (let index = 0; index < needle.length; index++) {
        if (bytes[start + index] !== needle[index]) continue outer;
      }
      found.push(entry.name);
      break;
    }
  }
  return found;
}

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
