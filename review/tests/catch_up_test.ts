/**
 * The console answers its other calls while its search index catches up, on Deno, Node and Bun:
 * rows that are costly to fold (63 KB of U+FDFA each, which once froze the console on Bun for minutes) are
 * indexed in bounded steps with the event loop free between them (review/search/search.ts). The
 * proof is an order, not a time: a call made once the catch-up has begun is answered while the
 * index is still behind the last row, and the search it was waiting for then finds every row.
 */
import { createClient } from "@libsql/client";
import { assert, assertStrictEquals } from "../../tests/support/assert.ts";
import { fill, tempDatabase, text } from "./support.ts";
import { RUNTIMES } from "./review_runtimes.ts";

const HEAVY = "\uFDFA".repeat(21_000);
const ROWS = 90;

/** How far the console's index got, read on a connection of the test's own. */
async function indexedThrough(url: string): Promise<number> {
  const client = createClient({ url });
  try {
    const state = await client.execute(
      "SELECT indexed_through FROM review_search_state WHERE name = 'fts'",
    );
    return Number(state.rows[0]?.indexed_through ?? 0);
  } finally {
    client.close();
  }
}

for (const [name, start] of Object.entries(RUNTIMES)) {
  Deno.test(`${name}: the console answers other calls while its index catches up on costly rows`, async () => {
    const runtime = await start();
    const database = await tempDatabase();
    try {
      await fill(database, Array.from({ length: ROWS }, (_, i) => text(`row ${i} ${HEAVY}`)));
      const console = await runtime.serve(database.url);
      try {
        const headers = { authorization: `Bearer ${await console.session()}` };
        const searching = fetch(`${console.origin}/api/queue?q=row`, { headers });
        // Wait (bounded by rounds, not by time) until the catch-up has written its first step.
        for (let round = 0; (await indexedThrough(database.url)) === 0; round++) {
          assert(round < 10_000, "the catch-up begins");
          await new Promise((resolve) => setTimeout(resolve, 10));
        }
        const integrity = await fetch(`${console.origin}/api/integrity`, { headers });
        assertStrictEquals(integrity.status, 200);
        assertStrictEquals((await integrity.json()).submissions, ROWS);
        const reached = await indexedThrough(database.url);
        assert(reached < ROWS, `answered while the index was behind (at ${reached} of ${ROWS})`);
        const found = await searching;
        assertStrictEquals(found.status, 200);
        assertStrictEquals((await found.json()).items.length, 50, "a full first page of matches");
        assertStrictEquals(await indexedThrough(database.url), ROWS);
      } finally {
        await console.stop();
      }
    } finally {
      await Deno.remove(database.directory, { recursive: true });
    }
  });
}
