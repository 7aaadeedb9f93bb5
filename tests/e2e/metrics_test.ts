/**
 * `GET /metrics` (src/metrics/): off without `BEACON_METRICS_TOKEN` (404), 401 without the right
 * bearer token, and with it a page Prometheus's own checker accepts (`promtool check metrics`,
 * Debian's `prometheus` package, installed by .ci/run). The counters move by exactly what the
 * test sent: through the real server on a temporary database, and in process on a real sqld that
 * is stopped past its deadline (outcome unknown) and killed (database errors by cause).
 */
import { assert, assertEquals, assertStrictEquals } from "../support/assert.ts";
import { startServer } from "../support/server.ts";
import { startSqld } from "../support/sqld.ts";
import { createBeacon } from "../../src/beacon.ts";

const TOKEN = "metrics-test-token-0123456789abcdef";
const TEXT = { "content-type": "text/plain; charset=utf-8" };

/** `name{labels}` → value, from a text exposition (comments skipped). */
function parse(page: string): Map<string, number> {
  const series = new Map<string, number>();
  for (const line of page.split("\n")) {
    if (line === "" || line.startsWith("#")) continue;
    const space = line.lastIndexOf(" ");
    series.set(line.slice(0, space), Number(line.slice(space + 1)));
  }
  return series;
}

/** The in-process Beacon's metrics page with the token, parsed. */
async function scrape(beacon: ReturnType<typeof createBeacon>): Promise<Map<string, number>> {
  const response = await beacon.fetch(
    new Request("http://127.0.0.1/metrics", { headers: { authorization: `Bearer ${TOKEN}` } }),
    { remoteAddress: "192.0.2.1" },
  );
  assertStrictEquals(response.status, 200);
  return parse(await response.text());
}

/** How much each series moved between two pages (series absent before count from 0). */
function moved(before: Map<string, number>, after: Map<string, number>): Map<string, number> {
  const delta = new Map<string, number>();
  for (const [name, value] of after) {
    const change = value - (before.get(name) ?? 0);
    if (change !== 0) delta.set(name, change);
  }
  return delta;
}

const promtool = await new Deno.Command("promtool", { args: ["--version"], stdout: "null" })
  .output().then((output) => output.success, () => false);

