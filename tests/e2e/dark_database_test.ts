/**
 * Every answer stays true when the remote database goes dark or stalls (docs/threat-model.md
 * §6.17; docs/deploy.md, "The database connection: deadlines, dark sockets, and what the answers
 * mean"), through the real server entries (Deno, Node, Bun) against a real sqld:
 *
 * - **Black hole**: a proxy (tests/support/black_hole_proxy.ts) stops forwarding on every
 *   connection open at one moment, while new connections work and sqld is healthy. The server
 *   must accept submissions again after at most one abandoned call per dark connection
 *   (otherwise every later batch would queue behind the stuck commit for as long as the socket
 *   lived).
 * - **SIGSTOP past the deadline, under load**: sqld frozen longer than the database deadline,
 *   then continued. Every `503 unavailable` (nothing was stored) must be absent from the
 *   database afterwards, every 202 present, and every `503 outcome_unknown` must carry the
 *   receipt id whose status URL then tells the truth (404 when it is not stored, 200 when it is).
 *
 * No timing is asserted: the bounds are counts (failed answers per dark connection) and truths
 * (what each answer claimed against what the database holds).
 */
import { createClient } from "@libsql/client/web";
import { assert, assertEquals } from "../support/assert.ts";
import { startBlackHoleProxy } from "../support/black_hole_proxy.ts";
import { type Sqld, startSqld } from "../support/sqld.ts";
import { startServer } from "../support/server.ts";
import { type RunningServer, startRuntime } from "../../scripts/runtimes.ts";

const TEXT = { "content-type": "text/plain; charset=utf-8" };
const ENTRIES = ["deno", "node", "bun"] as const;
/** Short, so the tests run in seconds; the default is 10 s. */
const DEADLINE_MS = "1000";

/** One answer, with the text that was sent. */
interface Answer {
  readonly text: string;
  readonly status: number;
  readonly code?: string;
  readonly id?: string;
  readonly statusUrl?: string;
}

async function submit(url: string, text: string): Promise<Answer> {
  const response = await fetch(`${url}/beacon/0.1/submissions`, {
    method: "POST",
    headers: TEXT,
    body: text,
  });
  const body = await response.json();
  if (response.status === 202) {
    return { text, status: 202, id: body.receipt.id, statusUrl: body.receipt.status };
  }
  return {
    text,
    status: response.status,
    code: body.error.code,
    id: body.error.id,
    statusUrl: body.error.status,
  };
}

async function start(entry: typeof ENTRIES[number], databaseUrl: string) {
  const env = {
    PORT: "0",
    BEACON_HOSTNAME: "127.0.0.1",
    BEACON_DATABASE_URL: databaseUrl,
    BEACON_DATABASE_TIMEOUT_MS: DEADLINE_MS,
    BEACON_RATE_LIMIT: "off",
    BEACON_STATUS_RATE_LIMIT: "off",
    BEACON_LOG: "off",
  };
  if (entry === "deno") {
    const server = await startServer({ env });
    return {
      url: server.url,
      stop: async () => {
        await server.stop();
        await Deno.remove(server.directory, { recursive: true }).catch(() => {});
      },
    };
  }
  const server: RunningServer = await startRuntime(entry, env);
  return { url: server.url, stop: async () => void await server.stop() };
}

/** Every stored content, read on a connection of the test's own, straight to sqld. */
async function stored(sqld: Sqld): Promise<Map<string, string>> {
  const db = createClient({ url: sqld.url });
  try {
    const rows = (await db.execute("SELECT id, content FROM submissions")).rows;
    return new Map(
      rows.map((row) => [new TextDecoder().decode(row.content as ArrayBuffer), String(row.id)]),
    );
  } finally {
    db.close();
  }
}

