/**
 * Review search finds what reviewers hunt for: look-alike spellings through the folded index
 * (review/search/fold.ts), a prefix with a final `*`, and nothing a reviewer types is FTS5 syntax.
 * Submissions arrive through the real intake; the queue is read as the console reads it.
 */
import { createClient } from "@libsql/client";
import { openForAppending } from "../data/database.ts";
import { queuePage } from "../data/queries.ts";
import { catchUpIndex, prepareSearch, searchCondition } from "../search/search.ts";
import { assertEquals, assertStrictEquals } from "../../tests/support/assert.ts";
import { fill, message, review, startConsole, tempDatabase, text } from "./support.ts";

const SPELLINGS = {
  plain: "Send your paypal password here",
  zeroWidth: "Send your pay\u200Bpal password here",
  cyrillic: "Send your p\u0430ypal password here",
  fullWidth: "Send your \uFF50\uFF41\uFF59\uFF50\uFF41\uFF4C password here",
  upper: "SEND YOUR PAYPAL PASSWORD HERE",
  digits: "Send your payp4l passw0rd here",
  other: "Payment to a pal",
  prefix: "AAAABBBB is the code",
};

/** The bodies the console's queue shows for a search. */
async function search(databaseUrl: string, query: string): Promise<string[]> {
  const review = await openForAppending({ url: databaseUrl }, Date.now);
  try {
    const mode = await prepareSearch(review.client);
    assertStrictEquals(mode, "fts5");
    await catchUpIndex(review.client, mode);
    const { rows } = await queuePage(
      review.client,
      review.schema,
      { searchSql: searchCondition(mode, query) },
      undefined,
      50,
    );
    return rows.map((row) => new TextDecoder().decode(row.content)).sort();
  } finally {
    await review.close();
  }
}

Deno.test("search: paypal finds its invisible, Cyrillic, full-width and upper-case spellings", async () => {
  const database = await tempDatabase();
  await fill(database, Object.values(SPELLINGS).map((body) => text(body)));
  const lookAlikes = [
    SPELLINGS.plain,
    SPELLINGS.zeroWidth,
    SPELLINGS.cyrillic,
    SPELLINGS.fullWidth,
    SPELLINGS.upper,
  ].sort();
  assertEquals(await search(database.url, "paypal"), lookAlikes);
  // The query is folded too: typed with the Cyrillic letter, it finds the same rows.
  assertEquals(await search(database.url, "p\u0430yp\u0430l"), lookAlikes);
  // Digits that UTS #39 does not map to letters (4 and a) stay apart; 0 and o do not.
  assertEquals(await search(database.url, "payp4l passwOrd"), [SPELLINGS.digits]);
  await Deno.remove(database.directory, { recursive: true });
});

Deno.test("search: a final * matches a prefix, and without it only whole words match", async () => {
  const database = await tempDatabase();
  await fill(database, Object.values(SPELLINGS).map((body) => text(body)));
  assertEquals(await search(database.url, "AAAA"), []);
  assertEquals(await search(database.url, "AAAA*"), [SPELLINGS.prefix]);
  assertEquals(await search(database.url, "aaaab*"), [SPELLINGS.prefix]);
  // FTS5 syntax is literal text: quotes, operators and a lone star find nothing and never fail.
  for (const typed of ['pay"pal', "paypal OR code", "NEAR(a b)", "*", "\u200B", "^x", "a:b"]) {
    assertEquals(await search(database.url, typed), [], typed);
  }
  // A leading - is punctuation, not FTS5's NOT: the word itself is searched.
  assertEquals(await search(database.url, "-pal"), [SPELLINGS.other]);
  await Deno.remove(database.directory, { recursive: true });
});

Deno.test("search: an index built before folding is rebuilt once, then extended", async () => {
  const database = await tempDatabase();
  await fill(database, [text(SPELLINGS.zeroWidth), text(SPELLINGS.cyrillic)]);
  // The index as the previous release built it: raw text, state at the last row, no fold.
  const raw = createClient({ url: database.url });
  await raw.execute(
    "CREATE VIRTUAL TABLE review_fts USING fts5(text, tokenize = 'unicode61')",
  );
  await raw.execute(
    "INSERT INTO review_fts (rowid, text) SELECT seq, CAST(content AS TEXT) FROM submissions",
  );
  await raw.execute(
    "INSERT INTO review_search_state (name, indexed_through) VALUES ('fts', 2)",
  );
  raw.close();
  assertEquals(
    await search(database.url, "paypal"),
    [SPELLINGS.cyrillic, SPELLINGS.zeroWidth].sort(),
  );
  // Rebuilt once: a later catch-up only adds what is new.
  await fill(database, [text(SPELLINGS.plain)]);
  const review = await openForAppending({ url: database.url }, Date.now);
  try {
    const mode = await prepareSearch(review.client);
    assertStrictEquals(await catchUpIndex(review.client, mode), 1);
    const indexed = await review.client.execute("SELECT count(*) AS n FROM review_fts");
    assertStrictEquals(Number(indexed.rows[0].n), 3);
  } finally {
    await review.close();
  }
  await Deno.remove(database.directory, { recursive: true });
});

Deno.test("list --search finds what the console's search finds, before and after its index", async () => {
  const database = await tempDatabase();
  await fill(database, [
    ...Object.values(SPELLINGS).map((body) => text(body)),
    message({ subject: "Your p\u0430yp\u0430l account", body: "Verify it." }),
    text("nothing to see"),
  ]);
  const listed = async () => {
    const run = await review(database, ["list", "--search", "paypal", "--json"]);
    assertStrictEquals(run.code, 0, run.stderr);
    return JSON.parse(run.stdout).map((item: { id: string }) => item.id).sort();
  };
  // No console has searched yet: list folds every row into its own temporary index, and leaves
  // the database as it was (a reading command never writes).
  const before = await listed();
  assertStrictEquals(before.length, 6);
  const console = await startConsole(database.url);
  let found: string[];
  try {
    const response = await fetch(`${console.origin}/api/queue?q=paypal`, {
      headers: { authorization: `Bearer ${await console.session()}` },
    });
    found = (await response.json()).items.map((item: { id: string }) => item.id).sort();
  } finally {
    await console.stop();
  }
  assertEquals(before, found);
  // The console's index now exists; a row after it is found through the temporary one.
  await fill(database, [text("late p\u0430ypal"), text("late other")]);
  const after = await listed();
  assertStrictEquals(after.length, 7);
  assertEquals(after.filter((id: string) => !found.includes(id)).length, 1);
  // A usage error for an empty search.
  const empty = await review(database, ["list", "--search", " "]);
  assertStrictEquals(empty.code, 2);
});
