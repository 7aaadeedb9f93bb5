/**
 * `GET /healthz` and `GET /readyz` (src/http/probe.ts) through real surfaces: the handler in
 * process on a real temporary database and on a real sqld that is stopped (`SIGSTOP`), killed
 * and brought back. Liveness is always `200 ok`; readiness is `200 ready`, or `503` with one
 * word: `database`, `schema`, `guard`, `closed`. Neither spends a rate budget.
 */
import { createClient } from "@libsql/client";
import { assertEquals } from "../support/assert.ts";
import { startSqld } from "../support/sqld.ts";
import { createBeacon } from "../../src/beacon.ts";

type Beacon = ReturnType<typeof createBeacon>;

/** The status and body of a probe. */
async function probe(
  beacon: Beacon,
  path: string,
  method = "GET",
): Promise<[number, string]> {
  const response = await beacon.fetch(new Request(`http://127.0.0.1${path}`, { method }), {
    remoteAddress: "192.0.2.7",
  });
  return [response.status, await response.text()];
}

async function submit(beacon: Beacon): Promise<number> {
  const response = await beacon.fetch(
    new Request("http://127.0.0.1/beacon/0.1/submissions", {
      method: "POST",
      headers: { "content-type": "text/plain; charset=utf-8" },
      body: "hello",
    }),
    { remoteAddress: "192.0.2.7" },
  );
  await response.body?.cancel();
  return response.status;
}

/** Polls `/readyz` (bounded: 60 s) until it answers `expected`. */
async function untilReady(beacon: Beacon, expected: [number, string]): Promise<void> {
  let last: [number, string] = [0, ""];
  for (let i = 0; i < 600; i++) {
    last = await probe(beacon, "/readyz");
    if (last[0] === expected[0] && last[1] === expected[1]) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`/readyz stayed ${JSON.stringify(last)}, expected ${JSON.stringify(expected)}`);
}

async function withFileBeacon(
  run: (beacon: Beacon, path: string) => Promise<void>,
  options: Parameters<typeof createBeacon>[0] = {},
): Promise<void> {
  const folder = await Deno.makeTempDir({ prefix: "beacon-probes-" });
  const beacon = createBeacon({ database: { url: `file:${folder}/beacon.db` }, ...options });
  try {
    await run(beacon, `${folder}/beacon.db`);
  } finally {
    await beacon.close();
    await Deno.remove(folder, { recursive: true });
  }
}

Deno.test("/healthz and /readyz answer 200 in plain text, HEAD too, and spend no rate budget", async () => {
  await withFileBeacon(async (beacon) => {
    await beacon.ready();
    for (let i = 0; i < 30; i++) {
      assertEquals(await probe(beacon, "/healthz"), [200, "ok\n"]);
      assertEquals(await probe(beacon, "/readyz"), [200, "ready\n"]);
    }
    assertEquals(await probe(beacon, "/readyz", "HEAD"), [200, ""]);
    assertEquals((await probe(beacon, "/readyz", "POST"))[0], 405);
    // Both budgets are one request a minute: the probes above spent neither.
    assertEquals(await submit(beacon), 202);
    const status = await probe(beacon, "/beacon/0.1/tree-head");
    assertEquals(status[0], 200);
    const response = await beacon.fetch(new Request("http://127.0.0.1/readyz"), {
      remoteAddress: "192.0.2.7",
    });
    assertEquals(response.headers.get("cache-control"), "no-store");
    assertEquals(response.headers.get("x-content-type-options"), "nosniff");
    await response.body?.cancel();
  }, { rateLimit: "1/1m", statusRateLimit: "1/1m" });
});

Deno.test("/readyz says guard once the database file was removed under the server; /healthz stays 200", async () => {
  await withFileBeacon(async (beacon, path) => {
    await beacon.ready();
    assertEquals(await probe(beacon, "/readyz"), [200, "ready\n"]);
    await Deno.remove(path);
    await untilReady(beacon, [503, "guard\n"]);
    assertEquals(await probe(beacon, "/healthz"), [200, "ok\n"]);
    assertEquals(await submit(beacon), 503);
  });
});

Deno.test("/readyz says schema when a newer release migrated the database, and closed after close()", async () => {
  await withFileBeacon(async (beacon, path) => {
    await beacon.ready();
    const other = createClient({ url: `file:${path}` });
    await other.execute(
      "INSERT INTO schema_migrations (version, name, applied_at) VALUES (9999, 'newer', '2030-01-01')",
    );
    other.close();
    assertEquals(await probe(beacon, "/readyz"), [503, "schema\n"]);
    await beacon.close();
    assertEquals(await probe(beacon, "/readyz"), [503, "closed\n"]);
    assertEquals(await probe(beacon, "/healthz"), [200, "ok\n"]);
  });
});

Deno.test("/readyz turns 503 database when sqld is stopped or killed, and 200 when it is back; /healthz stays 200", async () => {
  const sqld = await startSqld();
  await sqld.kill(); // down before the first request: the Beacon cannot open
  const beacon = createBeacon({ database: { url: sqld.url, timeoutMs: 30_000 } });
  try {
    assertEquals(await probe(beacon, "/readyz"), [503, "database\n"]);
    assertEquals(await probe(beacon, "/healthz"), [200, "ok\n"]);
    await sqld.restart();
    await untilReady(beacon, [200, "ready\n"]); // the probes themselves opened it
    assertEquals(await submit(beacon), 202);

    await sqld.pause(); // SIGSTOP: connections hang, nothing is refused
    assertEquals(await probe(beacon, "/readyz"), [503, "database\n"], "within its own deadline");
    assertEquals(await probe(beacon, "/healthz"), [200, "ok\n"]);
    sqld.resume();
    await untilReady(beacon, [200, "ready\n"]);

    await sqld.kill();
    await untilReady(beacon, [503, "database\n"]);
    await sqld.restart();
    await untilReady(beacon, [200, "ready\n"]);
    assertEquals(await submit(beacon), 202);
  } finally {
    sqld.resume();
    await beacon.close();
    await sqld.close();
  }
});