/** Checks each answer against what sqld holds, and each unknown outcome against its status URL. */
async function assertTruthful(answers: readonly Answer[], sqld: Sqld, url: string) {
  const rows = await stored(sqld);
  for (const answer of answers) {
    if (answer.status === 202) {
      assertEquals(rows.get(answer.text), answer.id, `202 for "${answer.text}" is stored`);
    } else if (answer.code === "unavailable") {
      assert(!rows.has(answer.text), `"nothing was stored" for "${answer.text}", yet it is`);
    } else {
      assertEquals([answer.status, answer.code], [503, "outcome_unknown"]);
      assert(answer.id !== undefined && answer.statusUrl !== undefined, "id and status URL");
      assertEquals(answer.statusUrl, `${url}/beacon/0.1/submissions/${answer.id}`);
      // A read may itself land on a dark connection once (503, retry): it is abandoned with it.
      let status = await fetch(answer.statusUrl);
      for (let retry = 0; status.status === 503 && retry < 5; retry++) {
        await status.body?.cancel();
        status = await fetch(answer.statusUrl);
      }
      await status.body?.cancel();
      const isStored = rows.has(answer.text);
      if (isStored) assertEquals(rows.get(answer.text), answer.id, "stored under the named id");
      assertEquals(status.status, isStored ? 200 : 404, `status of "${answer.text}"`);
    }
  }
}

for (const entry of ENTRIES) {
  Deno.test(`${entry}: a black-holed connection to sqld holds at most one call; submissions are accepted again and every answer is true`, async () => {
    const sqld = await startSqld();
    const proxy = startBlackHoleProxy(sqld.port);
    const server = await start(entry, proxy.url);
    const answers: Answer[] = [];
    try {
      // Warm up with concurrent submissions and reads, so the runtime pools several connections.
      const warm = await Promise.all(
        Array.from({ length: 8 }, (_, i) => submit(server.url, `warm ${i}`)),
      );
      assertEquals(warm.map((answer) => answer.status), Array(8).fill(202));
      answers.push(...warm);
      await Promise.all(warm.map((answer) => fetch(answer.statusUrl!).then((r) => r.text())));

      // Submissions in flight while the connections go dark.
      const inFlight = Array.from({ length: 4 }, (_, i) => submit(server.url, `in flight ${i}`));
      await new Promise((resolve) => setTimeout(resolve, 20));
      const dark = proxy.blackHole();
      assert(dark > 0, "connections went dark");
      answers.push(...await Promise.all(inFlight));

      // One at a time until one is accepted: each failure abandons one dark connection at most.
      let failures = 0;
      for (let i = 0; failures <= dark; i++) {
        const answer = await submit(server.url, `after the black hole ${i}`);
        answers.push(answer);
        if (answer.status === 202) break;
        failures++;
      }
      assert(failures <= dark, `${failures} failures for ${dark} dark connections`);
      assertEquals(answers.at(-1)!.status, 202, "accepted again");
      // And it stays accepted.
      for (let i = 0; i < 5; i++) {
        const answer = await submit(server.url, `steady ${i}`);
        answers.push(answer);
        assertEquals(answer.status, 202);
      }
      await assertTruthful(answers, sqld, server.url);
      console.log(
        `${entry}: ${dark} dark connections, ${failures} failed before the first 202;`,
        answers.filter((answer) => answer.status !== 202).map((a) => `${a.text}: ${a.code}`),
      );
    } finally {
      await server.stop();
      await proxy.close();
      await sqld.close();
    }
  });

  Deno.test(`${entry}: sqld stopped (SIGSTOP) past the deadline under load: no "nothing was stored" 503 for a stored row`, async () => {
    const sqld = await startSqld();
    const server = await start(entry, sqld.url);
    const answers: Answer[] = [];
    try {
      answers.push(await submit(server.url, "before the stop"));
      assertEquals(answers[0].status, 202);
      await sqld.pause();
      // A steady load while sqld is frozen: some commits are sent, more queue behind them.
      const load: Promise<Answer>[] = [];
      for (let wave = 0; wave < 6; wave++) {
        for (let i = 0; i < 4; i++) load.push(submit(server.url, `stopped ${wave}.${i}`));
        await new Promise((resolve) => setTimeout(resolve, 300));
      }
      const during = await Promise.all(load);
      answers.push(...during);
      assert(during.every((answer) => answer.status === 503), "nothing acknowledged while stopped");
      sqld.resume();
      // Whatever was sent reaches sqld now; a submission after it is committed behind it.
      const after = await submit(server.url, "after the stop");
      answers.push(after);
      assertEquals(after.status, 202);
      await assertTruthful(answers, sqld, server.url);
      const codes = new Set(during.map((answer) => answer.code));
      assert(codes.has("outcome_unknown"), "a commit in flight at the stop has an unknown outcome");
    } finally {
      sqld.resume();
      await server.stop();
      await sqld.close();
    }
  });
}
