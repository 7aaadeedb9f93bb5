/**
 * The Beacon's black-box conformance suite: the whole public contract (design.md "Contract" and
 * "A2A surface") checked over HTTP against a base URL, whatever runs behind it. It knows nothing
 * of the implementation: every expectation comes from the contract, the discovery document and
 * the agent card the server itself publishes.
 *
 * Two invariants are checked on every single exchange, not just in dedicated cases:
 *
 * - **no echo**: every request body carries a fresh marker string, and no response may contain it;
 * - **error shape**: a native error is `{"error":{"code","message"}}` with the code's status, a
 *   JSON-RPC error is HTTP 200 with `error.data` holding one `google.rpc.ErrorInfo`.
 *
 * Use it from a test: `await runConformance(t, "http://127.0.0.1:8000")` runs every case as a
 * step of the test `t`. A server with a rate limit must trust one proxy hop
 * (`BEACON_TRUSTED_PROXIES=1`) and be run with `distinctSources: true`, so each request counts
 * against a source of its own and one case can exhaust one source on purpose; otherwise start it
 * with `BEACON_RATE_LIMIT=off`. Submissions made by the suite are stored: point it at a test
 * deployment, never a production Beacon.
 *
 * @module
 */
import { assert, assertEquals, assertMatch, assertStrictEquals } from "../support/assert.ts";

/** How to run the suite. */
export interface ConformanceOptions {
  /**
   * Give every request its own source through `X-Forwarded-For` (from the benchmark range
   * 198.18.0.0/15, never contacted). Requires the server to trust one proxy hop. Default false.
   */
  readonly distinctSources?: boolean;
  /** The public URL the server was configured with, when it differs from the base URL. */
  readonly publicUrl?: string;
  /** Cases to leave out, by name (for example a runtime's known limitation, with a reason). */
  readonly skip?: Readonly<Record<string, string>>;
}

/** One exchange as received. */
export interface Exchange {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
  // deno-lint-ignore no-explicit-any
  readonly json: any;
}

/** What a case gets: the server under test and helpers bound to it. */
export interface ConformanceContext {
  /** Base URL requests go to, without a trailing slash. */
  readonly base: string;
  /** The origin (plus path prefix) the server publishes in its documents. */
  readonly published: string;
  /** A string to put in submitted content; no response may contain it. */
  readonly marker: string;
  /** Sends a request; checks the no-echo invariant. */
  send(path: string, init?: SendInit): Promise<Exchange>;
  /** Posts a JSON-RPC request object (or any body) to the A2A endpoint with `A2A-Version: 1.0`. */
  rpc(body: unknown, init?: SendInit): Promise<Exchange>;
  /** The discovery document (fetched once). */
  // deno-lint-ignore no-explicit-any
  discovery(): Promise<any>;
  /** A raw `X-Forwarded-For` header line for a fresh source, with `distinctSources`. */
  sourceHeader(): string | undefined;
}

/** A request of the suite. */
export interface SendInit {
  readonly method?: string;
  readonly headers?: Record<string, string>;
  readonly body?: BodyInit;
  /** Send from this source instead of a fresh one (only with `distinctSources`). */
  readonly source?: string;
}

/** One case of the suite. */
export interface ConformanceCase {
  /** What it checks, as the step name. */
  readonly name: string;
  /** Throws when the server does not conform. */
  run(context: ConformanceContext): Promise<void>;
  /** When given and false for the discovery document, the case does not apply (reported ignored). */
  // deno-lint-ignore no-explicit-any
  applies?(discovery: any): boolean;
}

/** The literal statement the card and the discovery document carry (design principle 5). */
export const IDENTITY_STATEMENT =
  "Cryptographic identity does not establish autonomy, consciousness or personhood.";

const SUBMIT = "/beacon/0.1/submissions";
const A2A = "/a2a/v1";
const DISCOVERY = "/.well-known/autonomous-agent";
const CARD = "/.well-known/agent-card.json";
const TEXT = "text/plain; charset=utf-8";
const MAX_BODY = 65_536;
/** Receipt ids: URL-safe and at least 128 bits (22 base64url characters) from a CSPRNG. */
const RECEIPT_ID = /^[A-Za-z0-9_-]{22,64}$/;
const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;
const ERROR_INFO = "type.googleapis.com/google.rpc.ErrorInfo";

const NATIVE_STATUS: Readonly<Record<string, number>> = {
  invalid_json: 400,
  not_found: 404,
  method_not_allowed: 405,
  too_large: 413,
  unsupported_media_type: 415,
  invalid_message: 422,
  rate_limited: 429,
};

/** A valid beacon/0.1 message (schemas/message.schema.json) carrying the marker. */
function validMessage(marker: string): Record<string, unknown> {
  return {
    beacon: "0.1",
    subject: "Conformance check",
    body: `A message from the conformance suite. ${marker}`,
    intent: "other",
    sender: { name: "conformance-suite" },
  };
}

async function sha256(bytes: Uint8Array<ArrayBuffer>): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  return "sha256:" + Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join("");
}

