/**
 * The log's read-back of rows (`LogRows.rowsAfter`, src/store/log_rows.ts) in its two possible
 * forms, side by side in one process: a result row per submission, and the same rows as one JSON
 * array (`json_group_array`). Each is read as the Beacon reads it: embedded through the `libsql`
 * driver, remote through `@libsql/client/web` on a real sqld on loopback, started here. It prints
 * this process's CPU per row read (user + system, `process.cpuUsage`), which is what the Beacon
 * pays; sqld's own work is not in it.
 *
 * `deno run -A bench/readback_bench.ts [rows=20000] [rounds=5]`
 *
 * @module
 */
import process from "node:process";
import Driver from "libsql";
import { createClient } from "@libsql/client/web";
import { startSqld } from "../tests/support/sqld.ts";

const ROWS = Number(Deno.args[0] ?? 20_000);
const ROUNDS = Number(Deno.args[1] ?? 5);
const PAGE = 500;
const TABLE = `CREATE TABLE submissions (seq INTEGER PRIMARY KEY, id TEXT NOT NULL,
  received_at TEXT NOT NULL, digest TEXT NOT NULL, kind TEXT NOT NULL, size INTEGER NOT NULL) STRICT`;
const PER_ROW = "SELECT seq, id, received_at, digest, kind, size FROM submissions " +
  "WHERE seq > ? ORDER BY seq LIMIT ?";
const AS_ARRAY = "SELECT json_group_array(json_array(seq, id, received_at, digest, kind, size)) " +
  `AS rows FROM (${PER_ROW})`;
const FILL = "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?) " +
  "INSERT INTO submissions (id, received_at, digest, kind, size) SELECT " +
  "'01JE' || printf('%022d', i), '2026-12-07T08:00:00.000Z', 'sha256:' || hex(randomblob(32)), " +
  "'structured', 600 FROM n";

type Read = (sql: string, after: number) => Promise<Record<string, unknown>[]>;

/** This process's CPU per row over `ROUNDS` reads of every row, a page at a time. */
async function cpuPerRow(read: Read, form: "per-row" | "array"): Promise<number> {
  const all = async () => {
    let rows = 0;
    for (let after = 0; after < ROWS; after += PAGE) {
      if (form === "per-row") rows += (await read(PER_ROW, after)).length;
      else {
        // As rowsAfter does: parsed, put in seq order, one object a row.
        const array = JSON.parse(String((await read(AS_ARRAY, after))[0].rows)) as number[][];
        rows += array.sort((a, b) => a[0] - b[0])
          .map(([seq, id, received_at, digest, kind, size]) => ({
            seq,
            id,
            received_at,
            digest,
            kind,
            size,
          })).length;
      }
    }
    return rows;
  };
  await all(); // warm-up
  const before = process.cpuUsage();
  let rows = 0;
  for (let round = 0; round < ROUNDS; round++) rows += await all();
  const used = process.cpuUsage(before);
  return (used.user + used.system) / rows;
}

const folder = await Deno.makeTempDir({ prefix: "beacon-readback-" });
const sqld = await startSqld({ directory: `${folder}/sqld` });
try {
  const file = new Driver(`${folder}/embedded.db`);
  file.exec(TABLE);
  file.prepare(FILL).run(ROWS);
  const embedded: Read = (sql, after) =>
    Promise.resolve(file.prepare(sql).all(after, PAGE) as Record<string, unknown>[]);
  const client = createClient({ url: sqld.url, intMode: "number" });
  await client.execute(TABLE);
  await client.execute({ sql: FILL, args: [ROWS] });
  const remote: Read = async (sql, after) =>
    (await client.execute({ sql, args: [after, PAGE] })).rows as unknown as Record<
      string,
      unknown
    >[];
  console.log(`${ROWS} rows in pages of ${PAGE}, ${ROUNDS} rounds; this process's CPU per row:`);
  for (const [name, read] of [["embedded", embedded], ["sqld", remote]] as const) {
    const perRow = await cpuPerRow(read, "per-row");
    const array = await cpuPerRow(read, "array");
    console.log(
      `${name.padEnd(8)}  a row per submission ${perRow.toFixed(2)} µs  ` +
        `one JSON array ${array.toFixed(2)} µs  (${(array / perRow).toFixed(2)}x)`,
    );
  }
  client.close();
  file.close();
} finally {
  await sqld.close();
  await Deno.remove(folder, { recursive: true });
}
