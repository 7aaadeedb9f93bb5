/**
 * One door out (docs/architecture.md §3, docs/threat-model.md §6.8): every response, made by the
 * pipeline or not, carries the hardening headers and produces exactly one request log line, with a
 * typed outcome derived from the status where the status tells it.
 */
import { assert, assertEquals } from "../support/assert.ts";
import { type Beacon, createBeacon } from "../../src/beacon.ts";
import type { RequestLogEntry } from "../../src/http/request_log.ts";
import { createDoor } from "../../src/middleware/door.ts";
import { errorResponse } from "../../src/http/errors.ts";

const HARDENING: Record<string, string> = {
  "x-content-type-options": "nosniff",
  "content-security-policy": "default-src 'none'; frame-ancestors 'none'",
  "referrer-policy": "no-referrer",
  "access-control-allow-origin": "*",
};

function assertHardened(response: Response, what: string): void {
  for (const [name, value] of Object.entries(HARDENING)) {
    assertEquals(response.headers.get(name), value, `${what}: ${name}`);
  }
  assert(response.headers.has("cache-control"), `${what}: cache-control`);
}

const SUBMIT = "http://127.0.0.1/beacon/0.1/submissions";
const TEXT = { "content-type": "text/plain; charset=utf-8" };

/** A Beacon on an in-memory database, rate limits off, and the log lines it writes. */
function loggedBeacon(): { beacon: Beacon; lines: RequestLogEntry[] } {
  const lines: RequestLogEntry[] = [];
  const beacon = createBeacon({
    database: { url: ":memory:" },
    rateLimit: "off",
    log: (entry) => lines.push(entry),
  });
  return { beacon, lines };
}

Deno.test("every pipeline answer leaves hardened with one log line and a derived outcome", async () => {
  const { beacon, lines } = loggedBeacon();
  try {
    const cases: [Request, number, RequestLogEntry["outcome"], string | undefined][] = [
      [new Request("http://127.0.0.1/.well-known/autonomous-agent"), 200, "served", undefined],
      [
        new Request(SUBMIT, { method: "POST", headers: TEXT, body: "Hi." }),
        202,
        "accepted",
        undefined,
      ],
      [new Request(SUBMIT, { method: "OPTIONS" }), 204, "served", undefined],
      [new Request("http://127.0.0.1/nope"), 404, "refused", "not_found"],
      [new Request(SUBMIT, { method: "DELETE" }), 405, "refused", "method_not_allowed"],
      [
        new Request(SUBMIT, { method: "POST", headers: TEXT, body: "x".repeat(70_000) }),
        413,
        "refused",
        "too_large",
      ],
      [
        new Request(SUBMIT, { headers: { host: "bad host" } }),
        400,
        "refused",
        "invalid_host",
      ],
    ];
    for (const [request, status, outcome, code] of cases) {
      lines.length = 0;
      const response = await beacon.fetch(request, { remoteAddress: "127.0.0.1" });
      await response.body?.cancel();
      const what = `${request.method} ${request.url}`;
      assertEquals(response.status, status, what);
      assertHardened(response, what);
      assertEquals(lines.length, 1, what);
      assertEquals(lines[0].status, status, what);
      assertEquals(lines[0].outcome, outcome, what);
      assertEquals(lines[0].code, code, what);
    }
  } finally {
    await beacon.close();
  }
});

Deno.test("a Beacon whose database cannot be opened answers 503 through the door", async () => {
  const lines: RequestLogEntry[] = [];
  const errors: unknown[] = [];
  const beacon = createBeacon({
    database: { url: "file:/dev/null/beacon.db" }, // a folder under a device: never openable
    log: (entry) => lines.push(entry),
    onError: (error) => errors.push(error),
  });
  try {
    const response = await beacon.fetch(
      new Request("http://127.0.0.1/.well-known/autonomous-agent"),
      { remoteAddress: null },
    );
    assertEquals(response.status, 503);
    assertEquals((await response.json()).error.code, "unavailable");
    assertHardened(response, "unavailable");
    assertEquals(lines.length, 1);
    assertEquals(lines[0].outcome, "failed");
    assertEquals(lines[0].code, "unavailable");
    assert(errors.length >= 1);
  } finally {
    await beacon.close();
  }
});

Deno.test("a closed Beacon answers 503 through the door", async () => {
  const lines: RequestLogEntry[] = [];
  const beacon = createBeacon({ database: { url: ":memory:" }, log: (entry) => lines.push(entry) });
  await beacon.ready();
  await beacon.close();
  const response = await beacon.fetch(
    new Request(SUBMIT, { method: "POST", headers: TEXT, body: "late" }),
    { remoteAddress: null },
  );
  assertEquals(response.status, 503);
  assertHardened(response, "closed");
  assertEquals(lines.length, 1);
  assertEquals(lines[0].method, "POST");
  assertEquals(lines[0].code, "unavailable");
});

Deno.test("an entry's deadline answer (beacon.unavailable) is hardened and the only log line", async () => {
  const { beacon, lines } = loggedBeacon();
  try {
    await beacon.ready();
    const request = new Request("http://127.0.0.1/.well-known/autonomous-agent");
    const deadline = beacon.unavailable(request);
    assertEquals(deadline.status, 503);
    assertHardened(deadline, "deadline");
    assertEquals(lines.length, 1);
    // The pipeline finishing later (workerd keeps it running) does not log the request again.
    const late = await beacon.fetch(request, { remoteAddress: null });
    assertEquals(late.status, 200);
    assertHardened(late, "late");
    assertEquals(lines.length, 1);
    assertEquals(lines[0].status, 503);
  } finally {
    await beacon.close();
  }
});

Deno.test("createDoor(): a failing log hook never changes the answer; no hook, still hardened", () => {
  const throwing = createDoor(() => {
    throw new Error("log sink down");
  }, () => 0);
  const response = throwing.leave(
    new Request("http://127.0.0.1/"),
    0,
    {},
    errorResponse("internal"),
  );
  assertEquals(response.status, 500);
  assertHardened(response, "throwing hook");
  const silent = createDoor(undefined, () => 0);
  assertHardened(
    silent.leave(new Request("http://127.0.0.1/"), 0, {}, new Response("x")),
    "no hook",
  );
});