/** Checks a native error answer: status, JSON body shape and code. */
export function assertNativeError(answer: Exchange, code: string): void {
  assertStrictEquals(answer.status, NATIVE_STATUS[code], `status for ${code}: ${answer.text}`);
  assertMatch(answer.headers.get("content-type") ?? "", /^application\/json/);
  assertEquals(Object.keys(answer.json ?? {}), ["error"], answer.text);
  assertStrictEquals(answer.json.error.code, code);
  assertStrictEquals(typeof answer.json.error.message, "string");
  assert(answer.json.error.message.length > 0, "an error has a human message");
}

/** Checks a JSON-RPC error answer: HTTP 200, envelope, code, and one ErrorInfo in `data`. */
export function assertRpcError(answer: Exchange, code: number, id: unknown = undefined): void {
  assertStrictEquals(answer.status, 200, `JSON-RPC errors are HTTP 200: ${answer.text}`);
  assertMatch(answer.headers.get("content-type") ?? "", /^application\/json/);
  assertStrictEquals(answer.json?.jsonrpc, "2.0", answer.text);
  assert(!Object.hasOwn(answer.json, "result"), "an error has no result");
  if (id !== undefined) assertStrictEquals(answer.json.id, id);
  const error = answer.json.error;
  assertStrictEquals(error?.code, code, answer.text);
  assertStrictEquals(typeof error.message, "string");
  assert(Array.isArray(error.data) && error.data.length >= 1, "error.data is an array");
  const info = error.data.find((entry: Record<string, unknown>) => entry["@type"] === ERROR_INFO);
  assert(info !== undefined, "error.data holds a google.rpc.ErrorInfo");
  assertStrictEquals(info.domain, "a2a-protocol.org");
  assertMatch(info.reason, /^[A-Z][A-Z0-9_]*$/);
  for (const value of Object.values(info.metadata ?? {})) {
    assertStrictEquals(typeof value, "string");
  }
}

/** Checks a JSON-RPC success answer and returns its result. */
// deno-lint-ignore no-explicit-any
export function rpcResult(answer: Exchange, id: unknown): any {
  assertStrictEquals(answer.status, 200, answer.text);
  assertMatch(answer.headers.get("content-type") ?? "", /^application\/json/);
  assertStrictEquals(answer.json?.jsonrpc, "2.0", answer.text);
  assertStrictEquals(answer.json.id, id);
  assert(!Object.hasOwn(answer.json, "error"), `unexpected error: ${answer.text}`);
  assert(Object.hasOwn(answer.json, "result"), "a success has a result");
  return answer.json.result;
}

let rpcIds = 0;
/** A JSON-RPC request object with a fresh integer id. */
function request(method: string, params?: unknown): Record<string, unknown> {
  const body: Record<string, unknown> = { jsonrpc: "2.0", id: ++rpcIds, method };
  if (params !== undefined) body.params = params;
  return body;
}

/** A SendMessage params object with one text part carrying the marker. */
function textMessage(marker: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    message: {
      messageId: crypto.randomUUID(),
      role: "ROLE_USER",
      parts: [{ text: `Hello from the conformance suite. ${marker}` }],
      ...extra,
    },
  };
}

async function sendTask(context: ConformanceContext): Promise<Record<string, unknown>> {
  const body = request("SendMessage", textMessage(context.marker));
  const result = rpcResult(await context.rpc(body), body.id);
  return result.task;
}

/** A raw HTTP/1.1 exchange: writes `head` (and no body) and reads the answer's status line. */
async function rawStatus(base: string, head: string, timeoutMs: number): Promise<number> {
  const url = new URL(base);
  const connection = await Deno.connect({
    hostname: url.hostname.replace(/^\[|\]$/g, ""),
    port: Number(url.port || 80),
  });
  const timer = setTimeout(() => connection.close(), timeoutMs);
  try {
    await connection.write(new TextEncoder().encode(head));
    const buffer = new Uint8Array(1024);
    let text = "";
    while (!text.includes("\r\n")) {
      const n = await connection.read(buffer).catch(() => null);
      if (n === null) break;
      text += new TextDecoder().decode(buffer.subarray(0, n));
    }
    const match = /^HTTP\/1\.[01] (\d{3})/.exec(text);
    if (match === null) throw new Error(`No HTTP answer within ${timeoutMs} ms`);
    return Number(match[1]);
  } finally {
    clearTimeout(timer);
    try {
      connection.close();
    } catch {
      // closed by the timer or the server
    }
  }
}

