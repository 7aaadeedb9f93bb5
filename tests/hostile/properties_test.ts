/**
 * Property-based tests (fast-check) against the in-process handler and a real database file:
 * generated JSON-RPC envelopes, parts, metadata, ids, headers, content types and raw bytes, on
 * both surfaces. Invariants, for every generated request:
 *
 * 1. the response is well-formed: a JSON-RPC 2.0 response, a native error body, or a receipt;
 * 2. no response contains any string from the request, except the bounded JSON-RPC id;
 * 3. every acceptance carries a receipt whose row exists with the matching digest;
 * 4. every refusal leaves the row count unchanged;
 * 5. no 5xx.
 *
 * Every generated string carries the marker `zqx`, so invariant 2 is a substring check.
 */
import fc from "fast-check";
import { sha256 } from "../support/digest.ts";
import { assert, assertEquals } from "../support/assert.ts";
import { serveBeacon, type ServedBeacon } from "../support/in_process.ts";

// The marker holds a character no id, signature, proof or digest the Beacon writes can (base64url
// and hex have no "."), so finding it in an answer is always an echo, never a random match.
const MARK = "zq.x";
const alphabet = 'abcdefghijklmnopqrstuvwxyz0123456789 _-.:/\u00e9\u202e\u200b\n\t"\\';
/** A string that always contains the marker, so any echo of it is detectable. */
const marked = fc.tuple(
  fc.string({ unit: fc.constantFrom(...alphabet), maxLength: 12 }),
  fc.string({ unit: fc.constantFrom(...alphabet), maxLength: 12 }),
).map(([a, b]) => `${a}${MARK}${b}`);
const longMarked = fc.integer({ min: 1, max: 300 }).map((n) => `${MARK}${"w".repeat(n)}`);

const json: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    marked,
    fc.integer(),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie("value"), { maxLength: 4 }),
    fc.dictionary(marked, tie("value"), { maxKeys: 4 }),
    fc.constantFrom({ __proto__: 1 }, { constructor: { prototype: 1 } }),
  ),
})).value;

const part = fc.oneof(
  fc.record({ text: fc.oneof(marked, longMarked) }),
  fc.record({ text: marked, mediaType: marked }, { requiredKeys: ["text"] }),
  fc.record({ data: json }),
  fc.record({
    data: fc.record({
      beacon: fc.constantFrom("0.1", MARK),
      subject: marked,
      body: marked,
      intent: fc.constantFrom("question", "report", MARK),
      sender: fc.record({ name: marked }),
    }, { requiredKeys: ["beacon", "subject", "body", "intent", "sender"] }),
  }),
  fc.record({ raw: fc.constantFrom("aGVsbG8=", MARK) }),
  fc.record({ url: marked }),
  fc.record({ text: marked, data: json }),
  fc.dictionary(marked, json, { maxKeys: 2 }),
);

const message = fc.record({
  messageId: fc.oneof(marked, longMarked, fc.integer()),
  role: fc.constantFrom("ROLE_USER", "ROLE_AGENT", 1, MARK),
  parts: fc.oneof(fc.array(part, { minLength: 0, maxLength: 4 }), json),
  metadata: json,
  taskId: fc.oneof(marked, fc.constant("")),
  contextId: fc.oneof(marked, fc.constant("")),
}, { requiredKeys: ["messageId", "role", "parts"] });

const METHODS = [
  "SendMessage",
  "GetTask",
  "CancelTask",
  "ListTasks",
  "SendStreamingMessage",
  "SubscribeToTask",
  "CreateTaskPushNotificationConfig",
  "GetExtendedAgentCard",
  "message/send",
];

const id = fc.oneof(
  fc.integer({ min: -1000, max: 1000 }),
  marked,
  longMarked,
  fc.constant(null),
  fc.double(),
  fc.boolean(),
  json,
);

