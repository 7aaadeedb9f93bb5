/**
 * Full-text search for the review side. The server's insert path is left alone (no trigger on
 * `submissions`): the review tool builds its own index, incrementally by `seq`, before each
 * search, remembering how far it got in `review_search_state` (store/migrations.ts, version 5).
 *
 * The index is an SQLite FTS5 table (https://sqlite.org/fts5.html) where the database has the
 * module (the embedded libSQL and sqld both do). It holds each submission's text in its folded
 * form (review/search/fold.ts: invisible characters removed, NFKC, lower case, the UTS #39
 * skeleton), and a query is folded the same way, so look-alike spellings match. A query is one
 * phrase, so nothing a reviewer types is FTS5 syntax, except a final `*`, which makes the phrase's
 * last word a prefix (fts5.html §3.3). An index built with an older fold is rebuilt. Where FTS5 is missing, search falls back to a case-insensitive substring match
 * over the content (`instr`, like `LIKE` without its wildcards), which scans every row; the
 * console says which one it uses. A redaction removes the row from the index (data/appends.ts),
 * and the catch-up never indexes a row a redaction emptied, even one that committed while the
 * page was being folded: it checks again in the transaction that writes.
 *
 * @module
 */
import type { Client, InValue } from "@libsql/client";
import { decodeUtf8Strict } from "../../src/message/mod.ts";
import { fold, FOLD_VERSION } from "./fold.ts";

/** How searching works on this database. */
export type SearchMode = "fts5" | "substring";

/** Most pages read in one catch-up (a bound on the loop, far above any real queue). */
const MAX_PAGES = 100_000;

/**
 * Rows read at once by the catch-up: at most 64 KiB each (the intake's default limit), so a
 * page stays a few MiB in memory.
 */
const CATCH_UP_ROWS = 64;

/**
 * Folded characters written in one step of the catch-up. Folding is linear in a row's length
 * (search/fold.ts), so this bounds the time a step keeps the event loop, whatever the rows
 * hold: a 63 KB row of U+FDFA folds to about 400,000 characters, three of them make a step.
 */
const STEP_CHARACTERS = 1_000_000;

/**
 * Creates the index table when it can, and tells how search will work.
 *
 * @param client A migrated database (for appending).
 * @returns `fts5`, or `substring` when the module is missing.
 */
export async function prepareSearch(client: Client): Promise<SearchMode> {
  try {
    await client.execute(CREATE_INDEX);
  } catch {
    return "substring";
  }
  const built = await client.execute(
    "SELECT indexed_through FROM review_search_state WHERE name = 'fold-version'",
  );
  if (Number(built.rows[0]?.indexed_through ?? 0) !== FOLD_VERSION) {
    // Built with another fold (or before folding existed): start again from the first row, in
    // one transaction, so a second console sees the old index or the new one, never half.
    // DELETE, not DROP TABLE: a DROP fails (SQLITE_LOCKED) while the connection has a read open.
    await client.batch([
      "DELETE FROM review_fts",
      {
        sql: "INSERT INTO review_search_state (name, indexed_through) VALUES (?, ?) " +
          "ON CONFLICT (name) DO UPDATE SET indexed_through = excluded.indexed_through",
        args: ["fold-version", FOLD_VERSION],
      },
      {
        sql: "INSERT INTO review_search_state (name, indexed_through) VALUES ('fts', 0) " +
          "ON CONFLICT (name) DO UPDATE SET indexed_through = 0",
        args: [],
      },
    ], "write");
  }
  return "fts5";
}

/**
 * The index table. `review_search_state` keeps, beside how far the index got (`fts`), the fold
 * it was built with (`fold-version`, in the same integer column).
 */
const CREATE_INDEX =
  "CREATE VIRTUAL TABLE IF NOT EXISTS review_fts USING fts5(text, tokenize = 'unicode61')";

/**
 * One row into the index, only if it is still there to index: content not emptied, and no
 * redaction record (checked in the writing transaction itself: see catchUpIndex).
 */
