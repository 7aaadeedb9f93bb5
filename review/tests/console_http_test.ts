/**
 * `review serve` over real HTTP, without a browser: the access token, the Host, Origin and CSRF
 * checks, the security headers on every answer, loopback only, and marks made through the
 * console's API appended as review events that `review list` shows.
 */
import {
  assert,
  assertEquals,
  assertMatch,
  assertStrictEquals,
} from "../../tests/support/assert.ts";
import { rawExchange, serveBeacon } from "../../tests/support/in_process.ts";
import { consoleCsrf, exchangeCode, review, startConsole } from "./support.ts";
import { STATIC_FILES } from "../console/app.ts";

const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; " +
  "img-src 'none'; font-src 'none'; media-src 'none'; object-src 'none'; frame-src 'none'; " +
  "base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

function assertHardened(response: Response, where: string): void {
  assertStrictEquals(response.headers.get("content-security-policy"), CSP, where);
  assertStrictEquals(response.headers.get("referrer-policy"), "no-referrer", where);
  assertStrictEquals(response.headers.get("x-content-type-options"), "nosniff", where);
  assertStrictEquals(response.headers.get("cache-control"), "no-store", where);
}

Deno.test("the console needs its session, a same-origin Origin and the session's CSRF token", async () => {
  const served = await serveBeacon();
  const submitted = await fetch(`${served.url}/beacon/0.1/submissions`, {
    method: "POST",
    headers: { "content-type": "text/plain; charset=utf-8" },
    body: "hello <b>reviewer</b>",
  });
  const id = String((await submitted.json()).receipt.id);
  const console = await startConsole(served.databaseUrl);
  try {
    // The printed URL carries a one-time code in the fragment, which is never sent to a server.
    assertStrictEquals(new URL(console.url).hash, `#code=${console.code}`);
    // The code is no credential for the API itself.
    const withCode = await fetch(`${console.origin}/api/queue`, {
      headers: { authorization: `Bearer ${console.code}` },
    });
    assertStrictEquals(withCode.status, 401);
    await withCode.body?.cancel();
    const token = await console.session();
    const auth = { authorization: `Bearer ${token}` };
    // Spent: a second exchange of the same code gives nothing.
    const again = await fetch(`${console.origin}/api/session`, {
      method: "POST",
      headers: {
        origin: console.origin,
        "x-csrf-token": await consoleCsrf(console.origin),
        "content-type": "application/json",
      },
      body: JSON.stringify({ code: console.code }),
    });
    assertStrictEquals(again.status, 401);
    assertMatch((await again.json()).error, /spent/);
    // Without the token: 401 and nothing shown, on every API route.
    for (
      const path of [
        "/api/queue",
        `/api/item?id=${id}`,
        "/api/integrity",
        "/api/counts",
        "/api/export?format=csv",
      ]
    ) {
      for (
        const headers of <Record<string, string>[]> [{}, {
          authorization: `Bearer ${"A".repeat(43)}`,
        }]
      ) {
        const response = await fetch(console.origin + path, { headers });
        assertStrictEquals(response.status, 401, path);
        assertHardened(response, path);
        assertStrictEquals(await response.text(), "unauthorized");
      }
    }
    // A code in the query (so in logs and history) is refused.
    const query = await fetch(`${console.origin}/?code=${console.code}`, { redirect: "manual" });
    assertStrictEquals(query.status, 400);
    await query.body?.cancel();
    // A foreign Host (DNS rebinding, or localhost typed by hand) is refused on every route, with
    // the address to open instead: 421 Misdirected Request, not a credential problem.
    for (const host of ["attacker.example", `localhost:${new URL(console.origin).port}`]) {
      const rebound = await rawExchange(console.origin, [
        `GET /api/queue HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${token}` +
        `\r\nConnection: close\r\n\r\n`,
      ]);
      assertStrictEquals(rebound.status, 421, host);
      assert(rebound.body.startsWith(`open the console at ${console.origin}/ `), rebound.body);
    }

    // The page shell holds no data and needs no token; no answer ever sets a cookie.
    const page = await fetch(`${console.origin}/`);
    assertStrictEquals(page.status, 200);
    assertHardened(page, "page");
    assertStrictEquals(page.headers.get("set-cookie"), null);
    const html = await page.text();
    assert(!html.includes(token), "the page never holds the session credential");
    const pageCsrf = /<meta name="csrf-token" content="([A-Za-z0-9_-]{43})">/.exec(html)![1];
    const csrf = await console.csrf();
    assertMatch(html, /<script type="module" src="\/static\/console\.js"><\/script>/);
    assert(!/<script>|\sstyle=|\son\w+=/.test(html), "no inline script, style or handler");
    // Every file the page loads, the entry script's modules included, each with its media type
    // (a module script runs only when served as JavaScript, under nosniff).
    for (const file of STATIC_FILES) {
      const response = await fetch(`${console.origin}/static/${file}`);
      assertStrictEquals(response.status, 200);
      assertHardened(response, file);
      assertStrictEquals(
        response.headers.get("content-type"),
        file.endsWith(".css") ? "text/css; charset=utf-8" : "text/javascript; charset=utf-8",
      );
      const source = await response.text();
      assert(!source.includes("innerHTML"), `${file} never uses innerHTML`);
      assert(!source.includes("document.cookie"), `${file} never uses cookies`);
    }
    // The export: an attachment, with the security headers, and a format it knows.
    const exported = await fetch(`${console.origin}/api/export?format=csv`, { headers: auth });
    assertStrictEquals(exported.status, 200);
    assertHardened(exported, "export");
    assertStrictEquals(
      exported.headers.get("content-type"),
      "text/csv; charset=utf-8; header=present",
    );
    assertMatch(exported.headers.get("content-disposition") ?? "", /^attachment; /);
    assert((await exported.text()).startsWith('"seq","id",'));
    const badFormat = await fetch(`${console.origin}/api/export?format=xls`, { headers: auth });
    assertStrictEquals(badFormat.status, 400);
    assertEquals(await badFormat.json(), { error: "format must be one of ndjson, csv" });
    const counts = await fetch(`${console.origin}/api/counts`, { headers: auth });
    assertEquals(await counts.json(), { submissions: 1, new: 1, matching: 1 });
    const queue = await fetch(`${console.origin}/api/queue`, { headers: auth });
    assertStrictEquals(queue.status, 200);
    assertStrictEquals(queue.headers.get("set-cookie"), null);
    await queue.body?.cancel();
    // NUL and other control characters in a search or filter: a clear 400, never a 500.
    for (const q of ["a\u0000b", "\u0000", "tab\there", "\u001b[31m", "\u0085"]) {
      const response = await fetch(
        `${console.origin}/api/queue?q=${encodeURIComponent(q)}`,
        { headers: auth },
      );
      assertStrictEquals(response.status, 400, JSON.stringify(q));
      assertEquals(await response.json(), { error: "q must not hold control characters" });
    }
    const literal = await fetch(`${console.origin}/api/queue?q=${encodeURIComponent('"<b>')}`, {
      headers: auth,
    });
    assertStrictEquals(literal.status, 200);
    await literal.body?.cancel();

    // A state change needs the Origin, the session's CSRF token (a page's is not enough) and
    // JSON.
    const post = (headers: Record<string, string>, body: unknown = { id, status: "reviewed" }) =>
      fetch(`${console.origin}/api/event`, {
        method: "POST",
        headers: { ...auth, "content-type": "application/json", ...headers },
        body: JSON.stringify(body),
      });
    for (
      const headers of <Record<string, string>[]> [
        { origin: console.origin },
        { "x-csrf-token": csrf },
        { origin: "http://evil.example", "x-csrf-token": csrf },
        { origin: console.origin, "x-csrf-token": "A".repeat(43) },
        { origin: console.origin, "x-csrf-token": pageCsrf },
      ]
    ) {
      const response = await post(headers);
      assertStrictEquals(response.status, 403, JSON.stringify(headers));
      await response.body?.cancel();
    }
    // Origin and CSRF token without the access token: 401.
    const unauthorised = await fetch(`${console.origin}/api/event`, {
      method: "POST",
      headers: { origin: console.origin, "x-csrf-token": csrf, "content-type": "application/json" },
      body: JSON.stringify({ id, status: "reviewed" }),
    });
    assertStrictEquals(unauthorised.status, 401);
    await unauthorised.body?.cancel();
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

Deno.test("an oversized POST is refused while it is read: the rest is never read", async () => {
  const served = await serveBeacon();
  const console = await startConsole(served.databaseUrl);
  try {
    const token = await console.session();
    const { hostname, port } = new URL(console.origin);
    const connection = await Deno.connect({ hostname, port: Number(port) });
    const encoder = new TextEncoder();
    await connection.write(encoder.encode(
      `POST /api/event HTTP/1.1\r\nHost: ${hostname}:${port}\r\n` +
        `Authorization: Bearer ${token}\r\nOrigin: ${console.origin}\r\n` +
        `X-CSRF-Token: ${await console.csrf()}\r\n` +
        "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n",
    ));
    // The answer, read while the body is being sent.
    let answer = "";
    let sentWhenAnswered: number | undefined;
    let sent = 0;
    const reading = (async () => {
      const buffer = new Uint8Array(4096);
      for (;;) {
        const n = await connection.read(buffer).catch(() => null);
        if (n === null) return;
        if (sentWhenAnswered === undefined) sentWhenAnswered = sent;
        answer += new TextDecoder().decode(buffer.subarray(0, n));
      }
    })();
    // 20 MB in chunks of 64 KiB, a JSON string that never ends; the client stops when the
    // server has closed the connection (a write fails) or it has sent everything.
    const TOTAL = 20 * 1024 * 1024;
    const chunk = encoder.encode(`10000\r\n${'"'.padEnd(0x10000, "a")}\r\n`);
    let refused = false;
    // A server that answered and then stopped reading without closing also never reads the
    // rest: the client's writes then block once the socket buffers are full. A write still
    // blocked 10 s after the answer is taken as that, so the test ends either way; the
    // assertions below still require the answer before the whole body.
    let timer: ReturnType<typeof setTimeout> | undefined;
    const stalled = new Promise<"stalled">((resolve) => {
      const wait = () =>
        timer = sentWhenAnswered === undefined
          ? setTimeout(wait, 100)
          : setTimeout(() => resolve("stalled"), 10_000);
      wait();
    });
    while (sent < TOTAL) {
      try {
        if (await Promise.race([connection.write(chunk), stalled]) === "stalled") {
          refused = true;
          connection.close();
          break;
        }
      } catch {
        refused = true;
        break;
      }
      sent += 0x10000;
    }
    clearTimeout(timer);
    if (!refused) {
      try {
        await connection.write(encoder.encode("0\r\n\r\n"));
      } catch {
        refused = true;
      }
    }
    await reading;
    try {
      connection.close();
    } catch {
      // closed above, after a stalled write
    }
    assertMatch(answer, /^HTTP\/1\.1 413 /);
    assertMatch(answer, /"error":"the body is over 16384 bytes"/);
    assert(
      sentWhenAnswered !== undefined && sentWhenAnswered < TOTAL,
      `answered at ${sentWhenAnswered}`,
    );
    assert(refused, `the server read all ${sent} bytes instead of closing the connection`);
  } finally {
    await console.stop();
    await served.close();
  }
});

Deno.test("each used link leaves a next one: it opens a new session and ends the previous", async () => {
  const served = await serveBeacon();
  const console = await startConsole(served.databaseUrl);
  try {
    const first = await console.session();
    const next = new URL(await console.nextLink());
    assertStrictEquals(next.origin, console.origin);
    const code = next.hash.slice("#code=".length);
    assert(code !== console.code, "a fresh code");
    const queue = (token: string) =>
      fetch(`${console.origin}/api/queue`, { headers: { authorization: `Bearer ${token}` } });
    const before = await queue(first);
    assertStrictEquals(before.status, 200);
    await before.body?.cancel();
    const second = await exchangeCode(console.origin, code);
    const ended = await queue(first);
    assertStrictEquals(ended.status, 401, "one live session: the previous one ended");
    await ended.body?.cancel();
    const now = await queue(second.session);
    assertStrictEquals(now.status, 200);
    await now.body?.cancel();
    // The next code works once too, and leaves its own next link.
    const again = await fetch(`${console.origin}/api/session`, {
      method: "POST",
      headers: {
        origin: console.origin,
        "x-csrf-token": await consoleCsrf(console.origin),
        "content-type": "application/json",
      },
      body: JSON.stringify({ code }),
    });
    assertStrictEquals(again.status, 401);
    await again.body?.cancel();
    assertMatch(await console.nextLink(), /#code=/);
  } finally {
    await console.stop();
    await served.close();
  }
});

Deno.test("70 fetches of the page from another loopback origin leave the reviewer's mark working", async () => {
  const served = await serveBeacon();
  const submitted = await fetch(`${served.url}/beacon/0.1/submissions`, {
    method: "POST",
    headers: { "content-type": "text/plain; charset=utf-8" },
    body: "to be marked",
  });
  const id = String((await submitted.json()).receipt.id);
  const console = await startConsole(served.databaseUrl);
  try {
    const session = await console.session();
    const csrf = await console.csrf();
    // As a page on another loopback port does with no-cors fetches (or curl, without Origin).
    const { port } = new URL(console.origin);
    for (let i = 0; i < 70; i++) {
      const page = await fetch(`${console.origin}/`, {
        headers: { origin: `http://127.0.0.1:${Number(port) === 65535 ? 1 : Number(port) + 1}` },
      });
      assertStrictEquals(page.status, 200);
      await page.body?.cancel();
    }
    const marked = await fetch(`${console.origin}/api/event`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${session}`,
        origin: console.origin,
        "x-csrf-token": csrf,
        "content-type": "application/json",
      },
      body: JSON.stringify({ id, status: "reviewed" }),
    });
    assertStrictEquals(marked.status, 200);
    assertEquals(await marked.json(), { seq: 1 });
  } finally {
    await console.stop();
    await served.close();
  }
});

Deno.test("a request outside the console's routes is refused: unknown views and actions behind the session", async () => {
  const served = await serveBeacon();
  const console = await startConsole(served.databaseUrl);
  try {
    const token = await console.session();
    const auth = { authorization: `Bearer ${token}` };
    const csrf = await console.csrf();
    const answer = async (path: string, init: RequestInit = {}) => {
      const response = await fetch(`${console.origin}${path}`, init);
      assertHardened(response, `${init.method ?? "GET"} ${path}`);
      return { status: response.status, body: await response.text() };
    };
    assertEquals(await answer("/nothing"), { status: 404, body: "not found" });
    assertEquals(await answer("/", { method: "PUT" }), { status: 405, body: "method not allowed" });
    assertEquals(
      await answer("/static/console.js", { method: "POST", body: "{}" }),
      { status: 405, body: "method not allowed" },
    );
    assertEquals(await answer("/api/nothing"), { status: 401, body: "unauthorized" });
    const noView = JSON.stringify({ error: "no such view" });
    assertEquals(await answer("/api/nothing", { headers: auth }), { status: 404, body: noView });
    assertEquals(await answer("/api/session", { headers: auth }), { status: 404, body: noView });
    const action = (headers: Record<string, string>) =>
      answer("/api/nothing", {
        method: "POST",
        headers: { "content-type": "application/json", ...headers },
        body: "{}",
      });
    assertEquals(await action({}), { status: 401, body: "unauthorized" });
    assertEquals(await action(auth), { status: 403, body: "forbidden" });
    assertEquals(await action({ ...auth, origin: console.origin, "x-csrf-token": csrf }), {
      status: 404,
      body: JSON.stringify({ error: "no such action" }),
    });
  } finally {
    const { code } = await console.stop();
    assertStrictEquals(code, 0);
    await served.close();
  }
});

Deno.test("every file in static/ is served, and a page module uses only its own names, its imports and the DOM", async () => {
  const folder = new URL("../console/static/", import.meta.url);
  const present = [];
  for await (const entry of Deno.readDir(folder)) present.push(entry.name);
  assertEquals(present.sort(), [...STATIC_FILES].sort());
  const sources = new Map<string, string>();
  for (const name of STATIC_FILES) {
    if (name.endsWith(".js")) sources.set(name, await Deno.readTextFile(new URL(name, folder)));
  }
  const strays: string[] = [];
  for (const [name, code] of sources) {
    for (const [, names, target] of code.matchAll(/^import \{([^}]*)\} from ["]\.\/([^"]+)";/gm)) {
      const exported = sources.get(target);
      if (exported === undefined) {
        strays.push(`${name} imports ${target}, which is not served`);
        continue;
      }
      for (const imported of names.split(",").map((part) => part.trim()).filter(Boolean)) {
        const declaration = new RegExp(`^export (async )?(function|const|let) ${imported}\\b`, "m");
        if (!declaration.test(exported)) strays.push(`${name} imports ${imported} from ${target}`);
      }
    }
  }
  assertEquals(strays, []);
  // And every name a module uses is its own, imported, or the browser's: Deno's linter knows
  // every global but the DOM's, so the DOM's are the only names it may call undefined.
  const lint = await new Deno.Command(Deno.execPath(), {
    args: ["lint", "--json", "--rules-include=no-undef", folder.pathname],
    stdout: "piped",
    stderr: "null",
  }).output();
  const report = JSON.parse(new TextDecoder().decode(lint.stdout));
  const undefinedNames = new Set<string>(
    report.diagnostics.map((diagnostic: { message: string }) =>
      diagnostic.message.replace(/ is not defined$/, "")
    ),
  );
  assertEquals([...undefinedNames].sort(), ["document", "history", "matchMedia"]);
});