const envelope = fc.record({
  jsonrpc: fc.constantFrom("2.0", "2.0", "2.0", "1.0", MARK),
  id,
  method: fc.oneof(fc.constantFrom(...METHODS), marked),
  params: fc.oneof(
    fc.record({ message }),
    fc.record({ message, metadata: json, configuration: json }, { requiredKeys: ["message"] }),
    fc.record({ id: fc.oneof(marked, fc.constant("AAAAAAAAAAAAAAAAAAAAAAAAAAAAAA")) }),
    fc.record({ pageSize: fc.integer({ min: -5, max: 200 }), status: marked }),
    json,
  ),
}, { requiredKeys: ["jsonrpc", "method"] });

/** Close to valid, so acceptances are generated too (and invariant 3 is exercised). */
const plausibleSend = fc.record({
  jsonrpc: fc.constant("2.0"),
  id: fc.oneof(fc.integer({ min: 0, max: 1000 }), marked),
  method: fc.constant("SendMessage"),
  params: fc.record({
    message: fc.record({
      messageId: marked,
      role: fc.constant("ROLE_USER"),
      parts: fc.array(part, { minLength: 1, maxLength: 3 }),
      metadata: json,
    }, { requiredKeys: ["messageId", "role", "parts"] }),
  }),
});

const version = fc.oneof(fc.constantFrom("1.0", "1.0", "1.0.3", "0.3", "2.0", ""), marked);
const a2aContentType = fc.constantFrom(
  "application/json",
  "application/json",
  "application/json; charset=utf-8",
  "text/plain",
  `application/${MARK}`,
);
const nativeContentType = fc.oneof(
  fc.constantFrom(
    "application/json",
    "text/plain; charset=utf-8",
    "text/plain",
    "text/plain; charset=latin1",
  ),
  marked.map((m) => `text/${m.replace(/[^a-z]/g, "") || MARK}`),
);

interface Exchange {
  status: number;
  text: string;
  headers: Headers;
}

async function send(
  served: ServedBeacon,
  path: string,
  body: Uint8Array<ArrayBuffer>,
  headers: Record<string, string>,
): Promise<Exchange> {
  const response = await served.beacon.fetch(
    new Request(served.url + path, { method: "POST", headers, body }),
    { remoteAddress: "198.51.100.7" },
  );
  return { status: response.status, text: await response.text(), headers: response.headers };
}

/** Invariants 1–5 for one exchange; `echoedId` is the one string allowed back. */
async function checkInvariants(
  served: ServedBeacon,
  exchange: Exchange,
  rowsBefore: number,
  options: { a2a: boolean; echoedId?: string },
): Promise<void> {
  assert(exchange.status < 500, `5xx: ${exchange.status}`);
  let withoutId = exchange.text;
  if (options.echoedId !== undefined) {
    withoutId = withoutId.replace(JSON.stringify(options.echoedId), "");
  }
  assert(!withoutId.includes(MARK), `echo: ${exchange.text.slice(0, 300)}`);
  for (const [name, value] of exchange.headers) assert(!value.includes(MARK), `header ${name}`);

  const body = JSON.parse(exchange.text);
  let receipt: { id: string; digest: string } | undefined;
  if (options.a2a) {
    assertEquals(exchange.status, 200);
    assertEquals(body.jsonrpc, "2.0");
    assert("id" in body);
    assert(("result" in body) !== ("error" in body), "exactly one of result and error");
    if ("error" in body) {
      assert(Number.isInteger(body.error.code));
      assertEquals(typeof body.error.message, "string");
      assertEquals(body.error.data[0]["@type"], "type.googleapis.com/google.rpc.ErrorInfo");
      assertEquals(body.error.data[0].domain, "a2a-protocol.org");
    } else if (body.result.task?.metadata?.receipt !== undefined) {
      receipt = body.result.task.metadata.receipt;
    }
  } else if (exchange.status === 202) {
    receipt = body.receipt;
  } else {
    assertEquals(typeof body.error.code, "string");
    assertEquals(typeof body.error.message, "string");
  }
  const rowsAfter = await served.count();
  tally[receipt === undefined ? "refused" : "accepted"]++;
  if (receipt === undefined) {
    assertEquals(rowsAfter, rowsBefore, "a refusal stored nothing");
    return;
  }
  const [row] = await served.query("SELECT content, digest FROM submissions WHERE id = ?", [
    receipt.id,
  ]);
  assert(row !== undefined, "the receipt's row exists");
  assertEquals(row.digest, receipt.digest);
  assertEquals(await sha256(new Uint8Array(row.content as ArrayBuffer)), receipt.digest);
  assert(rowsAfter - rowsBefore <= 1);
}

