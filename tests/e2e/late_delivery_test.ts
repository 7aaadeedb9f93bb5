/**
 * A commit delivered after its deadline stores nothing (docs/protocol-0.1.md §9.1). The real
 * server talks to a real sqld through a proxy (tests/support/fault_proxy.ts) that holds the bytes
 * of a commit, lets the Beacon give up on it (`503 outcome_unknown`), and then delivers them. The
 * database itself refuses the late statement, so the status URL stays `404`, the row never
 * appears, and a client that retries without a key, as §9.1 allows, stores exactly one row.
 */
import { createClient } from "@libsql/client/web";
import { assertEquals, assertMatch } from "../support/assert.ts";
import { startFaultProxy } from "../support/fault_proxy.ts";
import { startSqld } from "../support/sqld.ts";
import { startServer } from "../support/server.ts";

const DEADLINE_MS = 1_000;
const TEXT = { "content-type": "text/plain; charset=utf-8" };

/** Rejects when `promise` has not settled within `ms` (a bound on a wait, not a measurement). */
function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

Deno.test("a commit the network delivers after its deadline stores nothing: 404 stays 404, and a retry without a key stores one row", async () => {
  const sqld = await startSqld();
  const proxy = startFaultProxy(sqld.port);
  const server = await startServer({
    env: {
      BEACON_DATABASE_URL: proxy.url,
      BEACON_DATABASE_TIMEOUT_MS: String(DEADLINE_MS),
      BEACON_LOG: "off",
    },
  });
  const db = createClient({ url: sqld.url });
  const submit = (body: string) =>
    fetch(`${server.url}/beacon/0.1/submissions`, { method: "POST", headers: TEXT, body });
  const rowsOf = async (content: string) =>
    (await db.execute({
      sql: "SELECT id FROM submissions WHERE content = ?",
      args: [new TextEncoder().encode(content)],
    })).rows.map((row) => String(row.id));
  try {
    const warm = await submit("before the hold");
    assertEquals(warm.status, 202);
    await warm.body?.cancel();

    proxy.hold();
    const late = "held by the network, delivered late";
    const answer = await within(submit(late), 10 * DEADLINE_MS, "the held submission's answer");
    assertEquals(answer.status, 503);
    const { error } = await answer.json();
    assertEquals(error.code, "outcome_unknown");
    assertMatch(error.status, new RegExp(`/beacon/0\\.1/submissions/${error.id}$`));

    // The held commit reaches sqld only now, after the Beacon answered; sqld answers it.
    const delivered = await within(proxy.deliver(), 10 * DEADLINE_MS, "the late delivery");
    assertEquals(delivered > 0, true, "the proxy held the commit's bytes");

    const status = await fetch(error.status);
    await status.body?.cancel();
    assertEquals(status.status, 404);
    assertEquals(await rowsOf(late), [], "the late commit stored nothing");
    const ids = (await db.execute("SELECT id FROM submissions")).rows.map((row) => row.id);
    assertEquals(ids.includes(error.id), false);
    const signatures = await db.execute(
      "SELECT count(*) AS n FROM receipt_signatures WHERE seq NOT IN (SELECT seq FROM submissions)",
    );
    assertEquals(signatures.rows[0].n, 0, "no signature without its row");

    // The client read 404 and retries without a key, as §9.1 allows: exactly one row.
    const retry = await submit(late);
    assertEquals(retry.status, 202);
    const { receipt } = await retry.json();
    assertEquals(await rowsOf(late), [receipt.id]);
    const again = await fetch(error.status);
    await again.body?.cancel();
    assertEquals(again.status, 404);
  } finally {
    db.close();
    await server.stop();
    await Deno.remove(server.directory, { recursive: true }).catch(() => {});
    await proxy.close();
    await sqld.close();
  }
});
