/**
 * The durable insert alone, through the real commit path (`EmbeddedConnection.commit`, the rows
 * of `src/store/rows.ts`, the migrations of `src/store/migrations.ts`, WAL and
 * `synchronous=FULL`): groups of 25 rows of 600 bytes, as the bench's group commit makes them,
 * each row with a unique A2A-style idempotency key (a hex digest, a space, a message id) and the
 * key check on, into a fresh database, then the same without keys. Reports process CPU (user +
 * system, all threads) and wall time per row, for the whole run and for each tenth of it (an
 * index whose pages outgrow SQLite's page cache makes later rows dearer). Run it in two checkouts
 * to compare their indexes: `deno run -A bench/insert_bench.ts [rows] [keyed|both]`.
 *
 * @module
 */
import process from "node:process";
import { EmbeddedConnection } from "../src/store/embedded.ts";
import { openClient } from "../src/store/client.ts";
import { migrate } from "../src/store/migrations.ts";
import { type NewSubmission, pendingRow } from "../src/store/rows.ts";
import { hex } from "../src/bytes.ts";
import { newContextId, newReceiptId } from "../src/ids.ts";

const ROWS = Number(Deno.args[0] ?? 30_000);
const GROUP = 25;
const randomBytes = (length: number) => crypto.getRandomValues(new Uint8Array(length));
const content = new TextEncoder().encode("x".repeat(600));

async function run(keyed: boolean): Promise<{ cpu: number; wall: number; tenths: number[] }> {
  const directory = await Deno.makeTempDir({ prefix: "beacon-insert-bench-" });
  const url = `file:${directory}/bench.db`;
  const client = await openClient({ url });
  await migrate(client);
  client.close();
  const connection = await EmbeddedConnection.open(url);
  const since = new Date(Date.now() - 3_600_000).toISOString();
  const sourceHash = hex(randomBytes(16));
  const cpuBefore = process.cpuUsage();
  const wallBefore = performance.now();
  const tenths: number[] = [];
  let tenthStart = process.cpuUsage();
  for (let done = 0; done < ROWS; done += GROUP) {
    if (done > 0 && done % (ROWS / 10) === 0) {
      const spent = process.cpuUsage(tenthStart);
      tenths.push((spent.user + spent.system) / (ROWS / 10));
      tenthStart = process.cpuUsage();
    }
    const rows = [];
    for (let i = 0; i < GROUP; i++) {
      const now = Date.now();
      const submission: NewSubmission = {
        id: newReceiptId(now, randomBytes),
        contextId: newContextId(randomBytes),
        receivedAt: new Date(now).toISOString(),
        surface: "a2a",
        kind: "unstructured",
        contentType: "application/json",
        content,
        digest: "sha256:" + hex(randomBytes(32)),
        sourceHash,
        idempotencyKey: keyed ? `a2a:${hex(randomBytes(32))} bench-${done + i}` : undefined,
      };
      rows.push(pendingRow(submission, keyed ? since : undefined));
    }
    await connection.commit(rows);
  }
  const last = process.cpuUsage(tenthStart);
  tenths.push((last.user + last.system) / (ROWS / 10));
  const cpu = process.cpuUsage(cpuBefore);
  const wall = performance.now() - wallBefore;
  connection.close();
  await Deno.remove(directory, { recursive: true });
  return { cpu: (cpu.user + cpu.system) / ROWS, wall: (wall * 1000) / ROWS, tenths };
}

const modes = Deno.args[1] === "keyed" ? [true, true] : [true, false, true, false];
for (const keyed of modes) {
  const { cpu, wall, tenths } = await run(keyed);
  console.log(
    `${keyed ? "with keys   " : "without keys"}  ${ROWS} rows in groups of ${GROUP}: ` +
      `CPU ${cpu.toFixed(1)} µs/row, wall ${wall.toFixed(1)} µs/row; ` +
      `CPU by tenth ${tenths.map((value) => value.toFixed(0)).join(" ")}`,
  );
}
