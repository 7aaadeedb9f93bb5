/**
 * The review queue at 100,000 submissions: keyset pages stay index lookups however deep
 * (asserted on SQLite's query plan, not on time), the queue puts new items first and oldest
 * first across the page boundary, and search finds rows through the review side's index.
 * The time of each step is printed for the record (docs/review.md quotes a run), never asserted.
 */
import { createClient } from "@libsql/client";
import { openForAppending } from "../data/database.ts";
import { queuePage, submissionPage } from "../data/queries.ts";
import { catchUpIndex, prepareSearch, searchCondition } from "../search/search.ts";
import { assert, assertEquals, assertStrictEquals } from "../../tests/support/assert.ts";
import { fill, tempDatabase } from "./support.ts";

const ROWS = 100_000;
const REVIEWED = 60_000;

Deno.test("the queue pages by index at 100,000 submissions", async () => {
  const database = await tempDatabase();
  await fill(database, []);
  const raw = createClient({ url: database.url });
  // Rows written straight into the table (the server's path is tested elsewhere); the first
  // 60,000 already reviewed.
  await raw.execute(
    `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${ROWS})
    INSERT INTO submissions (id, context_id, received_at, surface, kind, content_type, content,
      size, digest, source_hash)
    SELECT printf('id%028d', i), 'c', strftime('%Y-%m-%dT%H:%M:%fZ', 1700000000 + i, 'unixepoch'),
      'native', 'unstructured', 'text/plain; charset=utf-8',
      CAST(printf('message number %d about topic %d', i, i % 97) AS BLOB), 10, 'sha256:00', 'src'
    FROM n`,
  );
  await raw.execute(
    "INSERT INTO review_events (submission_id, status, created_at) " +
      `SELECT id, 'reviewed', 'x' FROM submissions WHERE seq <= ${REVIEWED}`,
  );
  raw.close();
  const review = await openForAppending({ url: database.url }, Date.now);
  const timed = async <T>(label: string, work: () => Promise<T>): Promise<T> => {
    const start = performance.now();
    const result = await work();
    console.log(`${label}: ${(performance.now() - start).toFixed(1)} ms`);
    return result;
  };
  try {
    const { client, schema } = review;
    const first = await timed(
      "queue, first page",
      () => queuePage(client, schema, {}, undefined, 50),
    );
    assertStrictEquals(first.rows[0].seq, REVIEWED + 1);
    const deep = await timed(
      "queue, page after 99,980 new",
      () => queuePage(client, schema, {}, { phase: "new", after: 99_980 }, 50),
    );
    // 20 new ones left, then the reviewed ones from the oldest.
    assertEquals(deep.rows.map((row) => row.seq).slice(18, 22), [99_999, 100_000, 1, 2]);
    assertEquals(deep.next, { phase: "done", after: 30 });
    const newest = await timed(
      "list, newest page",
      () => submissionPage(client, schema, {}, { before: 0, limit: 50 }),
    );
    assertStrictEquals(newest[0].seq, ROWS);

    // Every page is a range search on the primary key, with index lookups for its status and
    // redaction: no scan of the table, however deep the page.
    const plan = (await client.execute(
      "EXPLAIN QUERY PLAN SELECT s.seq, (SELECT r.status FROM review_events r " +
        "WHERE r.submission_id = s.id AND r.status IS NOT NULL ORDER BY r.seq DESC LIMIT 1) " +
        ", d.created_at FROM submissions s LEFT JOIN redactions d ON d.submission_id = s.id " +
        "WHERE s.seq > 99000 ORDER BY s.seq LIMIT 50",
    )).rows.map((row) => String(row.detail)).join("\n");
    assert(/SEARCH s USING INTEGER PRIMARY KEY \(rowid>\?\)/.test(plan), plan);
    assert(/SEARCH r USING INDEX review_events_submission \(submission_id=\?\)/.test(plan), plan);
    assert(/SEARCH d USING INDEX \S+ \(submission_id=\?\)/.test(plan), plan);

    const mode = await prepareSearch(client);
    const added = await timed(`search index, catch-up (${mode})`, () => catchUpIndex(client, mode));
    if (mode === "fts5") assertStrictEquals(added, ROWS);
    assertStrictEquals(
      await timed("search index, nothing new", () => catchUpIndex(client, mode)),
      0,
    );
    const found = await timed(
      "search, first page",
      () =>
        queuePage(
          client,
          schema,
          { searchSql: searchCondition(mode, "number 99999") },
          undefined,
          50,
        ),
    );
    assertEquals(found.rows.map((row) => row.id), [`id${"99999".padStart(28, "0")}`]);
  } finally {
    await review.close();
  }
});