/** `promtool check metrics` on `page`: its exit status and what it said. */
async function promtoolCheck(page: string): Promise<{ ok: boolean; said: string }> {
  const child = new Deno.Command("promtool", {
    args: ["check", "metrics"],
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const writer = child.stdin.getWriter();
  await writer.write(new TextEncoder().encode(page));
  await writer.close();
  const output = await child.output();
  const said = new TextDecoder().decode(output.stdout) + new TextDecoder().decode(output.stderr);
  return { ok: output.success, said };
}

Deno.test("without BEACON_METRICS_TOKEN there is no /metrics", async () => {
  const beacon = createBeacon({ database: { url: ":memory:" } });
  try {
    const response = await beacon.fetch(new Request("http://127.0.0.1/metrics"), {
      remoteAddress: "192.0.2.1",
    });
    await response.body?.cancel();
    assertStrictEquals(response.status, 404);
  } finally {
    await beacon.close();
  }
});

Deno.test({
  name:
    "the real server's /metrics: 401 without the token, promtool accepts the page, counters move exactly",
  async fn() {
    // A missing checker fails the test (CI installs it): a skipped check proves nothing.
    assert(promtool, "promtool is missing: apt-get install prometheus (.ci/run does)");
    const server = await startServer({
      env: { BEACON_METRICS_TOKEN: TOKEN, BEACON_RATE_LIMIT: "5/1h", BEACON_LOG: "off" },
    });
    const scrape = async (authorization?: string) => {
      const response = await fetch(`${server.url}/metrics`, {
        headers: authorization === undefined ? {} : { authorization },
      });
      return { status: response.status, response, text: await response.text() };
    };
    const submit = async (init: RequestInit) => {
      const response = await fetch(`${server.url}/beacon/0.1/submissions`, {
        method: "POST",
        ...init,
      });
      await response.body?.cancel();
      return response.status;
    };
    const a2a = async (id: number) => {
      const response = await fetch(`${server.url}/a2a/v1`, {
        method: "POST",
        headers: { "content-type": "application/json", "a2a-version": "1.0" },
        body: JSON.stringify({
          jsonrpc: "2.0",
          id,
          method: "SendMessage",
          params: { message: { messageId: `m-${id}`, role: "ROLE_USER", parts: [{ text: "hi" }] } },
        }),
      });
      await response.body?.cancel();
      return response.status;
    };
    try {
      const missing = await scrape();
      assertStrictEquals(missing.status, 401);
      assertStrictEquals(
        missing.response.headers.get("www-authenticate"),
        'Bearer realm="metrics"',
      );
      assertStrictEquals((await scrape(`Bearer ${TOKEN}x`)).status, 401);
      assertStrictEquals((await scrape(`Basic ${TOKEN}`)).status, 401);

      const first = await scrape(`Bearer ${TOKEN}`);
      assertStrictEquals(first.status, 200);
      assertStrictEquals(
        first.response.headers.get("content-type"),
        "text/plain; version=0.0.4; charset=utf-8",
      );
      const before = parse(first.text);

      // Two native and one A2A submission and two wrong media types (415) spend the budget of
      // five; then the budget refuses one of each surface (429).
      assertStrictEquals(await submit({ headers: TEXT, body: "one" }), 202);
      assertStrictEquals(await submit({ headers: TEXT, body: "two" }), 202);
      assertStrictEquals(await a2a(1), 200);
      assertStrictEquals(
        await submit({ headers: { "content-type": "image/png" }, body: "x" }),
        415,
      );
      assertStrictEquals(
        await submit({ headers: { "content-type": "image/png" }, body: "x" }),
        415,
      );
      assertStrictEquals(await submit({ headers: TEXT, body: "three" }), 429);
      assertStrictEquals(await a2a(2), 429);

      const last = await scrape(`Bearer ${TOKEN}`);
      const check = await promtoolCheck(last.text);
      assert(check.ok, `promtool check metrics: ${check.said}\n${last.text}`);
      const delta = moved(before, parse(last.text));
      assertStrictEquals(delta.get('beacon_submissions_accepted_total{surface="native"}'), 2);
      assertStrictEquals(delta.get('beacon_submissions_accepted_total{surface="a2a"}'), 1);
      assertStrictEquals(
        delta.get(
          'beacon_requests_refused_total{route="native.submit",code="unsupported_media_type"}',
        ),
        2,
      );
      assertStrictEquals(
        delta.get('beacon_requests_refused_total{route="native.submit",code="rate_limited"}'),
        1,
      );
      assertStrictEquals(
        delta.get('beacon_requests_refused_total{route="a2a",code="rate_limited"}'),
        1,
      );
      assertStrictEquals(delta.get("beacon_commit_rows_sum"), 3, "three rows committed");
      const commits = delta.get("beacon_commit_duration_seconds_count") ?? 0;
      assert(commits >= 1 && commits <= 3, `one to three commits: ${commits}`);
      assertStrictEquals(delta.get("beacon_commit_rows_count"), commits);
      assertStrictEquals(delta.get("beacon_outcome_unknown_total"), undefined);
      assertStrictEquals(parse(last.text).get('beacon_file_guard_state{state="guarding"}'), 1);
      assertStrictEquals(parse(last.text).get('beacon_file_guard_state{state="tripped"}'), 0);
      // The scrapes themselves: the three 401s, counted as refusals of the metrics route.
      assertStrictEquals(
        parse(last.text).get('beacon_requests_refused_total{route="metrics",code="unauthorized"}'),
        3,
      );
    } finally {
      await server.stop();
      await Deno.remove(server.directory, { recursive: true }).catch(() => {});
    }
  },
});

Deno.test("on sqld: outcome_unknown and database errors by cause count exactly what was answered, and /metrics answers while the database is down", async () => {
  const sqld = await startSqld();
  const beacon = createBeacon({
    database: { url: sqld.url, timeoutMs: 1_000 },
    rateLimit: "off",
    checkpointIntervalMs: "off", // no signer in the background to report errors of its own
    metricsToken: TOKEN,
  });
  const page = () => scrape(beacon);
  const submit = async (body: string) => {
    const response = await beacon.fetch(
      new Request("http://127.0.0.1/beacon/0.1/submissions", {
        method: "POST",
        headers: TEXT,
        body,
      }),
      { remoteAddress: "192.0.2.1" },
    );
    return [response.status, await response.json()] as const;
  };
  try {
    assertStrictEquals((await submit("warm up"))[0], 202);
    const before = await page();
    assertStrictEquals(before.get('beacon_file_guard_state{state="guarding"}'), undefined);

    await sqld.pause(); // past the 1 s deadline: the commit was sent, its outcome is unknown
    const [status, body] = await submit("while stopped");
    sqld.resume();
    assertStrictEquals(status, 503);
    assertStrictEquals(body.error.code, "outcome_unknown");

    await sqld.kill();
    for (let i = 0; i < 3; i++) {
      const [refused, answer] = await submit(`down ${i}`);
      assertStrictEquals(refused, 503);
      assertStrictEquals(answer.error.code, "unavailable");
    }
    const after = await page(); // served while the database is down
    const delta = moved(before, after);
    assertStrictEquals(delta.get("beacon_outcome_unknown_total"), 1);
    assertStrictEquals(
      delta.get('beacon_requests_refused_total{route="native.submit",code="outcome_unknown"}'),
      1,
    );
    assertStrictEquals(
      delta.get('beacon_requests_refused_total{route="native.submit",code="unavailable"}'),
      3,
    );
    assertStrictEquals(delta.get('beacon_database_errors_total{cause="refused"}'), 3);
    assertStrictEquals(delta.get('beacon_database_errors_total{cause="no_answer"}'), 1);
    assertEquals(
      [...delta.keys()].filter((name) => name.startsWith("beacon_database_errors_total")).sort(),
      [
        'beacon_database_errors_total{cause="no_answer"}',
        'beacon_database_errors_total{cause="refused"}',
      ],
    );
  } finally {
    sqld.resume();
    await beacon.close();
    await sqld.close();
  }
});

Deno.test("/metrics answers while the database never opened, and still asks for the token", async () => {
  const closed = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = closed.addr.port;
  closed.close(); // nothing listens there
  const beacon = createBeacon({
    database: { url: `http://127.0.0.1:${port}` },
    metricsToken: TOKEN,
  });
  const get = (authorization?: string) =>
    beacon.fetch(
      new Request("http://127.0.0.1/metrics", {
        headers: authorization === undefined ? {} : { authorization },
      }),
      { remoteAddress: "192.0.2.1" },
    );
  try {
    const refused = await get();
    await refused.body?.cancel();
    assertStrictEquals(refused.status, 401);
    const page = await get(`Bearer ${TOKEN}`);
    assertStrictEquals(page.status, 200);
    const series = parse(await page.text());
    assertStrictEquals(
      series.get('beacon_requests_refused_total{route="metrics",code="unauthorized"}'),
      1,
    );
    assertStrictEquals(series.get("beacon_outcome_unknown_total"), 0);
  } finally {
    // An open still failing in the background makes close() reject: nothing was opened.
    await beacon.close().catch(() => {});
  }
});

Deno.test("beacon_log_uncovered_seconds: how long the oldest acknowledged submission has waited for a checkpoint, 0 once one covers it", async () => {
  let clock = Date.parse("2026-12-07T12:00:00.000Z");
  // Heads only at the start and when asked: the test moves the clock, not time.
  const beacon = createBeacon({
    database: { url: ":memory:" },
    rateLimit: "off",
    metricsToken: TOKEN,
    checkpointIntervalMs: 3_600_000,
    now: () => clock,
  });
  const page = () => scrape(beacon);
  try {
    await beacon.ready();
    await beacon.signLog();
    assertStrictEquals((await page()).get("beacon_log_uncovered_seconds"), 0);
    const response = await beacon.fetch(
      new Request("http://127.0.0.1/beacon/0.1/submissions", {
        method: "POST",
        headers: TEXT,
        body: "waiting for a checkpoint",
      }),
      { remoteAddress: "192.0.2.1" },
    );
    assertStrictEquals(response.status, 202);
    clock += 42_000;
    assertStrictEquals((await page()).get("beacon_log_uncovered_seconds"), 42);
    await beacon.signLog();
    assertStrictEquals((await page()).get("beacon_log_uncovered_seconds"), 0);
  } finally {
    await beacon.close();
  }
});
