/**
 * The public origin (docs/threat-model.md §6.19): without `BEACON_PUBLIC_URL` it comes from a valid
 * `Host` header and the listener's scheme, never from an absolute-form request target or a
 * forwarding header; an invalid `Host` is `400 invalid_host` and is reflected nowhere. Through the
 * real server (`src/adapter/deno/server.ts`) over raw TCP, and in-process for the embedding API.
 */
import { assert, assertEquals, assertMatch } from "../support/assert.ts";
import { rawExchange } from "../support/in_process.ts";
import { startServer } from "../support/server.ts";
import { createBeacon } from "../../src/beacon.ts";
import { configFromEnvironment, publicUrlFact } from "../../src/start/config.ts";
import { MAX_HOST_LENGTH, validHost } from "../../src/http/target.ts";

const DISCOVERY = "/.well-known/autonomous-agent";
const CARD = "/.well-known/agent-card.json";
const SUBMIT = "/beacon/0.1/submissions";

function request(target: string, headers: string[], body = ""): string {
  const lines = [`${target} HTTP/1.1`, ...headers, "Connection: close"];
  if (body !== "") lines.push(`Content-Length: ${new TextEncoder().encode(body).byteLength}`);
  return lines.join("\r\n") + "\r\n\r\n" + body;
}

function header(head: string, name: string): string | undefined {
  const line = head.split("\r\n").find((l) => l.toLowerCase().startsWith(name + ":"));
  return line?.slice(name.length + 1).trim();
}

Deno.test("an absolute-form target with another Host names only the Host's origin (real server)", async () => {
  const server = await startServer();
  try {
    for (const path of [DISCOVERY, CARD]) {
      for (const target of [`http://evil.example${path}`, `https://evil.example:444${path}`]) {
        const answer = await rawExchange(server.url, [
          request(`GET ${target}`, ["Host: good.example"]),
        ]);
        assertEquals(answer.status, 200, target);
        assert(!answer.body.includes("evil.example"), `${target}: no foreign origin`);
        assert(
          !answer.body.includes("https://"),
          `${target}: the listener's scheme, not the target's`,
        );
        assert(answer.body.includes("http://good.example/"), target);
      }
    }
    const submitted = await rawExchange(server.url, [
      request(
        `POST http://evil.example:444${SUBMIT}`,
        ["Host: good.example", "Content-Type: text/plain; charset=utf-8"],
        "Hello from an absolute-form target.",
      ),
    ]);
    assertEquals(submitted.status, 202);
    assertMatch(
      header(submitted.head, "location") ?? "",
      /^http:\/\/good\.example\/beacon\/0\.1\/submissions\/[A-Za-z0-9_-]{30}$/,
    );
    assert(!submitted.body.includes("evil.example"));
    const receipt = JSON.parse(submitted.body).receipt;
    assertEquals(receipt.status, header(submitted.head, "location"));
  } finally {
    await server.stop();
  }
});

Deno.test("forwarding headers do not choose the origin (real server)", async () => {
  const server = await startServer();
  try {
    const answer = await rawExchange(server.url, [
      request(`GET ${DISCOVERY}`, [
        "Host: good.example:8443",
        "X-Forwarded-Host: evil.example",
        "X-Forwarded-Proto: https",
        "Forwarded: host=evil.example;proto=https",
      ]),
    ]);
    assertEquals(answer.status, 200);
    assert(!answer.body.includes("evil.example"));
    assert(answer.body.includes('"http://good.example:8443/beacon/0.1/submissions"'));
  } finally {
    await server.stop();
  }
});