const INDEX_UNLESS_REDACTED = "INSERT INTO review_fts (rowid, text) SELECT ?1, ?2 " +
  "WHERE EXISTS (SELECT 1 FROM submissions s WHERE s.seq = ?1 AND length(s.content) > 0 " +
  "AND NOT EXISTS (SELECT 1 FROM redactions r WHERE r.submission_id = s.id))";

/**
 * Indexes the submissions not yet in the index, oldest first, in bounded steps: a page of at
 * most {@linkcode CATCH_UP_ROWS} rows is read, and folded and written a step at a time, each step
 * one write transaction holding at most about {@linkcode STEP_CHARACTERS} folded characters
 * (at least one row). Between steps the event loop runs, so the console answers its other calls
 * while a long catch-up goes on (the console is one event loop: without the yield, every other
 * call waits for the whole catch-up).
 *
 * @param client A migrated database.
 * @param mode What {@linkcode prepareSearch} said.
 * @returns How many rows were added.
 */
export async function catchUpIndex(client: Client, mode: SearchMode): Promise<number> {
  if (mode !== "fts5") return 0;
  let added = 0;
  pages: for (let page = 0; page < MAX_PAGES; page++) {
    const state = await client.execute(
      "SELECT indexed_through FROM review_search_state WHERE name = 'fts'",
    );
    let after = Number(state.rows[0]?.indexed_through ?? 0);
    const rows = (await client.execute({
      sql: "SELECT seq, content FROM submissions WHERE seq > ? ORDER BY seq LIMIT ?",
      args: [after, CATCH_UP_ROWS],
    })).rows;
    if (rows.length === 0) return added;
    for (let start = 0; start < rows.length;) {
      const statements: { sql: string; args: InValue[] }[] = [];
      let characters = 0;
      let end = start;
      while (end < rows.length && (end === start || characters < STEP_CHARACTERS)) {
        const row = rows[end++];
        const content = row.content instanceof ArrayBuffer
          ? new Uint8Array(row.content)
          : undefined;
        const text = content === undefined ? undefined : decodeUtf8Strict(content);
        if (text === undefined || text === "") continue; // not text, or redacted
        const folded = fold(text);
        characters += folded.length;
        statements.push({ sql: INDEX_UNLESS_REDACTED, args: [Number(row.seq), folded] });
      }
      const last = Number(rows[end - 1].seq);
      // The rows were read and folded outside any transaction, so a redaction may have
      // committed since: each insert checks again, inside this write transaction, that its row
      // still has content and no redaction record. SQLite runs one write transaction at a time,
      // so a redaction either committed before this batch (its row is skipped here) or begins
      // after it (and deletes the row this batch indexed, in its own transaction:
      // data/appends.ts). The folded text of a redacted row is never written, so it cannot be
      // left in the file either.
      // Two catch-ups at once (two consoles): the second one's insert of a rowid already
      // indexed fails, and its whole batch, state included, rolls back.
      let results;
      try {
        results = await client.batch([
          ...statements,
          {
            sql: "INSERT INTO review_search_state (name, indexed_through) VALUES ('fts', ?) " +
              "ON CONFLICT (name) DO UPDATE SET indexed_through = excluded.indexed_through " +
              "WHERE indexed_through = ?",
            args: [last, after],
          },
        ], "write");
      } catch {
        continue pages; // another catch-up indexed these rows first; read the state again
      }
      for (const result of results.slice(0, statements.length)) added += result.rowsAffected;
      after = last;
      start = end;
      // A macrotask, not a microtask: pending requests are read and answered before the next step.
      await new Promise((resolve) => setTimeout(resolve, 0));
    }
    if (rows.length < CATCH_UP_ROWS) return added;
  }
  return added;
}

/**
 * What the reviewer typed as one FTS5 string (a phrase) over the folded text: double quotes
 * inside are doubled (fts5.html §3.1), and a final `*` after the closing quote makes its last
 * token a prefix (§3.3).
 *
 * @returns The MATCH argument, or `undefined` when nothing is left once folded.
 */
function matchQuery(text: string): string | undefined {
  const prefix = text.endsWith("*");
  const phrase = fold(prefix ? text.slice(0, -1) : text);
  if (phrase.trim() === "") return undefined;
  return `"${phrase.replaceAll('"', '""')}"${prefix ? " *" : ""}`;
}

