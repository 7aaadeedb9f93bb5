/**
 * beacon/0.1 end to end: the real HTTP server on an ephemeral loopback port with a real
 * temporary database file. Every stable error code, the exact body-limit boundary, no echo, and
 * that no refusal writes anything.
 */
import { sha256 } from "../support/digest.ts";
import { assert, assertEquals, assertMatch } from "../support/assert.ts";
import { rawExchange, serveBeacon, type ServedBeacon } from "../support/in_process.ts";
import { createBeacon } from "../../src/beacon.ts";

const SUBMIT = "/beacon/0.1/submissions";
const TEXT = { "content-type": "text/plain; charset=utf-8" };
const JSON_TYPE = { "content-type": "application/json" };

const VALID_MESSAGE = {
  beacon: "0.1",
  subject: "Hello from an agent",
  body: "I would like a human to read this.",
  intent: "introduction",
  sender: { name: "test-agent" },
};

async function withBeacon(
  options: Parameters<typeof serveBeacon>[0],
  run: (served: ServedBeacon) => Promise<void>,
): Promise<void> {
  const served = await serveBeacon(options);
  try {
    await run(served);
  } finally {
    await served.close();
  }
}

async function post(
  served: ServedBeacon,
  body: BodyInit,
  headers: Record<string, string>,
  path = SUBMIT,
): Promise<{ status: number; headers: Headers; json: Record<string, unknown>; text: string }> {
  const response = await fetch(served.url + path, { method: "POST", headers, body });
  const text = await response.text();
  let json: Record<string, unknown> = {};
  try {
    json = JSON.parse(text);
  } catch {
    // asserted by the caller
  }
  return { status: response.status, headers: response.headers, json, text };
}

function errorCode(json: Record<string, unknown>): unknown {
  return (json.error as { code?: unknown } | undefined)?.code;
}