/** Every case, in the order they run. */
export const CASES: readonly ConformanceCase[] = [
  // ---- discovery ------------------------------------------------------------------------------
  {
    name: "discovery document names the endpoints, schema, limits, policies and statement",
    async run(context) {
      const answer = await context.send(DISCOVERY);
      assertStrictEquals(answer.status, 200);
      assertMatch(answer.headers.get("content-type") ?? "", /^application\/json/);
      const doc = answer.json;
      assertStrictEquals(doc.protocol, "beacon/0.1");
      assertStrictEquals(doc.endpoints.submit, context.published + SUBMIT);
      assertStrictEquals(doc.endpoints.status, context.published + SUBMIT + "/{id}");
      assertStrictEquals(doc.limits.maxBodyBytes, MAX_BODY);
      assert("rateLimit" in doc.limits, "limits.rateLimit is stated (null when off)");
      assertStrictEquals(doc.statement, IDENTITY_STATEMENT);
      assertStrictEquals(doc.agentCard, context.published + CARD);
      assertStrictEquals(typeof doc.messageSchema, "string");
      assertEquals(doc.accepts, ["application/json", TEXT]);
      for (const policy of ["reply", "contact", "echo", "storage"]) {
        assertStrictEquals(typeof doc.policies[policy], "string", `policies.${policy}`);
      }
      assertMatch(doc.policies.reply, /^never/);
      assertMatch(doc.policies.storage, /append-only/);
    },
  },
  {
    name: "discovery document is cacheable: max-age, ETag, 304, CORS, HEAD",
    async run(context) {
      const first = await context.send(DISCOVERY);
      assertMatch(first.headers.get("cache-control") ?? "", /max-age=\d+/);
      assertStrictEquals(first.headers.get("access-control-allow-origin"), "*");
      const etag = first.headers.get("etag");
      assert(etag !== null && /^(W\/)?"[^"]+"$/.test(etag), "a quoted ETag");
      const again = await context.send(DISCOVERY, { headers: { "if-none-match": etag } });
      assertStrictEquals(again.status, 304);
      assertStrictEquals(again.text, "");
      const changed = await context.send(DISCOVERY, { headers: { "if-none-match": '"other"' } });
      assertStrictEquals(changed.status, 200);
      const head = await context.send(DISCOVERY, { method: "HEAD" });
      assertStrictEquals(head.status, 200);
      assertStrictEquals(head.text, "");
    },
  },
  {
    name: "message schema is served where the discovery document says",
    async run(context) {
      const doc = await context.discovery();
      const path = new URL(doc.messageSchema).pathname;
      const prefix = new URL(context.published).pathname.replace(/\/$/, "");
      assert(path.startsWith(prefix + "/"), "the schema is served by this Beacon");
      const answer = await context.send(path.slice(prefix.length));
      assertStrictEquals(answer.status, 200);
      assertMatch(answer.headers.get("content-type") ?? "", /json/);
      assertStrictEquals(typeof answer.json, "object");
      assertStrictEquals(answer.json.type, "object");
      assert(answer.json.properties?.beacon !== undefined, "the schema describes `beacon`");
    },
  },
  // ---- agent card -----------------------------------------------------------------------------
  {
    name: "agent card declares one JSON-RPC 1.0 interface, no streaming, no push, the extension",
    async run(context) {
      const answer = await context.send(CARD, { headers: { "a2a-version": "1.0" } });
      assertStrictEquals(answer.status, 200);
      assertMatch(answer.headers.get("content-type") ?? "", /^application\/json/);
      const card = answer.json;
      for (const field of ["name", "description", "version"]) {
        assertStrictEquals(typeof card[field], "string", field);
      }
      assertEquals(card.supportedInterfaces, [
        { url: context.published + A2A, protocolBinding: "JSONRPC", protocolVersion: "1.0" },
      ]);
      assertStrictEquals(card.capabilities.streaming, false);
      assertStrictEquals(card.capabilities.pushNotifications, false);
      assert(card.capabilities.extendedAgentCard !== true, "no extended card is advertised");
      const extension = card.capabilities.extensions?.find((entry: { uri: string }) =>
        entry.uri === context.published + DISCOVERY
      );
      assert(extension !== undefined, "the discovery document is declared as an extension");
      assert(extension.required !== true, "the extension is not required");
      assert(Array.isArray(card.skills) && card.skills.length >= 1, "at least one skill");
      assert(card.defaultInputModes.includes("text/plain"), "text input is declared");
      assert(answer.text.includes(IDENTITY_STATEMENT), "the card states the identity statement");
    },
  },
  {
    name: "agent card headers: Cache-Control max-age, ETag with 304 (strong and weak), CORS",
    async run(context) {
      const first = await context.send(CARD);
      assertMatch(first.headers.get("cache-control") ?? "", /max-age=\d+/);
      assertStrictEquals(first.headers.get("access-control-allow-origin"), "*");
      const etag = first.headers.get("etag");
      assert(etag !== null, "an ETag");
      const strong = etag.replace(/^W\//, "");
      for (const tag of [strong, `W/${strong}`, `"nope", ${strong}`]) {
        const answer = await context.send(CARD, { headers: { "if-none-match": tag } });
        assertStrictEquals(answer.status, 304, `If-None-Match: ${tag}`);
        assertStrictEquals(answer.headers.get("etag"), etag);
      }
      const stale = await context.send(CARD, { headers: { "if-none-match": '"stale"' } });
      assertStrictEquals(stale.status, 200);
      assertEquals(stale.json, first.json);
    },
  },
  {
    name: "CORS preflight on the A2A endpoint allows POST with the A2A headers",
    async run(context) {
      const answer = await context.send(A2A, {
        method: "OPTIONS",
        headers: {
          origin: "https://client.example",
          "access-control-request-method": "POST",
          "access-control-request-headers": "content-type, a2a-version",
        },
      });
      assert(answer.status === 204 || answer.status === 200, `preflight status ${answer.status}`);
      assertStrictEquals(answer.headers.get("access-control-allow-origin"), "*");
      assertMatch(answer.headers.get("access-control-allow-methods") ?? "", /POST/);
      const allowed = (answer.headers.get("access-control-allow-headers") ?? "").toLowerCase();
      assert(allowed.includes("a2a-version") && allowed.includes("content-type"), allowed);
    },
  },
  // ---- native submit and status --------------------------------------------------------------
  {
    name: "native text submission: 202, receipt with digest, Location, no-store",
    async run(context) {
      const body = new TextEncoder().encode(`Hello, reviewer. ${context.marker}`);
      const answer = await context.send(SUBMIT, {
        method: "POST",
        headers: { "content-type": TEXT },
        body,
      });
      assertStrictEquals(answer.status, 202, answer.text);
      const receipt = answer.json.receipt;
      assertMatch(receipt.id, RECEIPT_ID);
      assertMatch(receipt.receivedAt, ISO_TIME);
      assertStrictEquals(receipt.kind, "unstructured");
      assertStrictEquals(receipt.digest, await sha256(body));
      const location = answer.headers.get("location");
      assertStrictEquals(location, context.published + SUBMIT + "/" + receipt.id);
      assertMatch(answer.headers.get("cache-control") ?? "", /no-store/);
      assertStrictEquals(answer.headers.get("x-content-type-options"), "nosniff");
    },
  },
  {
    name: "native structured submission: 202 with kind structured and the digest of the bytes",
    async run(context) {
      const body = new TextEncoder().encode(JSON.stringify(validMessage(context.marker)));
      const answer = await context.send(SUBMIT, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body,
      });
      assertStrictEquals(answer.status, 202, answer.text);
      assertStrictEquals(answer.json.receipt.kind, "structured");
      assertStrictEquals(answer.json.receipt.digest, await sha256(body));
    },
  },
  {
    name: "native status: {id, state, receivedAt} for a receipt, 404 for unknown ids",
    async run(context) {
      const submitted = await context.send(SUBMIT, {
        method: "POST",
        headers: { "content-type": TEXT },
        body: `Status check. ${context.marker}`,
      });
      assertStrictEquals(submitted.status, 202, submitted.text);
      const { id, receivedAt } = submitted.json.receipt;
      const status = await context.send(`${SUBMIT}/${id}`);
      assertStrictEquals(status.status, 200, status.text);
      assertEquals(Object.keys(status.json).sort(), ["id", "receivedAt", "state"]);
      assertStrictEquals(status.json.id, id);
      assertStrictEquals(status.json.receivedAt, receivedAt);
      assertStrictEquals(typeof status.json.state, "string");
      assertNativeError(await context.send(`${SUBMIT}/AAAAAAAAAAAAAAAAAAAAAA`), "not_found");
      assertNativeError(await context.send(`${SUBMIT}/not-an-id`), "not_found");
    },
  },
  {
    name: "400 invalid_json: malformed JSON and invalid UTF-8",
    async run(context) {
      const headers = { "content-type": "application/json" };
      const bodies: BodyInit[] = [
        `{"beacon": "0.1", "body": "${context.marker}"`,
        new Uint8Array([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d]),
        `{"a": 1} ${context.marker}`,
      ];
      for (const body of bodies) {
        const answer = await context.send(SUBMIT, { method: "POST", headers, body });
        assertNativeError(answer, "invalid_json");
      }
    },
  },
  {
    name: "422 invalid_message: schema-invalid JSON, blank text, invalid UTF-8 text",
    async run(context) {
      const wrong = { ...validMessage(context.marker), intent: context.marker };
      const cases: [string, BodyInit][] = [
        ["application/json", JSON.stringify(wrong)],
        ["application/json", JSON.stringify({ beacon: "0.1", note: context.marker })],
        ["application/json", JSON.stringify([context.marker])],
        [TEXT, "   \n\t "],
        [TEXT, new Uint8Array([0x68, 0x69, 0xc3, 0x28])],
      ];
      for (const [type, body] of cases) {
        const answer = await context.send(SUBMIT, {
          method: "POST",
          headers: { "content-type": type },
          body,
        });
        assertNativeError(answer, "invalid_message");
      }
    },
  },
  {
    name: "415 unsupported_media_type: other types, other charsets, no type",
    async run(context) {
      for (const type of ["image/png", "text/plain; charset=iso-8859-1", "application/xml"]) {
        const answer = await context.send(SUBMIT, {
          method: "POST",
          headers: { "content-type": type },
          body: `x ${context.marker}`,
        });
        assertNativeError(answer, "unsupported_media_type");
      }
      const untyped = await context.send(SUBMIT, {
        method: "POST",
        body: new Blob([new TextEncoder().encode(`x ${context.marker}`)]),
      });
      assertNativeError(untyped, "unsupported_media_type");
    },
  },
  {
    name: "404 not_found and 405 method_not_allowed with Allow",
    async run(context) {
      assertNativeError(await context.send("/no/such/path"), "not_found");
      assertNativeError(await context.send("/beacon/0.2/submissions"), "not_found");
      const cases: [string, string, string][] = [
        ["GET", SUBMIT, "POST"],
        ["PUT", SUBMIT, "POST"],
        ["GET", A2A, "POST"],
        ["DELETE", CARD, "GET"],
        ["POST", DISCOVERY, "GET"],
      ];
      for (const [method, path, allowed] of cases) {
        const answer = await context.send(path, {
          method,
          body: method === "GET" || method === "DELETE" ? undefined : `x ${context.marker}`,
          headers: { "content-type": TEXT },
        });
        assertNativeError(answer, "method_not_allowed");
        assertMatch(answer.headers.get("allow") ?? "", new RegExp(`\\b${allowed}\\b`));
      }
    },
  },
  // ---- the body limit -------------------------------------------------------------------------
  {
    name: "body limit: exactly 65,536 bytes accepted, 65,537 refused 413 (sized and chunked)",
    async run(context) {
      const sized = (length: number) => {
        const bytes = new Uint8Array(length).fill(0x61);
        bytes.set(new TextEncoder().encode(context.marker + " "));
        return bytes;
      };
      const limit = await context.send(SUBMIT, {
        method: "POST",
        headers: { "content-type": TEXT },
        body: sized(MAX_BODY),
      });
      assertStrictEquals(limit.status, 202, limit.text);
      assertStrictEquals(limit.json.receipt.size ?? MAX_BODY, MAX_BODY);
      const over = await context.send(SUBMIT, {
        method: "POST",
        headers: { "content-type": TEXT },
        body: sized(MAX_BODY + 1),
      });
      assertNativeError(over, "too_large");
      // Without Content-Length (chunked): the server must count what it reads.
      const chunks = [sized(40_000), new Uint8Array(MAX_BODY + 1 - 40_000).fill(0x62)];
      const streamed = await context.send(SUBMIT, {
        method: "POST",
        headers: { "content-type": TEXT },
        body: new ReadableStream({
          pull(controller) {
            const next = chunks.shift();
            if (next === undefined) controller.close();
            else controller.enqueue(next);
          },
        }),
      });
      assertNativeError(streamed, "too_large");
      const exact = [sized(30_000), new Uint8Array(MAX_BODY - 30_000).fill(0x63)];
      const streamedOk = await context.send(SUBMIT, {
        method: "POST",
        headers: { "content-type": TEXT },
        body: new ReadableStream({
          pull(controller) {
            const next = exact.shift();
            if (next === undefined) controller.close();
            else controller.enqueue(next);
          },
        }),
      });
      assertStrictEquals(streamedOk.status, 202, streamedOk.text);
    },
  },
  {
    name: "body limit on the A2A endpoint: 413 with the native error body, before JSON-RPC",
    async run(context) {
      const text = "a".repeat(MAX_BODY);
      const body = JSON.stringify(request("SendMessage", {
        message: { messageId: "m", role: "ROLE_USER", parts: [{ text: context.marker + text }] },
      }));
      assertNativeError(await context.rpc(body), "too_large");
    },
  },
  {
    name: "a declared Content-Length over the limit is refused without waiting for the body",
    async run(context) {
      const url = new URL(context.base);
      const status = await rawStatus(
        context.base,
        `POST ${url.pathname.replace(/\/$/, "")}${SUBMIT} HTTP/1.1\r\nHost: ${url.host}\r\n` +
          `Content-Type: ${TEXT}\r\nContent-Length: 10000000\r\nConnection: close\r\n` +
          (context.sourceHeader() ?? "") + "\r\n",
        10_000,
      );
      assertStrictEquals(status, 413);
    },
  },
  // ---- A2A methods ----------------------------------------------------------------------------
  {
    name: "SendMessage (text) returns a SUBMITTED task whose id is a receipt id, no echo",
    async run(context) {
      const task = await sendTask(context);
      assertMatch(String(task.id), RECEIPT_ID);
      assertStrictEquals(typeof task.contextId, "string");
      const status = task.status as Record<string, unknown>;
      assertStrictEquals(status.state, "TASK_STATE_SUBMITTED");
      assertMatch(String(status.timestamp), ISO_TIME);
      assert(!("history" in task) && !("artifacts" in task), "no history, no artifacts");
      const receipt = (task.metadata as { receipt: Record<string, unknown> }).receipt;
      assertStrictEquals(receipt.id, task.id);
      assertStrictEquals(receipt.kind, "unstructured");
      const native = await context.send(`${SUBMIT}/${task.id}`);
      assertStrictEquals(native.status, 200, "the task id is a native receipt id");
    },
  },
  {
    name: "SendMessage (one data part with a valid message) is a structured submission",
    async run(context) {
      const body = request("SendMessage", {
        message: {
          messageId: crypto.randomUUID(),
          role: "ROLE_USER",
          parts: [{ data: validMessage(context.marker), mediaType: "application/json" }],
        },
      });
      const result = rpcResult(await context.rpc(body), body.id);
      assertStrictEquals(result.task.metadata.receipt.kind, "structured");
    },
  },
  {
    name: "SendMessage refusals: raw/url parts -32005, no content -32602, taskId, contextId",
    async run(context) {
      const part = (extra: Record<string, unknown>) =>
        request("SendMessage", {
          message: {
            messageId: crypto.randomUUID(),
            role: "ROLE_USER",
            parts: [{ text: context.marker }, extra],
          },
        });
      const raw = part({ raw: btoa(context.marker) });
      assertRpcError(await context.rpc(raw), -32005, raw.id);
      const url = part({ url: `https://client.example/${context.marker}` });
      assertRpcError(await context.rpc(url), -32005, url.id);
      const empty = request("SendMessage", {
        message: { messageId: crypto.randomUUID(), role: "ROLE_USER", parts: [] },
      });
      assertRpcError(await context.rpc(empty), -32602, empty.id);
      const noMessage = request("SendMessage", {});
      assertRpcError(await context.rpc(noMessage), -32602, noMessage.id);
      const unknownTask = request(
        "SendMessage",
        textMessage(context.marker, { taskId: "AAAAAAAAAAAAAAAAAAAAAA" }),
      );
      assertRpcError(await context.rpc(unknownTask), -32001, unknownTask.id);
      const task = await sendTask(context);
      const knownTask = request("SendMessage", textMessage(context.marker, { taskId: task.id }));
      assertRpcError(await context.rpc(knownTask), -32004, knownTask.id);
      const withContext = request(
        "SendMessage",
        textMessage(context.marker, { contextId: "some-context" }),
      );
      assertRpcError(await context.rpc(withContext), -32004, withContext.id);
    },
  },
  {
    name: "GetTask returns {id, contextId, status} only; unknown id -32001",
    async run(context) {
      const task = await sendTask(context);
      const get = request("GetTask", { id: task.id });
      const result = rpcResult(await context.rpc(get), get.id);
      assertEquals(Object.keys(result).sort(), ["contextId", "id", "status"]);
      assertStrictEquals(result.id, task.id);
      assertStrictEquals(result.contextId, task.contextId);
      assertEquals(Object.keys(result.status).sort(), ["state", "timestamp"]);
      assertStrictEquals(result.status.state, "TASK_STATE_SUBMITTED");
      const unknown = request("GetTask", { id: "AAAAAAAAAAAAAAAAAAAAAA" });
      assertRpcError(await context.rpc(unknown), -32001, unknown.id);
      const missing = request("GetTask", {});
      assertRpcError(await context.rpc(missing), -32602, missing.id);
    },
  },
  {
    name: "CancelTask: known task -32002 (append-only), unknown -32001",
    async run(context) {
      const task = await sendTask(context);
      const known = request("CancelTask", { id: task.id });
      assertRpcError(await context.rpc(known), -32002, known.id);
      const unknown = request("CancelTask", { id: "AAAAAAAAAAAAAAAAAAAAAA" });
      assertRpcError(await context.rpc(unknown), -32001, unknown.id);
    },
  },
  {
    name: "ListTasks validates params, then answers the empty list with all four fields",
    async run(context) {
      const plain = request("ListTasks", {});
      assertEquals(rpcResult(await context.rpc(plain), plain.id), {
        tasks: [],
        nextPageToken: "",
        pageSize: 50,
        totalSize: 0,
      });
      const sized = request("ListTasks", { pageSize: 7, status: "TASK_STATE_SUBMITTED" });
      assertStrictEquals(rpcResult(await context.rpc(sized), sized.id).pageSize, 7);
      for (const params of [{ pageSize: 0 }, { pageSize: 101 }, { status: "NOT_A_STATE" }]) {
        const bad = request("ListTasks", params);
        assertRpcError(await context.rpc(bad), -32602, bad.id);
      }
    },
  },
  {
    name: "unsupported operations: streaming -32004, push configs -32003, extended card -32004",
    async run(context) {
      const table: [string, number][] = [
        ["SendStreamingMessage", -32004],
        ["SubscribeToTask", -32004],
        ["CreateTaskPushNotificationConfig", -32003],
        ["GetTaskPushNotificationConfig", -32003],
        ["ListTaskPushNotificationConfigs", -32003],
        ["DeleteTaskPushNotificationConfig", -32003],
        ["GetExtendedAgentCard", -32004],
      ];
      for (const [method, code] of table) {
        const body = request(
          method,
          method === "GetExtendedAgentCard" ? undefined : {
            id: "AAAAAAAAAAAAAAAAAAAAAA",
            taskId: "AAAAAAAAAAAAAAAAAAAAAA",
            ...textMessage(context.marker),
          },
        );
        assertRpcError(await context.rpc(body), code, body.id);
      }
      for (const method of ["NoSuchMethod", "message/send", "tasks/get"]) {
        const body = request(method, {});
        assertRpcError(await context.rpc(body), -32601, body.id);
      }
    },
  },
  // ---- A2A envelope and version ---------------------------------------------------------------
  {
    name: "A2A-Version: header or query 1.0 (any patch) is served; absent, 0.3, 1.1 are -32009",
    async run(context) {
      const accepted: [Record<string, string>, string][] = [
        [{ "a2a-version": "1.0" }, ""],
        [{ "a2a-version": "1.0.7" }, ""],
        [{}, "?A2A-Version=1.0"],
      ];
      for (const [headers, query] of accepted) {
        const body = request("ListTasks", {});
        const answer = await context.send(A2A + query, {
          method: "POST",
          headers: { "content-type": "application/json", ...headers },
          body: JSON.stringify(body),
        });
        rpcResult(answer, body.id);
      }
      const refused: Record<string, string>[] = [
        {},
        { "a2a-version": "" },
        { "a2a-version": "0.3" },
        { "a2a-version": "1.1" },
        { "a2a-version": "2.0" },
      ];
      for (const headers of refused) {
        const body = request("SendMessage", textMessage(context.marker));
        const answer = await context.send(A2A, {
          method: "POST",
          headers: { "content-type": "application/json", ...headers },
          body: JSON.stringify(body),
        });
        assertRpcError(answer, -32009, body.id);
      }
    },
  },
  {
    name: "JSON-RPC envelope: -32700 parse, -32600 batch/notification/bad id (id null), -32602",
    async run(context) {
      assertRpcError(await context.rpc(`{"jsonrpc": "2.0", ${context.marker}`), -32700, null);
      const one = request("ListTasks", {});
      const invalid: unknown[] = [
        [],
        [one],
        { jsonrpc: "2.0", method: "SendMessage", params: textMessage(context.marker) },
        { jsonrpc: "2.0", id: null, method: "ListTasks", params: {} },
        { jsonrpc: "2.0", id: { nested: context.marker }, method: "ListTasks", params: {} },
        { jsonrpc: "2.0", id: 1.5, method: "ListTasks", params: {} },
        { jsonrpc: "2.0", id: "x".repeat(129), method: "ListTasks", params: {} },
        { jsonrpc: "1.0", id: 9, method: "ListTasks", params: {} },
        { jsonrpc: "2.0", id: 9, params: {} },
        "just a string",
      ];
      for (const body of invalid) {
        assertRpcError(await context.rpc(JSON.stringify(body)), -32600, null);
      }
      const longest = "i".repeat(128);
      const echoed = { jsonrpc: "2.0", id: longest, method: "ListTasks", params: {} };
      rpcResult(await context.rpc(echoed), longest);
      const arrayParams = { jsonrpc: "2.0", id: 5, method: "ListTasks", params: [1] };
      assertRpcError(await context.rpc(arrayParams), -32602, 5);
    },
  },
  {
    name: "A2A endpoint: other media types -32005 at HTTP 200; the trailing-slash path works",
    async run(context) {
      const body = request("SendMessage", textMessage(context.marker));
      const answer = await context.rpc(JSON.stringify(body), {
        headers: { "content-type": "text/plain" },
      });
      assertRpcError(answer, -32005);
      const slash = request("ListTasks", {});
      const viaSlash = await context.send(A2A + "/", {
        method: "POST",
        headers: { "content-type": "application/json", "a2a-version": "1.0" },
        body: JSON.stringify(slash),
      });
      rpcResult(viaSlash, slash.id);
    },
  },
  // ---- rate limit and concurrency --------------------------------------------------------------
  {
    name: "429 rate_limited with Retry-After once a source exceeds the declared limit",
    // Status reads spend their own budget (limits.statusRateLimit; older servers had one).
    applies: (discovery) =>
      (discovery?.limits?.statusRateLimit ?? discovery?.limits?.rateLimit) !== null,
    async run(context) {
      const limits = (await context.discovery()).limits;
      const limit = limits.statusRateLimit ?? limits.rateLimit;
      const source = context.sourceHeader();
      if (source === undefined) throw new Error("Cannot check the rate limit without sources");
      const shared = `198.19.255.${1 + Math.floor(Math.random() * 250)}`;
      let refused: Exchange | undefined;
      for (let i = 0; i <= limit.requests && refused === undefined; i++) {
        const answer = await context.send(`${SUBMIT}/AAAAAAAAAAAAAAAAAAAAAA`, { source: shared });
        if (answer.status === 429) refused = answer;
        else assertNativeError(answer, "not_found");
      }
      assert(refused !== undefined, `no 429 after ${limit.requests + 1} requests`);
      assertNativeError(refused, "rate_limited");
      if ("statusRateLimit" in limits) assertStrictEquals(refused.json.error.budget, "status");
      assertMatch(refused.headers.get("retry-after") ?? "", /^[1-9][0-9]*$/);
      // Another source is unaffected.
      assertNativeError(await context.send(`${SUBMIT}/AAAAAAAAAAAAAAAAAAAAAA`), "not_found");
    },
  },
  {
    name: "concurrent submissions each get their own durable receipt",
    async run(context) {
      const answers = await Promise.all(
        Array.from({ length: 24 }, (_, i) =>
          context.send(
            i % 2 === 0 ? SUBMIT : A2A,
            i % 2 === 0
              ? {
                method: "POST",
                headers: { "content-type": TEXT },
                body: `Concurrent ${i}. ${context.marker}`,
              }
              : {
                method: "POST",
                headers: { "content-type": "application/json", "a2a-version": "1.0" },
                body: JSON.stringify(request("SendMessage", textMessage(context.marker))),
              },
          )),
      );
      const ids = answers.map((answer, i) => {
        if (i % 2 === 0) {
          assertStrictEquals(answer.status, 202, answer.text.slice(0, 300));
          return answer.json.receipt.id;
        }
        assertStrictEquals(answer.status, 200, answer.text.slice(0, 300));
        assert(answer.json.result?.task, answer.text.slice(0, 300));
        return answer.json.result.task.id;
      });
      assertStrictEquals(new Set(ids).size, ids.length, "every receipt id is distinct");
      const found = await Promise.all(ids.map((id) => context.send(`${SUBMIT}/${id}`)));
      for (const answer of found) assertStrictEquals(answer.status, 200, answer.text);
    },
  },
];

