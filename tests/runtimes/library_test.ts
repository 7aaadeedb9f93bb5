/**
 * `mod.ts` as a library: this file imports nothing of the Beacon but `mod.ts`
 * and embeds it the way another Deno app would — its own `Deno.serve`, its own database
 * location, its own options, and a path prefix of its own routes.
 */
import { assert, assertEquals, assertMatch, assertStrictEquals } from "../support/assert.ts";
import {
  type Beacon,
  type BeaconOptions,
  createBeacon,
  parseRateLimit,
  type RateLimiter,
  type RequestLogEntry,
} from "../../mod.ts";

/** Serves `beacon` under `/beacon` in a small host app that also has a route of its own. */
function hostApp(beacon: () => Beacon): Deno.HttpServer<Deno.NetAddr> {
  return Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (request, info) => {
    const url = new URL(request.url);
    if (url.pathname === "/health") return new Response("ok");
    if (url.pathname === "/beacon" || url.pathname.startsWith("/beacon/")) {
      // The host strips its mount point, as Hono's `app.mount` and the Node adapter do.
      url.pathname = url.pathname.slice("/beacon".length) || "/";
      return beacon().fetch(new Request(url, request), { remoteAddress: info.remoteAddr.hostname });
    }
    return new Response("not the beacon", { status: 404 });
  });
}

Deno.test("createBeacon() embeds under a path prefix with a custom store and options", async () => {
  const directory = await Deno.makeTempDir({ prefix: "beacon-library-" });
  const entries: RequestLogEntry[] = [];
  // The host app exists first (its port goes into the public URL); the Beacon is made next.
  const server = hostApp(() => beacon);
  const origin = `http://127.0.0.1:${server.addr.port}`;
  const options: BeaconOptions = {
    database: { url: `file:${directory}/nested/store/intake.db` },
    publicUrl: `${origin}/beacon/`,
    maxBodyBytes: 1024,
    rateLimit: "3/1m",
    log: (entry) => entries.push(entry),
  };
  const beacon = createBeacon(options);
  try {
    await beacon.ready();
    assert((await Deno.stat(`${directory}/nested/store/intake.db`)).isFile, "the custom location");

    assertStrictEquals(await (await fetch(`${origin}/health`)).text(), "ok");
    const discovery = await (await fetch(`${origin}/beacon/.well-known/autonomous-agent`)).json();
    assertStrictEquals(discovery.endpoints.submit, `${origin}/beacon/beacon/0.1/submissions`);
    assertStrictEquals(discovery.agentCard, `${origin}/beacon/.well-known/agent-card.json`);
    assertStrictEquals(discovery.limits.maxBodyBytes, 1024);
    assertStrictEquals(discovery.limits.rateLimit.requests, 3);
    const card = await (await fetch(`${origin}/beacon/.well-known/agent-card.json`)).json();
    assertStrictEquals(card.supportedInterfaces[0].url, `${origin}/beacon/a2a/v1`);

    const submit = (body: string) =>
      fetch(`${origin}/beacon/beacon/0.1/submissions`, {
        method: "POST",
        headers: { "content-type": "text/plain; charset=utf-8" },
        body,
      });
    const accepted = await submit("x".repeat(1024));
    const receipt = (await accepted.json()).receipt;
    assertStrictEquals(accepted.status, 202);
    assertStrictEquals(
      accepted.headers.get("location"),
      `${origin}/beacon/beacon/0.1/submissions/${receipt.id}`,
    );
    const tooLarge = await submit("x".repeat(1025));
    assertStrictEquals(tooLarge.status, 413);
    await tooLarge.body?.cancel();
    const third = await submit("third");
    assertStrictEquals(third.status, 202);
    await third.body?.cancel();
    const limited = await submit("fourth");
    assertStrictEquals(limited.status, 429);
    assertMatch(limited.headers.get("retry-after") ?? "", /^\d+$/);
    await limited.body?.cancel();

    assertEquals(entries.map((entry) => entry.status).slice(-4), [202, 413, 202, 429]);
    assert(!JSON.stringify(entries).includes("xxxx"), "the log carries no content");
  } finally {
    await server.shutdown();
    await beacon.close();
    await Deno.remove(directory, { recursive: true });
  }
});

Deno.test("createBeacon() takes a rate limiter of the embedding app's own", async () => {
  const seen: string[] = [];
  const limiter: RateLimiter = {
    check(key) {
      seen.push(key);
      return seen.length > 1 ? { allowed: false, retryAfterSeconds: 7 } : { allowed: true };
    },
  };
  const beacon = createBeacon({ database: { url: ":memory:" }, rateLimit: limiter });
  try {
    const send = () =>
      beacon.fetch(
        new Request("http://127.0.0.1/beacon/0.1/submissions", {
          method: "POST",
          headers: { "content-type": "text/plain; charset=utf-8" },
          body: "hello",
        }),
        { remoteAddress: "2001:db8::1" },
      );
    assertStrictEquals((await send()).status, 202);
    const refused = await send();
    assertStrictEquals(refused.status, 429);
    assertStrictEquals(refused.headers.get("retry-after"), "7");
    // The limiter sees the source key (an IPv6 /64), never the raw address.
    assertStrictEquals(seen.length, 2);
    assertStrictEquals(seen[0], seen[1]);
    assertMatch(seen[0], /^2001:db8:.*\/64$/);
    assertEquals(parseRateLimit("10/1m"), { count: 10, periodMs: 60_000 });
  } finally {
    await beacon.close();
  }
});

Deno.test("createBeacon() answers 503 while its database cannot be opened, then 503 after close", async () => {
  const blocker = await Deno.makeTempFile({ prefix: "beacon-library-" });
  const errors: unknown[] = [];
  // A database path whose folder is a file cannot be created.
  const beacon = createBeacon({
    database: { url: `file:${blocker}/beacon.db` },
    onError: (error) => errors.push(error),
  });
  try {
    const response = await beacon.fetch(
      new Request("http://127.0.0.1/.well-known/agent-card.json"),
      { remoteAddress: null },
    );
    assertStrictEquals(response.status, 503);
    assertStrictEquals((await response.json()).error.code, "unavailable");
    assert(errors.length >= 1, "onError saw why");
  } finally {
    await beacon.close();
    await Deno.remove(blocker);
  }
  const closed = await beacon.fetch(new Request("http://127.0.0.1/.well-known/agent-card.json"), {
    remoteAddress: null,
  });
  assertStrictEquals(closed.status, 503);
  await closed.body?.cancel();
});
