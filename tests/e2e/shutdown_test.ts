/**
 * Clean shutdown of the real server (`deno task start`'s entry): on SIGTERM under load, every
 * request the server took is answered, every receipt it sent is stored, the database is closed,
 * and the process exits 0 after one final `shutdown` log line whose count matches the rows.
 */
import { createClient } from "@libsql/client";
import { assert, assertEquals } from "../support/assert.ts";
import { startServer } from "../support/server.ts";

Deno.test("SIGTERM under load: answered requests stored, database closed, exit 0", async () => {
  const server = await startServer({ env: { BEACON_LOG: "off" } });
  try {
    const receipts: string[] = [];
    const statuses = new Map<number, number>();
    let stop = false;
    const client = async (worker: number) => {
      for (let i = 0; !stop; i++) {
        try {
          const response = await fetch(server.url + "/beacon/0.1/submissions", {
            method: "POST",
            headers: { "content-type": "text/plain; charset=utf-8" },
            body: `worker ${worker} message ${i}`,
          });
          statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
          if (response.status === 202) receipts.push((await response.json()).receipt.id);
          else await response.body?.cancel();
        } catch {
          return; // the listener is closed: the server no longer takes requests
        }
      }
    };
    const workers = Array.from({ length: 10 }, (_, i) => client(i));
    while (receipts.length < 100) await new Promise((resolve) => setTimeout(resolve, 5));
    const status = await server.stop("SIGTERM");
    stop = true;
    await Promise.all(workers);

    assertEquals(status.code, 0);
    const last = server.lines.at(-1);
    assertEquals(last?.event, "shutdown");
    for (const code of statuses.keys()) assert(code === 202 || code === 503, `status ${code}`);

    const db = createClient({ url: server.databaseUrl });
    const ids = new Set(
      (await db.execute("SELECT id FROM submissions")).rows.map((row) => String(row.id)),
    );
    const integrity = (await db.execute("PRAGMA integrity_check")).rows[0];
    db.close();
    assertEquals(Object.values(integrity), ["ok"]);
    for (const id of receipts) assert(ids.has(id), `receipt ${id} was not stored`);
  } finally {
    await Deno.remove(server.directory, { recursive: true });
  }
});