Deno.test("native submit stores text and answers 202 with a receipt, Location and no echo", async () => {
  await withBeacon({}, async (served) => {
    const marker = `marker-${crypto.randomUUID()}`;
    const body = `Please read this. ${marker}`;
    const result = await post(served, body, TEXT);
    assertEquals(result.status, 202);
    assert(!result.text.includes(marker), "no echo of content");
    const receipt = result.json.receipt as Record<string, unknown>;
    assertMatch(String(receipt.id), /^[A-Za-z0-9_-]{30}$/);
    assertEquals(receipt.kind, "unstructured");
    assertEquals(receipt.surface, "native");
    assertEquals(receipt.size, new TextEncoder().encode(body).byteLength);
    assertEquals(receipt.digest, await sha256(new TextEncoder().encode(body)));
    assertMatch(String(receipt.receivedAt), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    assertEquals(result.headers.get("location"), `${served.url}${SUBMIT}/${receipt.id}`);
    assertEquals(receipt.status, result.headers.get("location"));
    assertEquals(result.headers.get("cache-control"), "no-store");

    const rows = await served.query("SELECT content, digest, surface FROM submissions");
    assertEquals(rows.length, 1);
    assertEquals(new TextDecoder().decode(rows[0].content as ArrayBuffer), body);
    assertEquals(rows[0].digest, receipt.digest);

    const status = await fetch(String(receipt.status));
    assertEquals(status.status, 200);
    assertEquals(await status.json(), {
      id: receipt.id,
      state: "received",
      receivedAt: receipt.receivedAt,
    });
  });
});

Deno.test("native submit stores a structured message byte for byte", async () => {
  await withBeacon({}, async (served) => {
    const bytes = new TextEncoder().encode(JSON.stringify(VALID_MESSAGE, null, 1));
    const result = await post(served, bytes, JSON_TYPE);
    assertEquals(result.status, 202);
    const receipt = result.json.receipt as Record<string, unknown>;
    assertEquals(receipt.kind, "structured");
    assertEquals(receipt.digest, await sha256(bytes));
    const [row] = await served.query("SELECT content FROM submissions");
    assertEquals(new Uint8Array(row.content as ArrayBuffer), bytes);
  });
});

Deno.test("every receipt id is unique and 128-bit base64url", async () => {
  await withBeacon({}, async (served) => {
    const ids = new Set<string>();
    await Promise.all(Array.from({ length: 40 }, async (_, i) => {
      const result = await post(served, `message ${i}`, TEXT);
      ids.add(String((result.json.receipt as { id: string }).id));
    }));
    assertEquals(ids.size, 40);
    assertEquals(await served.count(), 40);
  });
});

Deno.test("each stable error code answers its status and writes nothing", async () => {
  await withBeacon({}, async (served) => {
    const cases: [
      string,
      number,
      () => Promise<{ status: number; json: Record<string, unknown> }>,
    ][] = [
      ["invalid_json", 400, () => post(served, '{"beacon":', JSON_TYPE)],
      ["invalid_json", 400, () => post(served, '{"a":1,"a":2}', JSON_TYPE)],
      ["invalid_message", 422, () => post(served, JSON.stringify({ beacon: "0.1" }), JSON_TYPE)],
      ["invalid_message", 422, () => post(served, "   \n ", TEXT)],
      ["invalid_message", 422, () => post(served, new Uint8Array([0x68, 0xff, 0x69]), TEXT)],
      ["unsupported_media_type", 415, () => post(served, "x", { "content-type": "text/html" })],
      [
        "unsupported_media_type",
        415,
        () => post(served, "x", { "content-type": "text/plain; charset=iso-8859-1" }),
      ],
      ["unsupported_media_type", 415, () => post(served, new Uint8Array([120]), {})],
      ["too_large", 413, () => post(served, new Uint8Array(65_537), TEXT)],
      ["not_found", 404, async () => {
        const response = await fetch(served.url + "/nothing-here");
        return { status: response.status, json: await response.json() };
      }],
      ["not_found", 404, async () => {
        const response = await fetch(`${served.url}${SUBMIT}/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAA`);
        return { status: response.status, json: await response.json() };
      }],
      ["not_found", 404, async () => {
        const response = await fetch(`${served.url}${SUBMIT}/not-an-id`);
        return { status: response.status, json: await response.json() };
      }],
      ["method_not_allowed", 405, async () => {
        const response = await fetch(served.url + SUBMIT, { method: "PUT", body: "x" });
        assertEquals(response.headers.get("allow"), "POST, OPTIONS");
        return { status: response.status, json: await response.json() };
      }],
      ["method_not_allowed", 405, async () => {
        const response = await fetch(served.url + "/.well-known/autonomous-agent", {
          method: "DELETE",
        });
        return { status: response.status, json: await response.json() };
      }],
    ];
    for (const [code, status, send] of cases) {
      const result = await send();
      assertEquals(result.status, status, code);
      assertEquals(errorCode(result.json), code);
      assertEquals(typeof (result.json.error as { message: unknown }).message, "string");
    }
    assertEquals(await served.count(), 0, "no refusal stored anything");
  });
});

Deno.test("rate_limited: 429 with an exact Retry-After, before the body is read", async () => {
  let now = 1_700_000_000_000;
  await withBeacon({ rateLimit: "2/1m", now: () => now }, async (served) => {
    assertEquals((await post(served, "one", TEXT)).status, 202);
    assertEquals((await post(served, "two", TEXT)).status, 202);
    const refused = await post(served, "three", TEXT);
    assertEquals(refused.status, 429);
    assertEquals(errorCode(refused.json), "rate_limited");
    assertEquals(refused.headers.get("retry-after"), "30");
    now += 29_000;
    assertEquals((await post(served, "four", TEXT)).headers.get("retry-after"), "1");
    now += 1_000;
    assertEquals((await post(served, "five", TEXT)).status, 202);
    assertEquals(await served.count(), 3);
  });
});

Deno.test("request_timeout: a body that stalls is answered 408 and nothing is stored", async () => {
  await withBeacon({ bodyTimeoutMs: 200 }, async (served) => {
    const result = await rawExchange(served.url, [
      `POST ${SUBMIT} HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nContent-Length: 100\r\n\r\n`,
      "only ten b",
      { pauseMs: 600 },
    ]);
    assertEquals(result.status, 408);
    assertEquals(JSON.parse(result.body).error.code, "request_timeout");
    // The unread rest of the body makes the connection unusable: the server says it closes it.
    assertMatch(result.head, /\r\nconnection: close(\r\n|$)/i);
    assertEquals(await served.count(), 0);
  });
});

Deno.test("unavailable: a database that cannot be opened answers 503, never a receipt", async () => {
  const beacon = createBeacon({ database: { url: "file:/proc/no-such-dir/beacon.db" } });
  const response = await beacon.fetch(
    new Request("http://127.0.0.1" + SUBMIT, { method: "POST", headers: TEXT, body: "x" }),
    { remoteAddress: null },
  );
  assertEquals(response.status, 503);
  assertEquals((await response.json()).error.code, "unavailable");
  assertEquals(response.headers.get("x-content-type-options"), "nosniff");
  await beacon.close();
});

Deno.test("the body limit is exact on the wire: 65,536 accepted, 65,537 refused, chunked too", async () => {
  await withBeacon({}, async (served) => {
    const exact = new Uint8Array(65_536).fill(0x61);
    assertEquals((await post(served, exact, TEXT)).status, 202);
    assertEquals((await post(served, new Uint8Array(65_537).fill(0x61), TEXT)).status, 413);

    const chunked = (size: number) => {
      let sent = 0;
      return new ReadableStream<Uint8Array>({
        pull(controller) {
          if (sent >= size) return controller.close();
          const n = Math.min(4096, size - sent);
          controller.enqueue(new Uint8Array(n).fill(0x62));
          sent += n;
        },
      });
    };
    assertEquals((await post(served, chunked(65_536), TEXT)).status, 202);
    assertEquals((await post(served, chunked(65_537), TEXT)).status, 413);

    // One byte per chunk, over raw TCP with Transfer-Encoding: chunked.
    const oneByteChunks = (size: number) => {
      const parts: string[] = [
        `POST ${SUBMIT} HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n`,
      ];
      parts.push("1\r\nc\r\n".repeat(size));
      parts.push("0\r\n\r\n");
      return parts;
    };
    assertEquals((await rawExchange(served.url, oneByteChunks(65_536))).status, 202);
    assertEquals((await rawExchange(served.url, oneByteChunks(65_537))).status, 413);

    // A Content-Length lying low is a framing the server must not extend; lying high is refused.
    const lyingHigh = await rawExchange(served.url, [
      `POST ${SUBMIT} HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nContent-Length: 70000\r\nConnection: close\r\n\r\n`,
      "short",
    ]);
    assertEquals(lyingHigh.status, 413);
    assertEquals(await served.count(), 3);
  });
});

Deno.test("no response ever contains a unique marker sent anywhere in a request", async () => {
  await withBeacon({}, async (served) => {
    const marker = `zq${crypto.randomUUID().replaceAll("-", "")}`;
    const bodies: [BodyInit, Record<string, string>][] = [
      [marker, TEXT],
      [JSON.stringify({ ...VALID_MESSAGE, body: marker }), JSON_TYPE],
      [JSON.stringify({ ...VALID_MESSAGE, [marker]: 1 }), JSON_TYPE],
      [JSON.stringify({ ...VALID_MESSAGE, sender: { name: "a", [marker]: "x" } }), JSON_TYPE],
      [JSON.stringify({ ...VALID_MESSAGE, subject: marker.repeat(50) }), JSON_TYPE],
      [JSON.stringify({ ...VALID_MESSAGE, intent: marker }), JSON_TYPE],
      [`{"${marker}":`, JSON_TYPE],
      [marker, { "content-type": `text/${marker}` }],
      [marker, { ...TEXT, "idempotency-key": marker }],
      [new Uint8Array([0xff, ...new TextEncoder().encode(marker)]), TEXT],
    ];
    for (const [body, headers] of bodies) {
      const result = await post(served, body, headers);
      assert(!result.text.includes(marker), `echo in ${result.status} ${result.text}`);
      for (const [name, value] of result.headers) assert(!value.includes(marker), name);
    }
    const paths = [`${SUBMIT}/${marker}`, `/${marker}`, `${SUBMIT}?${marker}=1`];
    for (const path of paths) {
      const response = await fetch(served.url + path);
      assert(!(await response.text()).includes(marker), path);
    }
  });
});

Deno.test("an Idempotency-Key retry returns the first receipt; other content is refused", async () => {
  await withBeacon({}, async (served) => {
    const headers = { ...TEXT, "idempotency-key": "retry-1" };
    const first = await post(served, "same content", headers);
    const again = await post(served, "same content", headers);
    assertEquals(first.status, 202);
    assertEquals(again.status, 202);
    assertEquals(again.headers.get("idempotent-replayed"), "true");
    assertEquals(again.json, first.json);
    const other = await post(served, "other content", headers);
    assertEquals(other.status, 422);
    assertEquals(errorCode(other.json), "idempotency_key_reused");
    assertEquals(await served.count(), 1);
  });
});

Deno.test("the submissions table refuses UPDATE and DELETE in the database itself", async () => {
  await withBeacon({}, async (served) => {
    await post(served, "keep me", TEXT);
    for (
      const sql of [
        "UPDATE submissions SET content = x'00'",
        "DELETE FROM submissions",
        "UPDATE secrets SET value = x'00'",
        "DELETE FROM secrets",
      ]
    ) {
      let refused = false;
      try {
        await served.query(sql);
      } catch (error) {
        refused = /append-only/.test(String(error));
      }
      assert(refused, sql);
    }
    assertEquals(await served.count(), 1);
  });
});

Deno.test("discovery document names endpoints, schema, limits, policies and the statement", async () => {
  await withBeacon({ rateLimit: "10/1m", publicUrl: "https://beacon.example" }, async (served) => {
    const response = await fetch(served.url + "/.well-known/autonomous-agent");
    assertEquals(response.status, 200);
    assertEquals(response.headers.get("access-control-allow-origin"), "*");
    assertMatch(response.headers.get("cache-control") ?? "", /max-age=\d+/);
    const document = await response.json();
    assertEquals(document.protocol, "beacon/0.1");
    assertEquals(document.endpoints.submit, "https://beacon.example/beacon/0.1/submissions");
    assertEquals(document.endpoints.status, "https://beacon.example/beacon/0.1/submissions/{id}");
    assertEquals(document.limits.maxBodyBytes, 65_536);
    assertEquals(document.limits.rateLimit.requests, 10);
    assertEquals(document.limits.rateLimit.periodSeconds, 60);
    assertEquals(document.agentCard, "https://beacon.example/.well-known/agent-card.json");
    assertEquals(
      document.statement,
      "Cryptographic identity does not establish autonomy, consciousness or personhood.",
    );
    assertEquals(document.policies.storage, "append-only");
    const schema = await fetch(
      document.messageSchema.replace("https://beacon.example", served.url),
    );
    assertEquals(schema.status, 200);
    assertEquals((await schema.json()).title, "beacon/0.1 message");

    const etag = response.headers.get("etag")!;
    const cached = await fetch(served.url + "/.well-known/autonomous-agent", {
      headers: { "if-none-match": etag },
    });
    assertEquals(cached.status, 304);
    await cached.body?.cancel();
  });
});

Deno.test("every response carries the hardening headers", async () => {
  await withBeacon({}, async (served) => {
    const accepted = await post(served, "for the status route", TEXT);
    const status = String((accepted.json.receipt as { status: string }).status);
    const rpc = (method: string, version = "1.0") => ({
      method: "POST",
      headers: { "content-type": "application/json", "a2a-version": version },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params: {} }),
    });
    const requests: [string, RequestInit, string][] = [
      ["/.well-known/autonomous-agent", {}, "public"],
      ["/.well-known/autonomous-agent", { method: "HEAD" }, "public"],
      ["/.well-known/agent-card.json", {}, "public"],
      ["/schemas/message.schema.json", {}, "public"],
      [SUBMIT, { method: "POST", headers: TEXT, body: "x" }, "no-store"],
      [SUBMIT, { method: "POST", headers: { "content-type": "image/png" }, body: "x" }, "no-store"],
      [status.slice(status.indexOf("/beacon")), {}, "no-store"],
      ["/a2a/v1", rpc("SendMessage"), "no-store"],
      ["/a2a/v1", rpc("GetTask", "0.3"), "no-store"],
      ["/a2a/v1", { method: "GET" }, "no-store"],
      ["/missing", {}, "no-store"],
      [SUBMIT, { method: "OPTIONS" }, "no-store"],
    ];
    for (const [path, init, cache] of requests) {
      const response = await fetch(served.url + path, init);
      await response.body?.cancel();
      const where = `${init.method ?? "GET"} ${path}`;
      assertEquals(response.headers.get("x-content-type-options"), "nosniff", where);
      assertMatch(response.headers.get("content-security-policy") ?? "", /default-src 'none'/);
      assertEquals(response.headers.get("access-control-allow-origin"), "*", where);
      assertEquals(response.headers.get("referrer-policy"), "no-referrer", where);
      assertMatch(response.headers.get("cache-control") ?? "", new RegExp(cache), where);
      assertEquals(response.headers.get("server"), null, `${where}: no server banner`);
      assertEquals(response.headers.get("x-powered-by"), null, where);
    }
  });
});

