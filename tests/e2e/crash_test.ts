/**
 * Durability: receipts are only sent after the commit, so SIGKILLing the server right after
 * receipts came back must lose none of them. The server is the real `deno task start` entry in a
 * child process with a real database file; after the kill a new server starts on the same file.
 */
import { createClient } from "@libsql/client";
import { sha256 } from "../support/digest.ts";
import { assert, assertEquals } from "../support/assert.ts";
import { startServer } from "../support/server.ts";

for (const writerThread of ["off", "on"]) {
  Deno.test(`every receipt returned before a SIGKILL is in the database after restart (writer thread ${writerThread})`, async () => {
    const env = { BEACON_LOG: "off", BEACON_WRITER_THREAD: writerThread };
    const server = await startServer({ env });
    const receipts = new Map<string, string>(); // id → digest the client computed itself
    let stop = false;
    const client = async (worker: number) => {
      for (let i = 0; !stop; i++) {
        const body = new TextEncoder().encode(
          `worker ${worker} message ${i} ${crypto.randomUUID()}`,
        );
        try {
          const response = await fetch(server.url + "/beacon/0.1/submissions", {
            method: "POST",
            headers: { "content-type": "text/plain; charset=utf-8" },
            body,
          });
          if (response.status !== 202) {
            await response.body?.cancel();
            continue;
          }
          const { receipt } = await response.json();
          assertEquals(receipt.digest, await sha256(body));
          receipts.set(receipt.id, receipt.digest);
        } catch {
          return; // the server is gone
        }
      }
    };
    const workers = Array.from({ length: 20 }, (_, i) => client(i));
    while (receipts.size < 300) await new Promise((resolve) => setTimeout(resolve, 10));
    const killed = await server.stop("SIGKILL");
    stop = true;
    await Promise.all(workers);
    assertEquals(killed.signal, "SIGKILL");

    const restarted = await startServer({ directory: server.directory, env });
    try {
      for (const [id, digest] of receipts) {
        const response = await fetch(`${restarted.url}/beacon/0.1/submissions/${id}`);
        assertEquals(response.status, 200, `receipt ${id} lost`);
        await response.body?.cancel();
        assert(digest.startsWith("sha256:"));
      }
      const db = createClient({ url: server.databaseUrl });
      const rows = (await db.execute("SELECT id, content, digest FROM submissions")).rows;
      const stored = new Map(rows.map((row) => [String(row.id), row]));
      for (const [id, digest] of receipts) assertEquals(stored.get(id)?.digest, digest);
      for (const row of rows) {
        // No partial row: every stored row's bytes match its digest.
        assertEquals(await sha256(new Uint8Array(row.content as ArrayBuffer)), row.digest);
      }
      console.log(`receipts before kill: ${receipts.size}, rows after restart: ${rows.length}`);
      db.close();
    } finally {
      await restarted.stop();
      await Deno.remove(server.directory, { recursive: true });
    }
  });
}
