/**
 * Acknowledged means committed, under a foreign lock (docs/threat-model.md §6.17). Another
 * connection (a `sqlite3` shell, a backup, a second instance stalled mid-commit) holds the write
 * lock longer than the Beacon's busy budget: the blocked submission must get 503 and store nothing,
 * every later 202 must be visible at once to another connection and survive SIGKILL, and the server
 * must keep answering other requests while it waits for the lock.
 *
 * With `@libsql/client` 0.18 on the write path, the submissions after the 503 got receipts for
 * rows inside a transaction that was never committed; with its blocking busy handler the whole
 * server froze for the length of the wait.
 */
import Database from "libsql";
import { assert, assertEquals } from "../support/assert.ts";
import { startServer } from "../support/server.ts";

const SUBMIT = "/beacon/0.1/submissions";

async function submit(url: string, text: string): Promise<{ status: number; id?: string }> {
  const response = await fetch(url + SUBMIT, {
    method: "POST",
    headers: { "content-type": "text/plain; charset=utf-8" },
    body: text,
  });
  const body = await response.json();
  return { status: response.status, id: body.receipt?.id };
}

/** Whether a fresh connection (not the server's) sees the row: committed, not just inserted. */
function committedElsewhere(path: string, id: string): boolean {
  const reader = new Database(path);
  try {
    return reader.prepare("SELECT 1 FROM submissions WHERE id = ?").all(id).length === 1;
  } finally {
    reader.close();
  }
}

const VARIANTS: { name: string; env: Record<string, string> }[] = [
  { name: "writer thread off", env: { BEACON_WRITER_THREAD: "off" } },
  { name: "writer thread on", env: { BEACON_WRITER_THREAD: "on" } },
  // The shared limiter writes to the same database on every request, before the submission.
  {
    name: "rate limits in the database",
    env: { BEACON_RATE_LIMIT: "1000/1m", BEACON_RATE_LIMIT_STORE: "database" },
  },
];

for (const variant of VARIANTS) {
  Deno.test(`a foreign lock held past the busy budget: 503 for the blocked submission, then only committed receipts (${variant.name})`, async () => {
    const env = { BEACON_LOG: "off", ...variant.env };
    let server = await startServer({ env });
    const path = `${server.directory}/beacon.db`;
    const acknowledged: string[] = [];
    try {
      const first = await submit(server.url, "before the lock");
      assertEquals(first.status, 202);
      acknowledged.push(first.id!);

      const holder = new Database(path);
      // The server writes too (its tree heads): a foreign process waits its turn for the lock.
      holder.exec("PRAGMA busy_timeout = 10000");
      holder.exec("BEGIN EXCLUSIVE");
      let blockedSettled = false;
      const blocked = submit(server.url, "while locked").finally(() => blockedSettled = true);
      // The wait for the lock must not hold up other requests on the same server.
      const discovery = await fetch(server.url + "/.well-known/autonomous-agent");
      assertEquals(discovery.status, 200);
      await discovery.body?.cancel();
      assert(!blockedSettled, "a discovery request was answered only after the lock wait ended");
      assertEquals((await blocked).status, 503);
      holder.exec("COMMIT");
      holder.close();

      for (const text of ["after 1", "after 2", "after 3"]) {
        const later = await submit(server.url, text);
        assertEquals(later.status, 202);
        assert(committedElsewhere(path, later.id!), "a 202 for a row no other connection sees");
        acknowledged.push(later.id!);
      }

      assertEquals((await server.stop("SIGKILL")).success, false);
      server = await startServer({ env, directory: server.directory });
      const reader = new Database(path);
      const stored = reader.prepare("SELECT id FROM submissions ORDER BY seq").all() as {
        id: string;
      }[];
      reader.close();
      // Everything acknowledged is there, and nothing else: the blocked one stored nothing.
      assertEquals(stored.map((row) => row.id), acknowledged);
    } finally {
      await server.stop();
    }
  });
}
