/**
 * `review serve` over real HTTP, without a browser: the access token, the Host, Origin and CSRF
 * checks, the security headers on every answer, loopback only, and marks made through the
 * console's API appended as review events that `review list` shows.
 */
import { assert, assertEquals, assertMatch, assertStrictEquals } from "../support/assert.ts";
import { rawExchange, serveBeacon } from "../support/serve.ts";
import { review, startConsole } from "../support/review.ts";

const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; " +
  "img-src 'none'; font-src 'none'; media-src 'none'; object-src 'none'; frame-src 'none'; " +
  "base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

function assertHardened(response: Response, where: string): void {
  assertStrictEquals(response.headers.get("content-security-policy"), CSP, where);
  assertStrictEquals(response.headers.get("referrer-policy"), "no-referrer", where);
  assertStrictEquals(response.headers.get("x-content-type-options"), "nosniff", where);
  assertStrictEquals(response.headers.get("cache-control"), "no-store", where);
}

Deno.test("the console needs its token, a same-origin Origin and a page's CSRF token", async () => {
  const served = await serveBeacon();
  const submitted = await fetch(`${served.url}/beacon/0.1/submissions`, {
    method: "POST",
    headers: { "content-type": "text/plain; charset=utf-8" },
    body: "hello <b>reviewer</b>",
  });
  const id = String((await submitted.json()).receipt.id);
  const console = await startConsole(served.databaseUrl);
  try {
    // Without the token: 401 and nothing shown, on every route.
    for (const path of ["/", "/static/console.js", "/api/queue", `/api/item?id=${id}`, "/x"]) {
      const response = await fetch(console.origin + path);
      assertStrictEquals(response.status, 401, path);
      assertHardened(response, path);
      assertStrictEquals(await response.text(), "unauthorized");
    }
    const wrong = await fetch(`${console.origin}/?token=${"A".repeat(43)}`, { redirect: "manual" });
    assertStrictEquals(wrong.status, 401);
    await wrong.body?.cancel();
    // A foreign Host (DNS rebinding) is refused even with the token.
    const rebound = await rawExchange(console.origin, [
      `GET /?token=${console.token} HTTP/1.1\r\nHost: attacker.example\r\nConnection: close\r\n\r\n`,
    ]);
    assertStrictEquals(rebound.status, 401);

    // The token becomes an HttpOnly, SameSite=Strict cookie, and leaves the address bar.
    const entry = await fetch(console.url, { redirect: "manual" });
    assertStrictEquals(entry.status, 303);
    assertStrictEquals(entry.headers.get("location"), "/");
    const setCookie = entry.headers.get("set-cookie") ?? "";
    assertMatch(setCookie, /HttpOnly; SameSite=Strict; Path=\//);
    await entry.body?.cancel();
    const cookie = setCookie.split(";")[0];
    const page = await fetch(`${console.origin}/`, { headers: { cookie } });
    assertStrictEquals(page.status, 200);
    assertHardened(page, "page");
    const html = await page.text();
    assert(!html.includes(console.token), "the page never holds the access token");
    const csrf = /<meta name="csrf-token" content="([A-Za-z0-9_-]{43})">/.exec(html)![1];
    assertMatch(html, /<script type="module" src="\/static\/console\.js"><\/script>/);
    assert(!/<script>|\sstyle=|\son\w+=/.test(html), "no inline script, style or handler");
    for (const file of ["console.js", "console.css"]) {
      const response = await fetch(`${console.origin}/static/${file}`, { headers: { cookie } });
      assertStrictEquals(response.status, 200);
      assertHardened(response, file);
      const source = await response.text();
      assert(!source.includes("innerHTML"), `${file} never uses innerHTML`);
    }

    // A state change needs the Origin, a served page's CSRF token and JSON.
    const post = (headers: Record<string, string>, body: unknown = { id, status: "reviewed" }) =>
      fetch(`${console.origin}/api/event`, {
        method: "POST",
        headers: { cookie, "content-type": "application/json", ...headers },
        body: JSON.stringify(body),
      });
    for (
      const headers of <Record<string, string>[]> [
        { origin: console.origin },
        { "x-csrf-token": csrf },
        { origin: "http://evil.example", "x-csrf-token": csrf },
        { origin: console.origin, "x-csrf-token": "A".repeat(43) },
      ]
    ) {
      const response = await post(headers);
      assertStrictEquals(response.status, 403, JSON.stringify(headers));
      await response.body?.cancel();
    }
    const plain = await post({
      origin: console.origin,
      "x-csrf-token": csrf,
      "content-type": "text/plain",
    });
    assertStrictEquals(plain.status, 415);
    await plain.body?.cancel();
    const bad = await post({ origin: console.origin, "x-csrf-token": csrf }, {
      id,
      status: "nonsense",
    });
    assertStrictEquals(bad.status, 400);
    await bad.body?.cancel();
    const marked = await post({ origin: console.origin, "x-csrf-token": csrf });
    assertStrictEquals(marked.status, 200);
    assertHardened(marked, "event");
    assertEquals(await marked.json(), { seq: 1 });
    const noted = await post({ origin: console.origin, "x-csrf-token": csrf }, {
      id,
      note: "first note",
    });
    assertEquals(await noted.json(), { seq: 2 });
    const corrected = await post({ origin: console.origin, "x-csrf-token": csrf }, {
      id,
      note: "corrected note",
      supersedes: 2,
    });
    assertEquals(await corrected.json(), { seq: 3 });

    const listed = await review(served.databaseUrl, ["list", "--json"]);
    assertStrictEquals(JSON.parse(listed.stdout)[0].status, "reviewed");
    const shown = await review(served.databaseUrl, ["show", id, "--width", "200"]);
    assertMatch(shown.stdout, /#1 \S+ reviewed by browser reviewer$/m);
    assertMatch(
      shown.stdout,
      /#3 \S+ note by browser reviewer \(corrects the note of #2\): corrected note$/m,
    );
    const events = await served.query("SELECT seq, supersedes FROM review_events ORDER BY seq");
    assertEquals(events.map((row) => Number(row.supersedes ?? 0)), [0, 0, 2]);
  } finally {
    const { code } = await console.stop();
    assertStrictEquals(code, 0);
    await served.close();
  }
});

Deno.test("review serve binds to loopback only unless told otherwise", async () => {
  const served = await serveBeacon();
  try {
    const run = await review(served.databaseUrl, ["serve", "--hostname", "0.0.0.0"]);
    assertStrictEquals(run.code, 2);
    assertMatch(run.stderr, /Cannot serve on 0\.0\.0\.0: the console binds to 127\.0\.0\.1 only/);
  } finally {
    await served.close();
  }
});
