import { assert, assertEquals } from "../support/assert.ts";
import { readBodyWithin } from "../../src/middleware/body_limit.ts";

const LIMIT = 64;

function streamOf(chunks: Uint8Array[], onPull?: () => void): ReadableStream<Uint8Array> {
  let index = 0;
  return new ReadableStream({
    pull(controller) {
      onPull?.();
      if (index < chunks.length) controller.enqueue(chunks[index++]);
      else controller.close();
    },
  });
}

function request(body: BodyInit | null, headers: Record<string, string> = {}): Request {
  return new Request("http://127.0.0.1/x", { method: "POST", body, headers });
}

Deno.test("readBodyWithin() accepts a body of exactly the limit", async () => {
  const body = await readBodyWithin(request(new Uint8Array(LIMIT)), LIMIT, 1000);
  assert(body instanceof Uint8Array);
  assertEquals(body.byteLength, LIMIT);
});

Deno.test("readBodyWithin() refuses limit + 1 bytes", async () => {
  assertEquals(await readBodyWithin(request(new Uint8Array(LIMIT + 1)), LIMIT, 1000), "too_large");
});

Deno.test("readBodyWithin() refuses an oversized Content-Length before reading", async () => {
  let pulls = 0;
  const stream = streamOf([new Uint8Array(1)], () => pulls++);
  const refusal = await readBodyWithin(
    request(stream, { "content-length": String(LIMIT + 1) }),
    LIMIT,
    1000,
  );
  assertEquals(refusal, "too_large");
  assertEquals(pulls <= 1, true, "the body is not read"); // the stream may prime one pull
});

Deno.test("readBodyWithin() counts 1-byte chunks of a body without a length", async () => {
  const ok = Array.from({ length: LIMIT }, () => new Uint8Array([120]));
  const body = await readBodyWithin(request(streamOf(ok)), LIMIT, 1000);
  assert(body instanceof Uint8Array);
  assertEquals(body.byteLength, LIMIT);
  const over = Array.from({ length: LIMIT + 1 }, () => new Uint8Array([120]));
  assertEquals(await readBodyWithin(request(streamOf(over)), LIMIT, 1000), "too_large");
});

Deno.test("readBodyWithin() stops reading at the first byte past the limit", async () => {
  let pulls = 0;
  const endless = new ReadableStream<Uint8Array>({
    pull(controller) {
      pulls++;
      controller.enqueue(new Uint8Array(16));
    },
  });
  assertEquals(await readBodyWithin(request(endless), LIMIT, 1000), "too_large");
  assert(pulls <= LIMIT / 16 + 2, `read ${pulls} chunks`);
});

Deno.test("readBodyWithin() does not trust a Content-Length that lies low", async () => {
  const stream = streamOf([new Uint8Array(LIMIT), new Uint8Array(LIMIT)]);
  assertEquals(
    await readBodyWithin(request(stream, { "content-length": "10" }), LIMIT, 1000),
    "too_large",
  );
});

Deno.test("readBodyWithin() ignores Content-Length when Transfer-Encoding is present", async () => {
  const body = await readBodyWithin(
    request(streamOf([new Uint8Array(8)]), {
      "content-length": String(LIMIT * 10),
      "transfer-encoding": "chunked",
    }),
    LIMIT,
    1000,
  );
  assert(body instanceof Uint8Array);
  assertEquals(body.byteLength, 8);
});

Deno.test("readBodyWithin() answers a stalled body with request_timeout", async () => {
  let cancelled = false;
  const stalled = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(new Uint8Array(4));
    },
    cancel() {
      cancelled = true;
    },
  });
  assertEquals(await readBodyWithin(request(stalled), LIMIT, 50), "request_timeout");
  assert(cancelled, "the stalled stream is cancelled so the connection is freed");
});

Deno.test("readBodyWithin() returns an empty body for a request without one", async () => {
  const body = await readBodyWithin(request(null), LIMIT, 1000);
  assert(body instanceof Uint8Array);
  assertEquals(body.byteLength, 0);
});

Deno.test("readBodyWithin() answers a stalled body with a Content-Length with request_timeout", async () => {
  const stalled = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(new Uint8Array(4));
    },
  });
  const declared = new Request("http://127.0.0.1/", {
    method: "POST",
    body: stalled,
    headers: { "content-length": "10" },
    duplex: "half",
  } as RequestInit);
  assertEquals(await readBodyWithin(declared, LIMIT, 50), "request_timeout");
});

Deno.test("readBodyWithin() answers a body that can never complete with unavailable", async () => {
  const used = new Request("http://127.0.0.1/", {
    method: "POST",
    body: "abcd",
    headers: { "content-length": "4" },
  });
  await used.arrayBuffer();
  assertEquals(await readBodyWithin(used, LIMIT, 1000), "unavailable");
});

Deno.test("readBodyWithin() keeps a view of a page or more, and copies a smaller view", async () => {
  // As Deno hands them: each chunk a view at the start of its own larger buffer.
  const view = (length: number) => new Uint8Array(new ArrayBuffer(65_536), 0, length).fill(120);
  const large = view(16_384);
  const kept = await readBodyWithin(request(streamOf([large])), 65_536, 1000);
  assert(kept instanceof Uint8Array);
  assert(kept.buffer === large.buffer, "a 16 KiB view is kept, not copied");
  const small = view(100);
  const copied = await readBodyWithin(request(streamOf([small])), 65_536, 1000);
  assert(copied instanceof Uint8Array);
  assert(copied.buffer !== small.buffer, "a 100-byte view is copied");
  assertEquals(copied.buffer.byteLength, 100, "the copy holds only its bytes, not the 64 KiB");
  assertEquals([...copied], [...small]);
});
