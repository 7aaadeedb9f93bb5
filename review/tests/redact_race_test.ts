/**
 * A redaction wins its race against the console's search index, on Deno, Node and Bun: large
 * look-alike rows make the console's index catch-up long, the CLI redacts a row while that
 * catch-up runs, and after everything has stopped no file of the database (`x.db`, `-wal`,
 * `-shm`) holds the redacted word, in its stored form or its folded (indexed) form, and the
 * console's search never finds it again. Whichever of the two transactions commits first, the
 * outcome must be this one (review/search/search.ts, `catchUpIndex`; data/appends.ts, `redact`).
 */
import { createClient } from "@libsql/client";
import { encodeSeed, generateSeed } from "../../src/signing/key.ts";
import { fold } from "../search/fold.ts";
import { assert, assertStrictEquals } from "../../tests/support/assert.ts";
import { filesHolding, fill, tempDatabase, text } from "./support.ts";
import { RUNTIMES } from "./review_runtimes.ts";

const SEED = encodeSeed(generateSeed());
const SIGNED = { BEACON_SIGNING_KEY: SEED };
/** 63 KB of U+FDFA, which NFKC turns into 18 letters each: the costliest row to fold. */
const HEAVY = "\uFDFA".repeat(21_000);

for (const [name, start] of Object.entries(RUNTIMES)) {
  Deno.test(`${name}: a redaction during the console's index catch-up leaves the word in no index and no file`, async () => {
    const word = "zqxvorblatterwick" + crypto.randomUUID().replace(/[^a-f]/g, "").slice(0, 8);
    const runtime = await start();
    const database = await tempDatabase();
    try {
      const filler = (i: number) => text(`filler ${i} ${HEAVY}`);
      // The row to redact sits halfway: the catch-up reads it with the first page of rows (64)
      // and writes it only steps later, so the redaction lands between the read and the write
      // (the window the index once lost the race in; runs here had indexed 3 to 15 rows of 61
      // when the CLI's redaction had committed).
      const receipts = await fill(database, [
        ...Array.from({ length: 30 }, (_, i) => filler(i)),
        text(`the court ordered ${word} erased ${HEAVY}`),
        ...Array.from({ length: 30 }, (_, i) => filler(i + 30)),
      ], { signingKey: SEED });
      const id = String(receipts[30].id);
      assert((await filesHolding(database.directory, word)).length > 0, "the word is stored");

      const console = await runtime.serve(database.url);
      try {
        const session = await console.session();
        const search = (q: string) =>
          fetch(`${console.origin}/api/queue?q=${encodeURIComponent(q)}`, {
            headers: { authorization: `Bearer ${session}` },
          });
        // The first search starts the catch-up over every row; the redaction runs meanwhile.
        const searching = search("filler");
        const run = await runtime.cli([
          "redact",
          id,
          "--reason",
          "erasure order 43",
          "--reviewer",
          "ops",
          database.url,
        ], SIGNED);
        assertStrictEquals(run.code, 0, `${run.stdout}\n${run.stderr}`);
        const first = await searching;
        assertStrictEquals(first.status, 200);
        await first.body?.cancel();
        const again = await search(word);
        assertStrictEquals(again.status, 200);
        assertStrictEquals((await again.json()).items.length, 0, "the console no longer finds it");
      } finally {
        await console.stop();
      }
      const client = createClient({ url: database.url });
      try {
        const indexed = await client.execute({
          sql: "SELECT count(*) AS n FROM review_fts WHERE review_fts MATCH ?",
          args: [`"${fold(word)}"`],
        });
        assertStrictEquals(Number(indexed.rows[0].n), 0, "the index holds no row for it");
        await client.execute("PRAGMA wal_checkpoint(TRUNCATE)");
      } finally {
        client.close();
      }
      for (const form of new Set([word, fold(word), word.slice(0, 10)])) {
        assertStrictEquals((await filesHolding(database.directory, form)).join(", "), "", form);
      }
    } finally {
      await Deno.remove(database.directory, { recursive: true });
    }
  });
}