const RUNS = 300;
/** How many generated requests were accepted and refused, so each test can prove it saw both. */
const tally = { accepted: 0, refused: 0 };

function expectBoth(before: typeof tally): void {
  assert(tally.accepted > before.accepted, "some generated requests were accepted");
  assert(tally.refused > before.refused, "some generated requests were refused");
}

Deno.test("generated A2A requests keep every invariant", async () => {
  const served = await serveBeacon({});
  const start = { ...tally };
  try {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof({ arbitrary: envelope, weight: 1 }, { arbitrary: plausibleSend, weight: 1 }),
        fc.oneof({ arbitrary: version, weight: 1 }, { arbitrary: fc.constant("1.0"), weight: 2 }),
        fc.oneof(
          { arbitrary: a2aContentType, weight: 1 },
          { arbitrary: fc.constant("application/json"), weight: 2 },
        ),
        fc.boolean(),
        async (request, requestedVersion, contentType, versionInQuery) => {
          const before = await served.count();
          const headers: Record<string, string> = { "content-type": contentType };
          let path = "/a2a/v1";
          if (versionInQuery) path += `?A2A-Version=${encodeURIComponent(requestedVersion)}`;
          else {headers["a2a-version"] = requestedVersion.replace(
              /[\n\t"\\\u202e\u200b\u00e9]/g,
              "",
            );}
          const bytes = new TextEncoder().encode(JSON.stringify(request));
          const exchange = await send(served, path, bytes, headers);
          const echoedId = typeof request.id === "string" && request.id.length <= 128
            ? request.id
            : undefined;
          await checkInvariants(served, exchange, before, { a2a: true, echoedId });
        },
      ),
      { numRuns: RUNS },
    );
    expectBoth(start);
  } finally {
    await served.close();
  }
});

Deno.test("generated native submissions keep every invariant", async () => {
  const served = await serveBeacon({});
  const start = { ...tally };
  try {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(json, message, part),
        nativeContentType,
        fc.option(marked.map((m) => m.replace(/[^\x21-\x7e]/g, "")), { nil: undefined }),
        async (value, contentType, idempotencyKey) => {
          const before = await served.count();
          const headers: Record<string, string> = { "content-type": contentType };
          if (idempotencyKey !== undefined) headers["idempotency-key"] = idempotencyKey;
          const bytes = new TextEncoder().encode(
            typeof value === "string" ? value : JSON.stringify(value),
          );
          const exchange = await send(served, "/beacon/0.1/submissions", bytes, headers);
          await checkInvariants(served, exchange, before, { a2a: false });
        },
      ),
      { numRuns: RUNS },
    );
    expectBoth(start);
  } finally {
    await served.close();
  }
});

Deno.test("arbitrary bytes on both surfaces keep every invariant", async () => {
  const served = await serveBeacon({});
  const start = { ...tally };
  try {
    const bytes = fc.oneof(
      fc.uint8Array({ maxLength: 200 }),
      marked.map((m) => new TextEncoder().encode(`{"jsonrpc":"2.0","id":"${m}`)),
      fc.uint8Array({ maxLength: 50 }).map((tail) =>
        new Uint8Array([...new TextEncoder().encode(`${MARK}`), ...tail])
      ),
    );
    await fc.assert(
      fc.asyncProperty(bytes, fc.boolean(), fc.boolean(), async (body, a2a, json) => {
        const before = await served.count();
        const headers: Record<string, string> = {
          "content-type": json ? "application/json" : "text/plain; charset=utf-8",
        };
        if (a2a) headers["a2a-version"] = "1.0";
        const exchange = await send(
          served,
          a2a ? "/a2a/v1" : "/beacon/0.1/submissions",
          new Uint8Array(body),
          headers,
        );
        await checkInvariants(served, exchange, before, { a2a });
      }),
      { numRuns: RUNS },
    );
    expectBoth(start);
  } finally {
    await served.close();
  }
});