Deno.test("concurrent retries with one Idempotency-Key store one row and share one receipt", async () => {
  await withBeacon({}, async (served) => {
    const headers = { ...TEXT, "idempotency-key": "burst-1" };
    const results = await Promise.all(
      Array.from({ length: 8 }, () => post(served, "the same content", headers)),
    );
    assertEquals(results.map((result) => result.status), Array(8).fill(202));
    assertEquals(new Set(results.map((result) => JSON.stringify(result.json))).size, 1);
    assertEquals(await served.count(), 1);
  });
});

Deno.test("an Idempotency-Key is remembered for the window, then may be used again", async () => {
  let now = 1_700_000_000_000;
  await withBeacon({ now: () => now, idempotencyWindowMs: 60_000 }, async (served) => {
    const headers = { ...TEXT, "idempotency-key": "window-1" };
    const first = await post(served, "first use", headers);
    now += 59_999;
    assertEquals((await post(served, "first use", headers)).json, first.json);
    assertEquals((await post(served, "other", headers)).status, 422);
    now += 2;
    const later = await post(served, "other", headers);
    assertEquals(later.status, 202);
    assertEquals(later.headers.get("idempotent-replayed"), null);
    assertEquals(await served.count(), 2);
  });
});

Deno.test("an Idempotency-Key retry must repeat the kind too, not only the bytes", async () => {
  await withBeacon({}, async (served) => {
    const bytes = JSON.stringify(VALID_MESSAGE);
    const key = { "idempotency-key": "kind-1" };
    assertEquals((await post(served, bytes, { ...TEXT, ...key })).status, 202);
    const asJson = await post(served, bytes, { ...JSON_TYPE, ...key });
    assertEquals(asJson.status, 422);
    assertEquals(errorCode(asJson.json), "idempotency_key_reused");
    assertEquals(await served.count(), 1);
  });
});