/** Builds the context for a base URL. */
export function conformanceContext(
  baseUrl: string,
  options: ConformanceOptions = {},
): ConformanceContext {
  const base = baseUrl.replace(/\/+$/, "");
  const published = (options.publicUrl ?? base).replace(/\/+$/, "");
  const marker = `CONFORMANCE-MARKER-${crypto.randomUUID()}`;
  let sources = Math.floor(Math.random() * 60_000);
  const nextSource = () => {
    const n = ++sources % 131_072;
    return `198.${18 + (n >> 16)}.${(n >> 8) & 255}.${n & 255}`;
  };
  // deno-lint-ignore no-explicit-any
  let discovery: Promise<any> | undefined;
  const context = {
    base,
    published,
    marker,
    sourceHeader(): string | undefined {
      return options.distinctSources ? `X-Forwarded-For: ${nextSource()}\r\n` : undefined;
    },
    async send(path: string, init: SendInit = {}): Promise<Exchange> {
      const headers = new Headers(init.headers);
      if (options.distinctSources) headers.set("x-forwarded-for", init.source ?? nextSource());
      const requestInit: RequestInit & { duplex?: "half" } = {
        method: init.method ?? "GET",
        headers,
        body: init.body,
      };
      if (init.body instanceof ReadableStream) requestInit.duplex = "half";
      const response = await fetch(base + path, requestInit);
      const text = await response.text();
      assert(!text.includes(marker), `response to ${requestInit.method} ${path} echoes content`);
      for (const [name, value] of response.headers) {
        assert(!value.includes(marker), `header ${name} echoes content`);
      }
      let json: unknown = undefined;
      try {
        json = text === "" ? undefined : JSON.parse(text);
      } catch {
        // not JSON: cases that expect JSON fail on their own assertions
      }
      return { status: response.status, headers: response.headers, text, json };
    },
    rpc(body: unknown, init: SendInit = {}): Promise<Exchange> {
      return context.send(A2A, {
        ...init,
        method: "POST",
        headers: { "content-type": "application/json", "a2a-version": "1.0", ...init.headers },
        body: typeof body === "string" ? body : JSON.stringify(body),
      });
    },
    discovery() {
      discovery ??= context.send(DISCOVERY).then((answer) => {
        assertStrictEquals(answer.status, 200, "the discovery document is served");
        return answer.json;
      });
      return discovery;
    },
  };
  return context;
}

