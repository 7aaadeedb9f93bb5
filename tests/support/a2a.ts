/**
 * Helpers for the A2A tests: JSON-RPC calls over raw HTTP against the real server, with the
 * invariants every JSON-RPC answer must keep checked on every call (HTTP 200,
 * `application/json`, `jsonrpc: "2.0"`, an `error.data` array holding one
 * `google.rpc.ErrorInfo` with string metadata), and row counts read through a separate
 * database connection.
 *
 * @module
 */
import { type Client, createClient } from "@libsql/client";
import { assert, assertEquals, assertStrictEquals } from "./assert.ts";
import { type ServerProcess, startServer } from "./server.ts";

/** A JSON-RPC answer as received. */
export interface RpcAnswer {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
  // deno-lint-ignore no-explicit-any
  readonly json: any;
}

/** How to send one request. */
export interface SendOptions {
  /** Extra or replacing headers; `content-type` defaults to application/json. */
  readonly headers?: Record<string, string>;
  /** The `A2A-Version` header: default "1.0"; `null` sends none. */
  readonly version?: string | null;
  /** Path and query after the origin; default `/a2a/v1`. */
  readonly path?: string;
}

/** Checks what every JSON-RPC answer of the Beacon must be. */
export function checkRpcAnswer(answer: RpcAnswer): void {
  assertStrictEquals(answer.status, 200, "JSON-RPC answers are HTTP 200");
  assertStrictEquals(answer.headers.get("content-type"), "application/json");
  assertStrictEquals(answer.json.jsonrpc, "2.0");
  const hasResult = Object.hasOwn(answer.json, "result");
  const hasError = Object.hasOwn(answer.json, "error");
  assert(hasResult !== hasError, "exactly one of result and error");
  if (!hasError) return;
  const error = answer.json.error;
  assertEquals(Object.keys(error).sort(), ["code", "data", "message"]);
  assert(Number.isInteger(error.code));
  assertStrictEquals(typeof error.message, "string");
  // One ErrorInfo; -32602 adds one google.rpc.BadRequest naming every violation (A2A §9.5).
  const expected = error.code === -32602 ? 2 : 1;
  assert(
    Array.isArray(error.data) && error.data.length === expected,
    "data: ErrorInfo [BadRequest]",
  );
  const info = error.data[0];
  assertStrictEquals(info["@type"], "type.googleapis.com/google.rpc.ErrorInfo");
  assertStrictEquals(info.domain, "a2a-protocol.org");
  assert(/^[A-Z][A-Z0-9_]*$/.test(info.reason), "reason is UPPER_SNAKE");
  for (const value of Object.values(info.metadata)) assertStrictEquals(typeof value, "string");
  if (expected === 2) {
    const badRequest = error.data[1];
    assertEquals(Object.keys(badRequest), ["@type", "fieldViolations"]);
    assertStrictEquals(badRequest["@type"], "type.googleapis.com/google.rpc.BadRequest");
    const violations = badRequest.fieldViolations;
    assert(Array.isArray(violations) && violations.length >= 1 && violations.length <= 20);
    for (const violation of violations) {
      assertEquals(Object.keys(violation), ["field", "description"]);
      assertStrictEquals(typeof violation.field, "string");
      assertStrictEquals(typeof violation.description, "string");
    }
    // The ErrorInfo names the first violation's field, as before.
    assertStrictEquals(violations[0].field, info.metadata.field);
  }
}

/** The test server, a database reader, and a JSON-RPC caller. */
export interface A2AServer {
  readonly server: ServerProcess;
  readonly url: string;
  /** Posts a body (a string is sent as is, anything else as JSON). */
  post(body: unknown, options?: SendOptions): Promise<RpcAnswer>;
  /** Posts `{jsonrpc, id, method, params}`. */
  call(
    method: string,
    params?: unknown,
    id?: string | number,
    options?: SendOptions,
  ): Promise<RpcAnswer>;
  /** Rows in `submissions`. */
  count(): Promise<number>;
  /** The database, read through a separate connection. */
  readonly db: Client;
  close(): Promise<void>;
}

/** Starts the real server (src/adapter/deno/server.ts) with a temporary database. */
export async function startA2AServer(env: Record<string, string> = {}): Promise<A2AServer> {
  const server = await startServer({ env });
  const db = createClient({ url: server.databaseUrl });
  const post = async (body: unknown, options: SendOptions = {}): Promise<RpcAnswer> => {
    const headers: Record<string, string> = { "content-type": "application/json" };
    if (options.version !== null) headers["a2a-version"] = options.version ?? "1.0";
    Object.assign(headers, options.headers ?? {});
    const response = await fetch(server.url + (options.path ?? "/a2a/v1"), {
      method: "POST",
      headers,
      body: typeof body === "string" || body instanceof Uint8Array
        ? body as string | Uint8Array<ArrayBuffer>
        : JSON.stringify(body),
    });
    const text = await response.text();
    let json: unknown = undefined;
    try {
      json = JSON.parse(text);
    } catch {
      // checked by the caller
    }
    return { status: response.status, headers: response.headers, text, json };
  };
  return {
    server,
    url: server.url,
    db,
    post,
    async call(method, params, id = 1, options = {}) {
      const body: Record<string, unknown> = { jsonrpc: "2.0", id, method };
      if (params !== undefined) body.params = params;
      const answer = await post(body, options);
      checkRpcAnswer(answer);
      return answer;
    },
    async count() {
      const result = await db.execute("SELECT count(*) AS n FROM submissions");
      return Number(result.rows[0].n);
    },
    async close() {
      db.close();
      await server.stop();
      await Deno.remove(server.directory, { recursive: true }).catch(() => {});
    },
  };
}

/** A text-only SendMessage params object. */
export function textMessage(text: string, messageId: string = crypto.randomUUID()) {
  return { message: { messageId, role: "ROLE_USER", parts: [{ text }] } };
}

/** The `error.data[0]` ErrorInfo of an answer. */
// deno-lint-ignore no-explicit-any
export function errorInfo(answer: RpcAnswer): any {
  return answer.json.error.data[0];
}