Deno.test("an invalid Host is refused 400 invalid_host, hardened, logged once, never reflected (real server)", async () => {
  const server = await startServer();
  try {
    const marker = "reflected" + "x".repeat(10_240);
    const invalid = [
      marker, // 10 KB
      "evil.example/x",
      "user@evil.example",
      "evil.example:99999",
      "evil.example:80:80",
      "[::1",
      "[fe80::1%25eth0]",
      "evil.example, good.example",
      "evil example",
    ];
    for (const host of invalid) {
      const before = server.lines.length;
      const answer = await rawExchange(server.url, [
        request(`GET ${DISCOVERY}`, [`Host: ${host}`]),
      ]);
      assertEquals(answer.status, 400, host.slice(0, 40));
      assertEquals(JSON.parse(answer.body), {
        error: { code: "invalid_host", message: "The Host header is not a valid host and port" },
      });
      assert(!answer.head.includes("reflected") && !answer.head.includes("evil"), "not in headers");
      assert(
        !answer.body.includes("reflected") && !answer.body.includes("evil"),
        "not in the body",
      );
      assertEquals(header(answer.head, "x-content-type-options"), "nosniff");
      assertEquals(
        header(answer.head, "content-security-policy"),
        "default-src 'none'; frame-ancestors 'none'",
      );
      assertEquals(header(answer.head, "cache-control"), "no-store");
      // The log line is written after the answer; wait for it (bounded) and check there is one.
      for (let i = 0; i < 100 && server.lines.length === before; i++) {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      const logged = server.lines.slice(before).filter((line) => line.method === "GET");
      assertEquals(logged.length, 1);
      assertEquals(logged[0].status, 400);
      assertEquals(logged[0].code, "invalid_host");
      assertEquals(logged[0].outcome, "refused");
      assert(!JSON.stringify(logged[0]).includes("reflected"), "not in the log either");
    }
    assert(!server.stderr().includes("reflected"));
    // Two Host header lines are one invalid field value (RFC 9112 §3.2).
    const twice = await rawExchange(server.url, [
      request(`GET ${DISCOVERY}`, ["Host: good.example", "Host: evil.example"]),
    ]);
    assert(twice.status === 400, `two Host lines: ${twice.status}`);
    assert(!twice.body.includes("evil.example"));
  } finally {
    await server.stop();
  }
});

Deno.test("a start without BEACON_PUBLIC_URL warns of nothing: its listening event says what that means", async () => {
  const config = (env: Record<string, string>) => configFromEnvironment((name) => env[name]);
  for (const hostname of ["0.0.0.0", "::", "127.0.0.1", "[::1]"]) {
    const fact = publicUrlFact(config({ BEACON_HOSTNAME: hostname }));
    assertMatch(fact, /^unset: documents and receipts name each request's Host/);
    assertMatch(fact, /the agent card is unsigned/);
  }
  assertEquals(
    publicUrlFact(config({ BEACON_HOSTNAME: "0.0.0.0", BEACON_PUBLIC_URL: "https://b.example" })),
    "https://b.example",
  );
  // The real server (on loopback, the only address a test may listen on).
  const server = await startServer();
  try {
    assert(!server.stderr().includes('"warning"'), server.stderr());
    const listening = server.lines.find((line) => line.event === "listening");
    assertMatch(String(listening?.publicUrl), /^unset: .*the agent card is unsigned$/);
  } finally {
    await server.stop();
  }
});

Deno.test("the embedding API: Host over the URL's host, the listener's scheme, publicUrl over both", async () => {
  const lines: Record<string, unknown>[] = [];
  const beacon = createBeacon({
    database: { url: ":memory:" },
    rateLimit: "off",
    log: (e) => lines.push({ ...e }),
  });
  try {
    const discovery = async (
      url: string,
      headers: Record<string, string>,
      scheme?: "http" | "https",
    ) => {
      const response = await beacon.fetch(new Request(url, { headers }), {
        remoteAddress: null,
        scheme,
      });
      return { status: response.status, body: await response.text() };
    };
    const viaHost = await discovery(`https://evil.example${DISCOVERY}`, { host: "good.example" });
    assert(viaHost.body.includes('"http://good.example/a2a/v1"'));
    assert(!viaHost.body.includes("evil"));
    const tls = await discovery(
      `http://evil.example${DISCOVERY}`,
      { host: "good.example" },
      "https",
    );
    assert(tls.body.includes('"https://good.example/a2a/v1"'));
    // No Host header (HTTP/2's :authority, or a Request the embedding app built): the URL's host.
    const noHost = await discovery(`http://built.example:8000${DISCOVERY}`, {});
    assert(noHost.body.includes('"http://built.example:8000/a2a/v1"'));
    // A target no URL host can be made of is 404, hardened and logged once.
    lines.length = 0;
    const untrusted = await beacon.fetch(new Request(`http://a*b${DISCOVERY}`), {
      remoteAddress: null,
    });
    assertEquals(untrusted.status, 404);
    assertEquals(untrusted.headers.get("x-content-type-options"), "nosniff");
    assertEquals(lines.length, 1);
    assertEquals(lines[0].code, "not_found");
  } finally {
    await beacon.close();
  }
  const configured = createBeacon({
    database: { url: ":memory:" },
    publicUrl: "https://beacon.example/x/",
  });
  try {
    const response = await configured.fetch(
      new Request(`http://evil.example${DISCOVERY}`, { headers: { host: "other.example" } }),
      { remoteAddress: null },
    );
    const body = await response.text();
    assert(body.includes('"https://beacon.example/x/a2a/v1"'));
    assert(!body.includes("other.example") && !body.includes("evil.example"));
  } finally {
    await configured.close();
  }
});

Deno.test("validHost() follows the RFC 3986 host and RFC 9110 port grammar, bounded", () => {
  const valid: [string, string][] = [
    ["beacon.example", "beacon.example"],
    ["BEACON.Example:8000", "beacon.example:8000"],
    ["beacon.example:80", "beacon.example"],
    ["127.0.0.1:8000", "127.0.0.1:8000"],
    ["[::1]", "[::1]"],
    ["[2001:DB8::1]:8443", "[2001:db8::1]:8443"],
    ["[::ffff:192.0.2.1]", "[::ffff:c000:201]"],
    ["xn--bcher-kva.example", "xn--bcher-kva.example"],
    ["a".repeat(63) + "." + "b".repeat(63), "a".repeat(63) + "." + "b".repeat(63)],
  ];
  for (const [input, expected] of valid) assertEquals(validHost(input, "http"), expected, input);
  const invalid = [
    "",
    "a".repeat(MAX_HOST_LENGTH + 1),
    "beacon.example:65536",
    "beacon.example:-1",
    "[::1]x",
    "[1:2:3:4:5:6:7:8:9]",
    "[v1.fe]",
    "::1",
    "bea con.example",
    "beacon.example\t",
    "bücher.example",
    "a%2fb.example",
    "a;b.example",
    "1.2.3.4.5",
  ];
  for (const input of invalid) {
    assertEquals(validHost(input, "http"), undefined, input.slice(0, 30));
  }
});

Deno.test("a foreign Host never gets a signed card naming it (real server)", async (t) => {
  await t.step("without BEACON_PUBLIC_URL: the card names the Host and is unsigned", async () => {
    const server = await startServer();
    try {
      const etags = new Set<string>();
      for (const host of ["evil.example", "evil.example:8080", "127.0.0.1", "good.example"]) {
        const answer = await rawExchange(server.url, [request(`GET ${CARD}`, [`Host: ${host}`])]);
        assertEquals(answer.status, 200, host);
        const card = JSON.parse(answer.body);
        assertEquals(card.signatures, undefined, `${host}: no signature`);
        assertEquals(card.supportedInterfaces[0].url, `http://${host}/a2a/v1`);
        const etag = header(answer.head, "etag") ?? "";
        assertMatch(etag, /^"[0-9a-f]{32}"$/);
        etags.add(etag);
        // The same Host gets the same validator, and a 304 for it.
        const again = await rawExchange(server.url, [
          request(`GET ${CARD}`, [`Host: ${host}`, `If-None-Match: ${etag}`]),
        ]);
        assertEquals(again.status, 304, host);
        const discovery = await rawExchange(server.url, [
          request(`GET ${DISCOVERY}`, [`Host: ${host}`]),
        ]);
        assert(discovery.body.includes(`"http://${host}/beacon/0.1/submissions"`));
      }
      assertEquals(etags.size, 4, "each origin's card has its own ETag");
    } finally {
      await server.stop();
    }
  });

  await t.step(
    "with BEACON_PUBLIC_URL: every Host gets the signed card of that origin",
    async () => {
      const server = await startServer({
        env: { BEACON_PUBLIC_URL: "https://beacon.example.com" },
      });
      try {
        const bodies = new Set<string>();
        for (const host of ["evil.example", "beacon.example.com", "127.0.0.1"]) {
          const answer = await rawExchange(server.url, [request(`GET ${CARD}`, [`Host: ${host}`])]);
          assertEquals(answer.status, 200, host);
          assert(!answer.body.includes("evil"), host);
          const card = JSON.parse(answer.body);
          assertEquals(card.supportedInterfaces[0].url, "https://beacon.example.com/a2a/v1");
          assertEquals(card.signatures.length, 1);
          const protectedHeader = JSON.parse(
            atob(card.signatures[0].protected.replaceAll("-", "+").replaceAll("_", "/")),
          );
          assertEquals(protectedHeader.jku, "https://beacon.example.com/.well-known/jwks.json");
          bodies.add(answer.body);
        }
        assertEquals(bodies.size, 1, "one card, whatever the Host");
      } finally {
        await server.stop();
      }
    },
  );
});

Deno.test("the embedding API: a basePath the caller stripped is in every published URL; publicUrl wins; anything but a path is ignored", async () => {
  const discovery = async (options: { publicUrl?: string }, basePath?: string) => {
    const beacon = createBeacon({ database: { url: ":memory:" }, rateLimit: "off", ...options });
    try {
      const response = await beacon.fetch(
        new Request("http://example.test/.well-known/autonomous-agent"),
        { remoteAddress: "192.0.2.1", basePath },
      );
      return (await response.json()).endpoints.submit as string;
    } finally {
      await beacon.close();
    }
  };
  assertEquals(await discovery({}, "/beacon"), "http://example.test/beacon/beacon/0.1/submissions");
  assertEquals(await discovery({}, "/a/b"), "http://example.test/a/b/beacon/0.1/submissions");
  assertEquals(
    await discovery({ publicUrl: "https://public.example/in" }, "/beacon"),
    "https://public.example/in/beacon/0.1/submissions",
  );
  for (const odd of ["beacon", "/beacon/", "/x?y=1", "/x#f", "//evil.example", "/a b", ""]) {
    assertEquals(await discovery({}, odd), "http://example.test/beacon/0.1/submissions", odd);
  }
});