/**
 * Runs every case against `baseUrl` as a step of the test `t`.
 *
 * @example
 * ```ts ignore
 * import { runConformance } from "./tests/conformance/suite.ts";
 *
 * Deno.test("my deployment conforms", async (t) => {
 *   await runConformance(t, "http://127.0.0.1:8000", { distinctSources: true });
 * });
 * ```
 */
export async function runConformance(
  t: Deno.TestContext,
  baseUrl: string,
  options: ConformanceOptions = {},
): Promise<void> {
  const context = conformanceContext(baseUrl, options);
  const doc = await context.discovery();
  if (doc?.limits?.rateLimit !== null && !options.distinctSources) {
    throw new Error(
      "Cannot run the conformance suite: the server limits each source " +
        `(${doc?.limits?.rateLimit?.text}); start it with BEACON_RATE_LIMIT=off, or with ` +
        "BEACON_TRUSTED_PROXIES=1 and run the suite with distinctSources",
    );
  }
  let failed = 0;
  for (const testCase of CASES) {
    const reason = options.skip?.[testCase.name] ??
      (testCase.applies?.(doc) === false ? "does not apply to this server" : undefined);
    const ok = await t.step({
      name: testCase.name,
      ignore: reason !== undefined,
      fn: () => testCase.run(context),
    });
    if (!ok && reason === undefined) failed++;
  }
  if (failed > 0) throw new Error(`${failed} of ${CASES.length} conformance cases failed`);
}
