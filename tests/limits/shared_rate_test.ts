/**
 * The database-backed GCRA limiter and source keys, through the real handler: instances sharing
 * one database share the limit, forged forwarding headers and rotating IPv6 addresses inside one
 * /64 do not escape it, and `Retry-After` is exact.
 */
import { createClient } from "@libsql/client";
import { assertEquals, assertMatch } from "../support/assert.ts";
import { type Beacon, createBeacon } from "../../src/beacon.ts";

const SUBMIT = "http://127.0.0.1/beacon/0.1/submissions";

function submit(
  beacon: Beacon,
  remoteAddress: string,
  headers: Record<string, string> = {},
): Promise<Response> {
  return beacon.fetch(
    new Request(SUBMIT, {
      method: "POST",
      headers: { "content-type": "text/plain; charset=utf-8", ...headers },
      body: "rate limited?",
    }),
    { remoteAddress },
  );
}

async function statuses(responses: Promise<Response>[]): Promise<number[]> {
  return await Promise.all(responses.map(async (pending) => {
    const response = await pending;
    await response.body?.cancel();
    return response.status;
  }));
}

async function withDatabase(run: (url: string) => Promise<void>): Promise<void> {
  const directory = await Deno.makeTempDir({ prefix: "beacon-rate-" });
  try {
    await run(`file:${directory}/beacon.db`);
  } finally {
    await Deno.remove(directory, { recursive: true });
  }
}

Deno.test("two instances on one database share one limit", async () => {
  await withDatabase(async (url) => {
    const options = { database: { url }, rateLimit: "3/1m", rateLimitStore: "database" } as const;
    const a = createBeacon(options);
    const b = createBeacon(options);
    try {
      const first = [];
      for (const beacon of [a, b, a]) first.push(...await statuses([submit(beacon, "192.0.2.7")]));
      assertEquals(first, [202, 202, 202]);
      const refused = await b.fetch(new Request(SUBMIT, { method: "POST", body: "x" }), {
        remoteAddress: "192.0.2.7",
      });
      assertEquals(refused.status, 429);
      assertEquals((await refused.json()).error.code, "rate_limited");
      // 3 per minute: the next request is admitted 20 s after the burst.
      const retryAfter = Number(refused.headers.get("retry-after"));
      assertEquals(retryAfter >= 19 && retryAfter <= 20, true, `Retry-After ${retryAfter}`);
      assertEquals(await statuses([submit(a, "192.0.2.7")]), [429]);
      assertEquals(
        await statuses([submit(b, "192.0.2.8")]),
        [202],
        "other sources are not limited",
      );
    } finally {
      await a.close();
      await b.close();
    }
  });
});

Deno.test("forged forwarding headers do not escape the limit without trusted proxies", async () => {
  for (const rateLimitStore of ["memory", "database"] as const) {
    await withDatabase(async (url) => {
      const beacon = createBeacon({ database: { url }, rateLimit: "2/1m", rateLimitStore });
      try {
        const results = await statuses(
          Array.from({ length: 5 }, (_, i) =>
            submit(beacon, "198.51.100.9", {
              "x-forwarded-for": `203.0.113.${i}`,
              forwarded: `for=203.0.113.${i}`,
              "x-real-ip": `203.0.113.${i}`,
            })),
        );
        assertEquals(results.filter((status) => status === 202).length, 2, rateLimitStore);
        assertEquals(results.filter((status) => status === 429).length, 3, rateLimitStore);
      } finally {
        await beacon.close();
      }
    });
  }
});