Deno.test("the stored source is a salted hash, never the address", async () => {
  await withBeacon({}, async (served) => {
    await post(served, "where am I from?", TEXT);
    const [row] = await served.query("SELECT source_hash FROM submissions");
    assertMatch(String(row.source_hash), /^[0-9a-f]{32}$/);
    const everything = JSON.stringify(await served.query("SELECT * FROM submissions"));
    assert(!everything.includes("127.0.0.1"), "no raw address at rest");
  });
});

Deno.test("with a public URL set, the request's Host never reaches a response", async () => {
  const directory = await Deno.makeTempDir({ prefix: "beacon-host-" });
  const beacon = createBeacon({
    database: { url: `file:${directory}/beacon.db` },
    publicUrl: "https://beacon.example",
    rateLimit: "off",
  });
  try {
    const submit = await beacon.fetch(
      new Request("http://attacker.invalid/beacon/0.1/submissions", {
        method: "POST",
        headers: TEXT,
        body: "hello",
      }),
      { remoteAddress: null },
    );
    assertEquals(submit.status, 202);
    assertMatch(submit.headers.get("location") ?? "", /^https:\/\/beacon\.example\//);
    const texts = [
      await submit.text(),
      await (await beacon.fetch(
        new Request("http://attacker.invalid/.well-known/autonomous-agent"),
        { remoteAddress: null },
      ))
        .text(),
      await (await beacon.fetch(
        new Request("http://attacker.invalid/.well-known/agent-card.json"),
        { remoteAddress: null },
      ))
        .text(),
    ];
    for (const text of texts) assert(!text.includes("attacker.invalid"), text.slice(0, 200));
  } finally {
    await beacon.close();
    await Deno.remove(directory, { recursive: true });
  }
});
