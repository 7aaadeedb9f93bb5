/**
 * A commit the database ran and then died before answering is never answered "nothing stored".
 * A real sqld behind a real proxy that forwards the commit, drops sqld's answer and goes down at
 * that moment (its port then refuses connections): the Beacon cannot know whether the row is
 * stored, so it must answer `503 outcome_unknown` with the receipt id, and the row is there.
 * Deno's `fetch` resends a request whose connection closed before an answer; its retry meets the
 * refused port, which once made the Beacon answer `503 unavailable` ("nothing stored") for a
 * stored row: on Deno a refusal proves nothing on a client that already had answers
 * (src/store/connection/remote/droppable_client.ts). Run on Deno, Node and Bun.
 */
import { createClient } from "@libsql/client";
import { startRuntime } from "../../scripts/runtimes.ts";
import { assertEquals, assertStrictEquals } from "../support/assert.ts";
import { startFaultProxy } from "../support/fault_proxy.ts";
import { startServer } from "../support/server.ts";
import { startSqld } from "../support/sqld.ts";

const SEED = "nWGxne_9WmC6hEr0kuwsxERJxWl7MmkZcDusAxyuf2A";

/** The native answer's error, where it has one. */
interface Answer {
  error?: { code?: string; id?: string };
}

async function submit(url: string, text: string): Promise<{ status: number; body: Answer }> {
  const response = await fetch(url + "/beacon/0.1/submissions", {
    method: "POST",
    headers: { "content-type": "text/plain; charset=utf-8" },
    body: text,
  });
  return { status: response.status, body: await response.json() };
}

async function stored(databaseUrl: string, id: string): Promise<boolean> {
  const client = createClient({ url: databaseUrl });
  try {
    const rows =
      (await client.execute({ sql: "SELECT 1 FROM submissions WHERE id = ?", args: [id] }))
        .rows;
    return rows.length === 1;
  } finally {
    client.close();
  }
}

const ENV = {
  BEACON_SIGNING_KEY: SEED,
  BEACON_CHECKPOINT_INTERVAL: "off", // nothing but the commit talks to the database
  BEACON_LOG: "off",
  BEACON_RATE_LIMIT: "off",
  BEACON_STATUS_RATE_LIMIT: "off",
};

for (const runtime of ["deno", "node", "bun"] as const) {
  Deno.test(`${runtime}: a commit the database ran before it died is answered outcome_unknown, never "nothing stored"`, async () => {
    const sqld = await startSqld();
    const proxy = startFaultProxy(sqld.port);
    const env = { ...ENV, BEACON_DATABASE_URL: proxy.url };
    const server = runtime === "deno"
      ? await startServer({ env })
      : await startRuntime(runtime, { PORT: "0", BEACON_HOSTNAME: "127.0.0.1", ...env });
    try {
      // A first submission: the connection to the database is open and pooled.
      assertStrictEquals((await submit(server.url, "before")).status, 202);
      proxy.dieOnNextAnswer();
      const { status, body } = await submit(server.url, "ran, then the database died");
      await proxy.died();
      assertStrictEquals(status, 503, JSON.stringify(body));
      assertStrictEquals(body.error?.code, "outcome_unknown", JSON.stringify(body));
      // The truth the answer left open: the commit was applied.
      assertEquals(await stored(sqld.url, body.error?.id ?? ""), true, "the row is stored");
    } finally {
      await server.stop("SIGTERM");
      if ("directory" in server) {
        await Deno.remove((server as { directory: string }).directory, { recursive: true })
          .catch(() => {});
      }
      await proxy.close();
      await sqld.close();
    }
  });
}