Deno.test("rotating IPv6 addresses inside one /64 share one limit; other /64s do not", async () => {
  for (const rateLimitStore of ["memory", "database"] as const) {
    await withDatabase(async (url) => {
      const beacon = createBeacon({ database: { url }, rateLimit: "2/1m", rateLimitStore });
      try {
        const rotating = await statuses(
          Array.from(
            { length: 6 },
            (_, i) => submit(beacon, `2001:db8:5:6:${(i * 7919).toString(16)}::${i + 1}`),
          ),
        );
        assertEquals(rotating.filter((status) => status === 202).length, 2, rateLimitStore);
        const mapped = await statuses([submit(beacon, "::ffff:192.0.2.50")]);
        const plain = await statuses([submit(beacon, "192.0.2.50"), submit(beacon, "192.0.2.50")]);
        assertEquals([...mapped, ...plain], [202, 202, 429], "IPv4-mapped IPv6 is its IPv4");
        assertEquals(await statuses([submit(beacon, "2001:db8:5:7::1")]), [202]);
      } finally {
        await beacon.close();
      }
    });
  }
});

Deno.test("with one trusted proxy the rightmost forwarded address is the source", async () => {
  await withDatabase(async (url) => {
    const beacon = createBeacon({ database: { url }, rateLimit: "1/1m", trustedProxies: 1 });
    try {
      const proxy = "10.0.0.2";
      const viaProxy = (client: string) =>
        submit(beacon, proxy, { "x-forwarded-for": `6.6.6.6, ${client}` });
      assertEquals(await statuses([viaProxy("192.0.2.1"), viaProxy("192.0.2.2")]), [202, 202]);
      assertEquals(await statuses([viaProxy("192.0.2.1")]), [429]);
    } finally {
      await beacon.close();
    }
  });
});

Deno.test("the database limiter's Retry-After is exact on the database clock", async () => {
  await withDatabase(async (url) => {
    const beacon = createBeacon({
      database: { url },
      rateLimit: "1/1h",
      rateLimitStore: "database",
    });
    try {
      assertEquals(await statuses([submit(beacon, "192.0.2.99")]), [202]);
      const refused = await submit(beacon, "192.0.2.99");
      await refused.body?.cancel();
      assertEquals(refused.status, 429);
      const retryAfter = Number(refused.headers.get("retry-after"));
      assertEquals(retryAfter === 3600 || retryAfter === 3599, true, `Retry-After ${retryAfter}`);
    } finally {
      await beacon.close();
    }
  });
});

Deno.test("the database limiter stores salted hashes, never addresses, and refusals write nothing", async () => {
  await withDatabase(async (url) => {
    const beacon = createBeacon({
      database: { url },
      rateLimit: "1/1h",
      rateLimitStore: "database",
    });
    const reader = createClient({ url });
    try {
      assertEquals(await statuses([submit(beacon, "203.0.113.9")]), [202]);
      const before = (await reader.execute("SELECT key, tat FROM rate_limits")).rows;
      assertEquals(before.length, 1);
      assertMatch(String(before[0].key), /^[0-9a-f]{32}$/);
      assertEquals(String(before[0].key).includes("203.0.113"), false);
      const version = async () =>
        Number((await reader.execute("PRAGMA data_version")).rows[0].data_version);
      const unchanged = await version();
      assertEquals(await statuses([submit(beacon, "203.0.113.9")]), [429]);
      assertEquals(await version(), unchanged, "the refusal committed no write");
      const after = (await reader.execute("SELECT key, tat FROM rate_limits")).rows;
      assertEquals(after, before);
    } finally {
      reader.close();
      await beacon.close();
    }
  });
});

Deno.test("behind a trusted proxy, a client's own Forwarded header does not pick its source", async () => {
  await withDatabase(async (url) => {
    const beacon = createBeacon({ database: { url }, rateLimit: "1/1m", trustedProxies: 1 });
    try {
      // The proxy appends the client's address to X-Forwarded-For and passes Forwarded through.
      const spoofing = (i: number) =>
        submit(beacon, "10.0.0.2", {
          forwarded: `for=203.0.113.${i}`,
          "x-forwarded-for": "192.0.2.44",
        });
      assertEquals(await statuses([spoofing(1), spoofing(2), spoofing(3)]).then((s) => s.sort()), [
        202,
        429,
        429,
      ]);
    } finally {
      await beacon.close();
    }
  });
});