/** The rows after `after`, folded into `table` as catchUpIndex folds them, one page a batch. */
async function indexInto(client: Client, table: string, after: number): Promise<void> {
  for (let page = 0; page < MAX_PAGES; page++) {
    const rows = (await client.execute({
      sql: "SELECT seq, content FROM submissions WHERE seq > ? ORDER BY seq LIMIT ?",
      args: [after, CATCH_UP_ROWS],
    })).rows;
    if (rows.length === 0) return;
    after = Number(rows[rows.length - 1].seq);
    const statements: { sql: string; args: InValue[] }[] = [];
    for (const row of rows) {
      const content = row.content instanceof ArrayBuffer ? new Uint8Array(row.content) : undefined;
      const text = content === undefined ? undefined : decodeUtf8Strict(content);
      if (text === undefined || text === "") continue;
      statements.push({
        sql: `INSERT INTO ${table} (rowid, text) VALUES (?, ?)`,
        args: [Number(row.seq), fold(text)],
      });
    }
    if (statements.length > 0) await client.batch(statements, "write");
    if (rows.length < CATCH_UP_ROWS) return;
  }
}

/**
 * The console's search for a command that must not write the database (`list --search`): the
 * same fold, tokenizer and query over the same index. The rows the console's index already
 * holds are searched there, read only; the rows after it (all of them, where no console has
 * searched yet or its index was built with another fold) are folded into a temporary FTS5 table
 * of this connection (SQLite's `temp` schema, which lives outside the database file and goes
 * with the connection). Where FTS5 is missing, the substring match the console falls back to.
 *
 * @param client A database opened for reading.
 * @param text What the reviewer typed.
 * @returns The subquery for the `searchSql` filter.
 */
export async function readingSearchCondition(
  client: Client,
  text: string,
): Promise<{ sql: string; args: InValue[] }> {
  try {
    await client.execute(
      "CREATE VIRTUAL TABLE IF NOT EXISTS temp.review_fts_tail USING fts5(text, tokenize = 'unicode61')",
    );
  } catch {
    return searchCondition("substring", text);
  }
  let after = 0;
  let persisted = false;
  try {
    const state = await client.execute(
      "SELECT name, indexed_through FROM review_search_state WHERE name IN ('fts', 'fold-version')",
    );
    const value = (name: string) =>
      Number(state.rows.find((row) => row.name === name)?.indexed_through ?? 0);
    const exists = (await client.execute(
      "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'review_fts'",
    )).rows.length > 0;
    if (exists && value("fold-version") === FOLD_VERSION) {
      persisted = true;
      after = value("fts");
    }
  } catch {
    // A database from before the review tables: everything goes into the temporary index.
  }
  await indexInto(client, "temp.review_fts_tail", after);
  const query = matchQuery(text);
  if (query === undefined) return { sql: "SELECT seq FROM submissions WHERE 0", args: [] };
  const tail = "SELECT rowid FROM temp.review_fts_tail WHERE review_fts_tail MATCH ?";
  return persisted
    ? {
      sql: `SELECT rowid FROM review_fts WHERE review_fts MATCH ? AND rowid <= ? UNION ${tail}`,
      args: [query, after, query],
    }
    : { sql: tail, args: [query] };
}

/**
 * The SQL selecting the `seq`s that match `text`, for the `searchSql` filter.
 *
 * @param mode How to search.
 * @param text What the reviewer typed.
 * @returns A subquery and its arguments.
 */
export function searchCondition(
  mode: SearchMode,
  text: string,
): { sql: string; args: InValue[] } {
  if (mode === "fts5") {
    const query = matchQuery(text);
    // Nothing left to match once folded (only invisible characters, say): no row matches.
    if (query === undefined) return { sql: "SELECT rowid FROM review_fts WHERE 0", args: [] };
    return { sql: "SELECT rowid FROM review_fts WHERE review_fts MATCH ?", args: [query] };
  }
  return {
    sql: "SELECT seq FROM submissions WHERE instr(lower(CAST(content AS TEXT)), lower(?)) > 0",
    args: [text],
  };
}
