/**
 * TEST SCAFFOLDING — NOT PART OF THE BEACON. This module is never shipped, is not imported by
 * anything under `src/`, and is not a way to run the Beacon. It exists only so that tests can
 * exercise the Beacon's remote (Turso / sqld) storage path without a real sqld, which cannot be
 * installed on the machines this project is built on.
 *
 * A small Hrana-over-HTTP server backed by an embedded libSQL database file, written from the
 * Hrana specifications in the tursodatabase/libsql repository:
 *
 * - `docs/HTTP_V2_SPEC.md` ("HTTP API v2", §"Check support for version 2", §"Execute requests on
 *   a stream", §"Requests"): `GET /v2`, `POST /v2/pipeline`.
 * - `docs/HRANA_3_SPEC.md` (§"Hrana over HTTP": "Endpoints", "Requests", "Errors"; §"Shared
 *   structures"): `GET /v3`, `POST /v3/pipeline`, `POST /v3/cursor` (JSON encoding only).
 *
 * Every stream is one dedicated libSQL connection (HRANA_3_SPEC §"Overview": "Each stream
 * corresponds to a SQLite connection"), so transaction state survives between pipeline requests
 * exactly as in sqld. Streams are addressed by single-use, unguessable batons and are rolled back
 * and closed after an idle timeout (HRANA_3_SPEC §"Hrana over HTTP" / "Overview").
 *
 * Where the specification leaves the server free (error codes, HTTP status of a stream error),
 * the choices below follow what sqld does, so that code which works against this server also
 * works against Turso. Notably the `code` of an SQLite error is the *primary* code
 * (`SQLITE_CONSTRAINT`, as sqld and the embedded `@libsql/client` both report it);
 * `extendedErrorCodes: true` sends the extended name (`SQLITE_CONSTRAINT_TRIGGER`) instead.
 *
 * Not implemented, because `@libsql/client` 0.18 over HTTP never uses it: the Protobuf encoding
 * (`/v3-protobuf/*` answers 404, so a client probing for it falls back to JSON), Hrana over
 * WebSocket, `replication_index`, and the `rows_read` / `rows_written` statistics.
 *
 * Known differences from sqld: SQL syntax errors come back as `SQLITE_ERROR` (sqld parses first
 * and says `SQL_PARSE_ERROR`); an unknown baton gets HTTP 400 (sqld: 500; the client reads the
 * same JSON `Error` from both); `EXPLAIN` runs on a connection of its own (see `#explain`); text
 * values with an embedded NUL are cut at the NUL by the native libsql binding.
 *
 * @module
 */

import { Buffer } from "node:buffer";
// The native `libsql` package is the one `@libsql/client` itself uses for local files: one
// connection per Hrana stream.
import Database from "libsql";

/** Options of {@link startHranaServer}. */
export interface HranaServerOptions {
  /** Path of the libSQL database file (created if missing). Must be a real file, not `:memory:`. */
  path: string;
  /** When set, every pipeline or cursor request must carry `Authorization: Bearer <authToken>`. */
  authToken?: string;
  /** TCP port on 127.0.0.1; 0 (the default) picks a free ephemeral port. */
  port?: number;
  /** Idle time after which an open stream is rolled back and closed (default 10 000 ms). */
  streamIdleTimeoutMs?: number;
  /** Send extended SQLite error codes (`SQLITE_CONSTRAINT_TRIGGER`) instead of primary ones. */
  extendedErrorCodes?: boolean;
  /**
   * How long a statement waits for another stream's write lock before it fails with
   * SQLITE_BUSY (default 5 000 ms).
   */
  lockWaitMs?: number;
}

/** Counters for assertions in tests. */
export interface HranaServerStats {
  /** Pipeline requests received (after authentication), whatever their outcome. */
  pipelines: number;
  /** Streams (database connections) currently open. */
  streamsOpen: number;
}

/** A running test server. */
export interface HranaServer {
  /** Base URL for `createClient({ url })`: `http://127.0.0.1:<port>`. */
  url: string;
  /** Stops listening, rolls back and closes every open stream. Idempotent. */
  close(): Promise<void>;
  /** Current counters. */
  stats(): HranaServerStats;
  /** Makes every later request wait `ms` before it is processed (a slow database). */
  setDelay(ms: number): void;
}

/**
 * Starts a Hrana-over-HTTP test server on 127.0.0.1 backed by the libSQL file at `options.path`.
 * The file is switched to WAL mode so that streams can read while another one writes.
 */
export async function startHranaServer(options: HranaServerOptions): Promise<HranaServer> {
  const path = options.path;
  if (path === "" || path === ":memory:" || path.startsWith("file::memory:")) {
    throw new Error(
      "startHranaServer needs a database file: every stream opens its own connection",
    );
  }
  // WAL is persistent in the file; set it once, before any stream exists.
  const setup = new Database(path);
  try {
    setup.exec("PRAGMA journal_mode = WAL");
  } finally {
    setup.close();
  }
  const engine = new Engine(options);
  const { promise: listening, resolve } = Promise.withResolvers<Deno.NetAddr>();
  let delayMs = 0;
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: options.port ?? 0, onListen: (addr) => resolve(addr) },
    async (request) => {
      // A slow database, for fault tests: every request waits before it is processed.
      if (delayMs > 0) await new Promise((wake) => setTimeout(wake, delayMs));
      return engine.handle(request);
    },
  );
  const addr = await listening;
  let closed: Promise<void> | undefined;
  return {
    url: `http://127.0.0.1:${addr.port}`,
    close() {
      closed ??= (async () => {
        engine.beginClose();
        await server.shutdown();
        engine.closeAll();
      })();
      return closed;
    },
    stats: () => engine.stats(),
    setDelay(ms: number) {
      delayMs = ms;
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Protocol structures (HRANA_3_SPEC §"Shared structures", §"Hrana over HTTP" / "Requests")
// ---------------------------------------------------------------------------------------------

type Db = InstanceType<typeof Database>;
type Version = 2 | 3;

/** A decoded `Value` (HRANA_3_SPEC §"Values"). */
type Value = null | bigint | number | string | Uint8Array;

interface NamedArg {
  name: string;
  value: Value;
}

/** A decoded `Stmt` (HRANA_3_SPEC §"Statements"). */
interface Stmt {
  sql?: string;
  sqlId?: number;
  args: Value[];
  namedArgs: NamedArg[];
  wantRows: boolean;
}

/** A decoded `BatchCond` (HRANA_3_SPEC §"Batches" / "Conditions"). */
type BatchCond =
  | { type: "ok" | "error"; step: number }
  | { type: "not"; cond: BatchCond }
  | { type: "and" | "or"; conds: BatchCond[] }
  | { type: "is_autocommit" };

interface BatchStep {
  condition?: BatchCond;
  stmt: Stmt;
}

/** A decoded `StreamRequest` (HRANA_3_SPEC §"Hrana over HTTP" / "Requests"). */
type StreamRequest =
  | { type: "close" }
  | { type: "execute"; stmt: Stmt }
  | { type: "batch"; steps: BatchStep[] }
  | { type: "sequence" | "describe"; sql?: string; sqlId?: number }
  | { type: "store_sql"; sqlId: number; sql: string }
  | { type: "close_sql"; sqlId: number }
  | { type: "get_autocommit" };

/** `Value` in JSON form. */
type ValueJson =
  | { type: "null" }
  | { type: "integer"; value: string }
  | { type: "float"; value: number }
  | { type: "text"; value: string }
  | { type: "blob"; base64: string };

/** `Error` (HRANA_3_SPEC §"Shared structures" / "Errors"). */
interface ErrorJson {
  message: string;
  code: string;
}

interface ColJson {
  name: string | null;
  decltype: string | null;
}

/** `StmtResult` (HRANA_3_SPEC §"Statement results"), plus the optional `query_duration_ms`. */
interface StmtResultJson {
  cols: ColJson[];
  rows: ValueJson[][];
  affected_row_count: number;
  last_insert_rowid: string | null;
  query_duration_ms: number;
}

/** `BatchResult` (HRANA_3_SPEC §"Batch results"). */
interface BatchResultJson {
  step_results: (StmtResultJson | null)[];
  step_errors: (ErrorJson | null)[];
}

type StreamResultJson =
  | { type: "ok"; response: Record<string, unknown> & { type: string } }
  | { type: "error"; error: ErrorJson };

/**
 * A violation of the protocol by the client. Answered with HTTP 400 and the stream is dropped
 * (HRANA_3_SPEC §"Hrana over HTTP" / "Errors": after a 4xx "the stream is no longer valid").
 */
class ProtocolError extends Error {}

/** A failed request on a stream, reported as a `StreamResultError` (HTTP 200). */
class StmtError extends Error {
  constructor(message: string, readonly code: string) {
    super(message);
  }
  toJson(): ErrorJson {
    return { message: this.message, code: this.code };
  }
}

// Limits on stored SQL texts per stream, as sqld applies them (HRANA_3_SPEC §"Store an SQL text
// on the server" leaves the limits to the server). @libsql/client caches at most 30 texts.
const MAX_SQL_COUNT = 50;
const MAX_STORED_SQL_BYTES = 5 * 1000;

/** Blocking wait inside SQLite; kept short because every connection lives on this one thread. */
const BUSY_TIMEOUT_MS = 20;
/** Pause between two attempts of a statement that hit SQLITE_BUSY (see `Engine.#run`). */
const BUSY_RETRY_INTERVAL_MS = 5;

// ---------------------------------------------------------------------------------------------
// JSON decoding. Unknown fields are ignored (HRANA_3_SPEC §"Encoding": forward compatibility);
// anything malformed is a ProtocolError.
// ---------------------------------------------------------------------------------------------

function asObject(v: unknown, what: string): Record<string, unknown> {
  if (typeof v !== "object" || v === null || Array.isArray(v)) {
    throw new ProtocolError(`${what} must be an object`);
  }
  return v as Record<string, unknown>;
}

function asArray(v: unknown, what: string): unknown[] {
  if (!Array.isArray(v)) throw new ProtocolError(`${what} must be an array`);
  return v;
}

function asString(v: unknown, what: string): string {
  if (typeof v !== "string") throw new ProtocolError(`${what} must be a string`);
  return v;
}

function optString(v: unknown, what: string): string | undefined {
  return v === undefined || v === null ? undefined : asString(v, what);
}

function asInt32(v: unknown, what: string): number {
  if (typeof v !== "number" || !Number.isInteger(v) || v < -(2 ** 31) || v >= 2 ** 31) {
    throw new ProtocolError(`${what} must be a 32-bit integer`);
  }
  return v;
}

function optInt32(v: unknown, what: string): number | undefined {
  return v === undefined || v === null ? undefined : asInt32(v, what);
}

function asUint32(v: unknown, what: string): number {
  if (typeof v !== "number" || !Number.isInteger(v) || v < 0 || v >= 2 ** 32) {
    throw new ProtocolError(`${what} must be an unsigned 32-bit integer`);
  }
  return v;
}

const MIN_I64 = -(2n ** 63n);
const MAX_I64 = 2n ** 63n - 1n;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** HRANA_3_SPEC §"Values": integers travel as decimal strings, blobs as base64. */
function decodeValue(v: unknown): Value {
  const o = asObject(v, "Value");
  switch (o.type) {
    case "null":
      return null;
    case "integer": {
      const text = asString(o.value, "integer value");
      if (!/^-?[0-9]+$/.test(text)) throw new ProtocolError("integer value must be decimal");
      const n = BigInt(text);
      if (n < MIN_I64 || n > MAX_I64) throw new ProtocolError("integer value exceeds 64 bits");
      return n;
    }
    case "float":
      if (typeof o.value !== "number") throw new ProtocolError("float value must be a number");
      return o.value;
    case "text":
      return asString(o.value, "text value");
    case "blob": {
      const text = asString(o.base64, "blob base64");
      if (!BASE64.test(text)) throw new ProtocolError("blob base64 is not valid base64");
      return new Uint8Array(Buffer.from(text, "base64"));
    }
    default:
      throw new ProtocolError(`unknown Value type ${JSON.stringify(o.type)}`);
  }
}

/** HRANA_3_SPEC §"Statements". */
function decodeStmt(v: unknown): Stmt {
  const o = asObject(v, "Stmt");
  const args = o.args === undefined || o.args === null ? [] : asArray(o.args, "args");
  const named = o.named_args === undefined || o.named_args === null
    ? []
    : asArray(o.named_args, "named_args");
  if (o.want_rows !== undefined && o.want_rows !== null && typeof o.want_rows !== "boolean") {
    throw new ProtocolError("want_rows must be a boolean");
  }
  return {
    sql: optString(o.sql, "sql"),
    sqlId: optInt32(o.sql_id, "sql_id"),
    args: args.map(decodeValue),
    namedArgs: named.map((n) => {
      const arg = asObject(n, "NamedArg");
      return { name: asString(arg.name, "NamedArg name"), value: decodeValue(arg.value) };
    }),
    wantRows: o.want_rows !== false,
  };
}

/**
 * HRANA_3_SPEC §"Batches" / "Conditions". A condition may only refer to an earlier step, and
 * `is_autocommit` exists only since Hrana 3.
 */
function decodeCond(v: unknown, stepIndex: number, version: Version): BatchCond {
  const o = asObject(v, "BatchCond");
  switch (o.type) {
    case "ok":
    case "error": {
      const step = asUint32(o.step, "BatchCond step");
      if (step >= stepIndex) {
        throw new ProtocolError(`BatchCond of step ${stepIndex} refers to step ${step}`);
      }
      return { type: o.type, step };
    }
    case "not":
      return { type: "not", cond: decodeCond(o.cond, stepIndex, version) };
    case "and":
    case "or":
      return {
        type: o.type,
        conds: asArray(o.conds, "BatchCond conds").map((c) => decodeCond(c, stepIndex, version)),
      };
    case "is_autocommit":
      if (version < 3) throw new ProtocolError("BatchCond is_autocommit needs Hrana 3");
      return { type: "is_autocommit" };
    default:
      throw new ProtocolError(`unknown BatchCond type ${JSON.stringify(o.type)}`);
  }
}

/** HRANA_3_SPEC §"Hrana over HTTP" / "Requests". */
function decodeRequest(v: unknown, version: Version): StreamRequest {
  const o = asObject(v, "StreamRequest");
  switch (o.type) {
    case "close":
      return { type: "close" };
    case "execute":
      return { type: "execute", stmt: decodeStmt(o.stmt) };
    case "batch":
      return { type: "batch", steps: decodeBatch(o.batch, version) };
    case "sequence":
    case "describe":
      return { type: o.type, sql: optString(o.sql, "sql"), sqlId: optInt32(o.sql_id, "sql_id") };
    case "store_sql":
      return {
        type: "store_sql",
        sqlId: asInt32(o.sql_id, "sql_id"),
        sql: asString(o.sql, "sql"),
      };
    case "close_sql":
      return { type: "close_sql", sqlId: asInt32(o.sql_id, "sql_id") };
    case "get_autocommit":
      // "This request was introduced in Hrana 3."
      if (version < 3) throw new ProtocolError("get_autocommit needs Hrana 3");
      return { type: "get_autocommit" };
    default:
      throw new ProtocolError(`unknown StreamRequest type ${JSON.stringify(o.type)}`);
  }
}

function decodeBatch(v: unknown, version: Version): BatchStep[] {
  const o = asObject(v, "Batch");
  return asArray(o.steps, "steps").map((s, i) => {
    const step = asObject(s, "BatchStep");
    return {
      condition: step.condition === undefined || step.condition === null
        ? undefined
        : decodeCond(step.condition, i, version),
      stmt: decodeStmt(step.stmt),
    };
  });
}

/** `baton` of a `PipelineReqBody` or `CursorReqBody`: null or absent opens a new stream. */
function decodeBaton(o: Record<string, unknown>): string | undefined {
  return optString(o.baton, "baton");
}

// ---------------------------------------------------------------------------------------------
// Values and errors going out
// ---------------------------------------------------------------------------------------------

function encodeValue(v: unknown): ValueJson {
  if (v === null || v === undefined) return { type: "null" };
  if (typeof v === "bigint") return { type: "integer", value: v.toString() };
  if (typeof v === "number") return { type: "float", value: v };
  if (typeof v === "string") return { type: "text", value: v };
  if (v instanceof Uint8Array) {
    return {
      type: "blob",
      base64: Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString("base64"),
    };
  }
  throw new Error(`unexpected value from libsql: ${typeof v}`);
}

interface SqliteFailure {
  message: string;
  code: string;
}

function isSqliteFailure(e: unknown): e is SqliteFailure {
  if (!(e instanceof Error)) return false;
  const code: unknown = (e as Error & { code?: unknown }).code;
  return typeof code === "string" && code.startsWith("SQLITE_");
}

/** Busy errors that can clear when another stream commits (not BUSY_SNAPSHOT, which cannot). */
function isRetryableBusy(e: unknown): boolean {
  if (!isSqliteFailure(e)) return false;
  return e.code === "SQLITE_BUSY" || e.code === "SQLITE_BUSY_RECOVERY" ||
    e.code === "SQLITE_BUSY_TIMEOUT";
}

// ---------------------------------------------------------------------------------------------
// SQL text: a minimal SQLite tokenizer, enough to count statements (a `Stmt` "should contain just
// a single statement", HRANA_3_SPEC §"Statements") and to split a `sequence` into statements
// (HRANA_3_SPEC §"Execute a sequence of SQL statements"). It knows string literals, quoted
// identifiers, comments, parameters and the `;` inside CREATE TRIGGER ... BEGIN ... END.
// ---------------------------------------------------------------------------------------------

interface Token {
  kind: "word" | "param" | "semi" | "other";
  text: string;
  start: number;
  end: number;
}

const isSpace = (c: string) => c === " " || c === "\t" || c === "\n" || c === "\r" || c === "\f";
const isIdentChar = (c: string) => /[A-Za-z0-9_$]/.test(c) || c.charCodeAt(0) >= 0x80;

function skipQuoted(sql: string, from: number, quote: string): number {
  let i = from + 1;
  while (i < sql.length) {
    if (sql[i] === quote) {
      if (sql[i + 1] === quote) {
        i += 2;
        continue;
      }
      return i + 1;
    }
    i++;
  }
  return sql.length;
}

function* tokenize(sql: string): Generator<Token> {
  const n = sql.length;
  let i = 0;
  while (i < n) {
    const c = sql[i];
    if (isSpace(c)) {
      i++;
      continue;
    }
    if (c === "-" && sql[i + 1] === "-") {
      const nl = sql.indexOf("\n", i + 2);
      i = nl < 0 ? n : nl + 1;
      continue;
    }
    if (c === "/" && sql[i + 1] === "*") {
      const close = sql.indexOf("*/", i + 2);
      i = close < 0 ? n : close + 2;
      continue;
    }
    const start = i;
    let kind: Token["kind"] = "other";
    if (c === "'" || c === '"' || c === "`") {
      i = skipQuoted(sql, i, c);
    } else if (c === "[") {
      const close = sql.indexOf("]", i + 1);
      i = close < 0 ? n : close + 1;
    } else if (c === ";") {
      kind = "semi";
      i++;
    } else if (c === "?") {
      // `?` or `?NNN`.
      kind = "param";
      i++;
      while (i < n && sql[i] >= "0" && sql[i] <= "9") i++;
    } else if ((c === ":" || c === "@" || c === "$") && i + 1 < n && isIdentChar(sql[i + 1])) {
      // `:AAA`, `@AAA`, `$AAA`.
      kind = "param";
      i++;
      while (i < n && isIdentChar(sql[i])) i++;
    } else if (isIdentChar(c)) {
      kind = "word";
      while (i < n && isIdentChar(sql[i])) i++;
    } else {
      i++;
    }
    yield { kind, text: sql.slice(start, i), start, end: i };
  }
}

const TRIGGER_HEAD = /^(EXPLAIN (QUERY PLAN )?)?CREATE (TEMP |TEMPORARY )?TRIGGER$/;

/** Splits SQL text into statements (each with its `;`), dropping empty ones. */
function splitStatements(sql: string): string[] {
  const out: string[] = [];
  let start = -1;
  let lead: string[] | undefined = [];
  let trigger = false;
  let inBody = false;
  let bodyDone = false;
  let caseDepth = 0;
  let prev: Token | undefined;
  for (const tok of tokenize(sql)) {
    if (tok.kind === "semi") {
      if (start >= 0 && (!trigger || bodyDone)) {
        out.push(sql.slice(start, tok.end));
        start = -1;
        lead = [];
        trigger = inBody = bodyDone = false;
        caseDepth = 0;
      }
      prev = tok;
      continue;
    }
    if (start < 0) start = tok.start;
    // A word right after "." is a column or table name, never a keyword.
    const keyword = tok.kind === "word" && prev?.text !== "." ? tok.text.toUpperCase() : undefined;
    if (lead !== undefined) {
      if (keyword === undefined || lead.length >= 6) {
        lead = undefined;
      } else {
        lead.push(keyword);
        if (TRIGGER_HEAD.test(lead.join(" "))) {
          trigger = true;
          lead = undefined;
        }
      }
    }
    if (trigger && keyword !== undefined) {
      if (keyword === "CASE") caseDepth++;
      else if (keyword === "END") {
        if (caseDepth > 0) caseDepth--;
        else if (inBody) bodyDone = true;
      } else if (keyword === "BEGIN" && caseDepth === 0) inBody = true;
    }
    prev = tok;
  }
  if (start >= 0) out.push(sql.slice(start));
  return out;
}

/** The upper-cased leading words of a statement, up to `count`. */
function leadingWords(sql: string, count: number): { words: string[]; ends: number[] } {
  const words: string[] = [];
  const ends: number[] = [];
  for (const tok of tokenize(sql)) {
    if (tok.kind !== "word" || words.length >= count) break;
    words.push(tok.text.toUpperCase());
    ends.push(tok.end);
  }
  return { words, ends };
}

/**
 * The parameters of one statement, numbered as SQLite numbers them (sqlite3_bind_parameter_*):
 * `?` takes the next index; `?NNN` takes index NNN; `:AAA`, `@AAA`, `$AAA` take the next index
 * the first time a name appears and the same index after that. The count is the highest index.
 * Names are as in HRANA_3_SPEC §"Parameters": with their prefix, null for a bare `?` and for an
 * index that the SQL never uses.
 *
 * (The statement's own `EXPLAIN` would list them too, but libsql never resets an `EXPLAIN` of a
 * write statement, and that open statement keeps the connection's transaction from committing.)
 */
function parametersOf(sql: string): (string | null)[] {
  const names: (string | null)[] = [];
  const byName = new Map<string, number>();
  let count = 0;
  for (const tok of tokenize(sql)) {
    if (tok.kind !== "param") continue;
    let index: number;
    if (tok.text === "?") {
      index = ++count;
    } else if (tok.text[0] === "?") {
      index = Number(tok.text.slice(1));
      count = Math.max(count, index);
      names[index - 1] ??= tok.text;
    } else {
      index = byName.get(tok.text) ?? ++count;
      byName.set(tok.text, index);
      names[index - 1] ??= tok.text;
    }
  }
  return Array.from({ length: count }, (_, i) => names[i] ?? null);
}

// ---------------------------------------------------------------------------------------------
// Streams and the engine
// ---------------------------------------------------------------------------------------------

interface Stream {
  readonly db: Db;
  /** SQL texts stored with `store_sql`, scoped to this stream (HRANA_3_SPEC §"Store an SQL"). */
  readonly sqls: Map<number, string>;
  /** `SELECT changes(), total_changes(), last_insert_rowid()`, prepared once. */
  readonly counters: Statement;
  baton: string | undefined;
  timer: ReturnType<typeof setTimeout> | undefined;
  closed: boolean;
}

interface Counters {
  changes: bigint;
  total: bigint;
  lastRowid: bigint;
}

const json = (status: number, body: unknown) =>
  new Response(JSON.stringify(body), {
    status,
    headers: { "content-type": "application/json" },
  });

const text = (status: number, body: string, headers: Record<string, string> = {}) =>
  new Response(body, { status, headers: { "content-type": "text/plain", ...headers } });

function newBaton(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(24));
  return Buffer.from(bytes).toString("base64url");
}

/** Compares a presented token with the expected one in time independent of where they differ. */
function sameSecret(presented: string, expected: string): boolean {
  const x = new TextEncoder().encode(presented);
  const y = new TextEncoder().encode(expected);
  if (x.length !== y.length) return false;
  let diff = 0;
  for (let i = 0; i < x.length; i++) diff |= x[i] ^ y[i];
  return diff === 0;
}

class Engine {
  readonly #path: string;
  readonly #token: string | undefined;
  readonly #idleMs: number;
  readonly #extendedCodes: boolean;
  readonly #lockWaitMs: number;
  /** Open streams by their current baton. A baton is removed as soon as it is presented. */
  readonly #byBaton = new Map<string, Stream>();
  readonly #open = new Set<Stream>();
  #pipelines = 0;
  #closing = false;

  constructor(options: HranaServerOptions) {
    this.#path = options.path;
    this.#token = options.authToken;
    this.#idleMs = options.streamIdleTimeoutMs ?? 10_000;
    this.#extendedCodes = options.extendedErrorCodes ?? false;
    this.#lockWaitMs = options.lockWaitMs ?? 5_000;
  }

  stats(): HranaServerStats {
    return { pipelines: this.#pipelines, streamsOpen: this.#open.size };
  }

  beginClose(): void {
    this.#closing = true;
  }

  closeAll(): void {
    for (const stream of [...this.#open]) this.#closeStream(stream);
  }

  async handle(request: Request): Promise<Response> {
    try {
      return await this.#route(request);
    } catch (e) {
      return text(500, `internal error in the Hrana test server: ${String(e)}`);
    }
  }

  async #route(request: Request): Promise<Response> {
    const { pathname } = new URL(request.url);
    const method = request.method;
    // Version probes: HTTP_V2_SPEC §"Check support for version 2", HRANA_3_SPEC §"Endpoints".
    // They carry no credentials (the client sends none), so they are answered without any.
    if (pathname === "/v2" || pathname === "/v3" || pathname === "/") {
      if (method !== "GET") return text(405, "method not allowed", { allow: "GET" });
      return text(200, "Hrana over HTTP (test server): v2, v3 (JSON encoding only)");
    }
    const route = pathname === "/v2/pipeline"
      ? { version: 2 as const, cursor: false }
      : pathname === "/v3/pipeline"
      ? { version: 3 as const, cursor: false }
      : pathname === "/v3/cursor"
      ? { version: 3 as const, cursor: true }
      : undefined;
    // Everything else, including the Protobuf endpoints `/v3-protobuf[/...]`, is not served:
    // a 404 on `GET /v3-protobuf` makes a probing client fall back to JSON.
    if (route === undefined) return text(404, "not found");
    if (method !== "POST") return text(405, "method not allowed", { allow: "POST" });
    if (!this.#authorized(request)) {
      await request.body?.cancel();
      return text(401, "Unauthorized: missing or invalid bearer token", {
        "www-authenticate": "Bearer",
      });
    }
    if (!route.cursor) this.#pipelines++;
    let body: Record<string, unknown>;
    try {
      body = asObject(await request.json(), "request body");
    } catch (e) {
      return text(400, e instanceof ProtocolError ? e.message : "request body is not valid JSON");
    }
    return route.cursor ? await this.#cursor(body) : await this.#pipeline(body, route.version);
  }

  #authorized(request: Request): boolean {
    if (this.#token === undefined) return true;
    const header = request.headers.get("authorization") ?? "";
    const match = /^Bearer[ ]+(\S+)\s*$/i.exec(header);
    return match !== null && sameSecret(match[1], this.#token);
  }

  /** HRANA_3_SPEC §"Execute a pipeline of requests (JSON)"; HTTP_V2_SPEC §"Execute requests". */
  async #pipeline(body: Record<string, unknown>, version: Version): Promise<Response> {
    let baton: string | undefined;
    let requests: StreamRequest[];
    try {
      baton = decodeBaton(body);
      requests = asArray(body.requests, "requests").map((r) => decodeRequest(r, version));
    } catch (e) {
      if (e instanceof ProtocolError) return text(400, e.message);
      throw e;
    }
    const stream = this.#acquire(baton);
    if (stream instanceof Response) return stream;
    const results: StreamResultJson[] = [];
    try {
      // "The server always executes all requests, even if some of them return errors."
      for (const req of requests) results.push(await this.#request(stream, req));
    } catch (e) {
      this.#closeStream(stream);
      if (e instanceof ProtocolError) return text(400, e.message);
      throw e;
    }
    return json(200, { baton: this.#release(stream), base_url: null, results });
  }

  /**
   * HRANA_3_SPEC §"Execute a batch using a cursor (JSON)": one line with `CursorRespBody`, then
   * one line per `CursorEntry` (§"Cursor entries"). The batch runs to completion first; the
   * entries are then sent in one body, which the client reads line by line all the same.
   */
  async #cursor(body: Record<string, unknown>): Promise<Response> {
    let baton: string | undefined;
    let steps: BatchStep[];
    try {
      baton = decodeBaton(body);
      steps = decodeBatch(body.batch, 3);
    } catch (e) {
      if (e instanceof ProtocolError) return text(400, e.message);
      throw e;
    }
    const stream = this.#acquire(baton);
    if (stream instanceof Response) return stream;
    const entries: unknown[] = [];
    try {
      const result = await this.#batch(stream, steps);
      result.step_results.forEach((res, step) => {
        const error = result.step_errors[step];
        if (res !== null) {
          entries.push({ type: "step_begin", step, cols: res.cols });
          for (const row of res.rows) entries.push({ type: "row", row });
          entries.push({
            type: "step_end",
            affected_row_count: res.affected_row_count,
            last_insert_rowid: res.last_insert_rowid,
          });
        } else if (error !== null) {
          entries.push({ type: "step_error", step, error });
        }
      });
    } catch (e) {
      if (e instanceof StmtError) {
        entries.push({ type: "error", error: e.toJson() });
      } else {
        this.#closeStream(stream);
        if (e instanceof ProtocolError) return text(400, e.message);
        throw e;
      }
    }
    const head = { baton: this.#release(stream), base_url: null };
    const lines = [head, ...entries].map((entry) => JSON.stringify(entry) + "\n").join("");
    return text(200, lines);
  }

  /** Finds the stream of a baton (and invalidates the baton), or opens a new stream. */
  #acquire(baton: string | undefined): Stream | Response {
    if (this.#closing) {
      return json(503, { message: "The server is shutting down", code: "SERVER_CLOSING" });
    }
    if (baton === undefined) {
      try {
        return this.#openStream();
      } catch (e) {
        return json(500, { message: `Cannot open a stream: ${String(e)}`, code: "STREAM_OPEN" });
      }
    }
    const stream = this.#byBaton.get(baton);
    if (stream === undefined) {
      // Unknown, already used, or expired. sqld answers this with 500; a 400 is just as final
      // for the client, which reads `message` and `code` from the JSON body either way.
      return json(400, {
        message: "The stream for this baton does not exist: it was closed, expired, or the " +
          "baton was already used",
        code: "STREAM_EXPIRED",
      });
    }
    this.#byBaton.delete(baton);
    stream.baton = undefined;
    clearTimeout(stream.timer);
    stream.timer = undefined;
    return stream;
  }

  /**
   * Hands out a fresh baton for the next request on the stream, or null once the stream is
   * closed ("If the `baton` value in the response is `null`, it means that the server has closed
   * the stream"), and arms the idle timer.
   */
  #release(stream: Stream): string | null {
    if (stream.closed) return null;
    const baton = newBaton();
    stream.baton = baton;
    this.#byBaton.set(baton, stream);
    stream.timer = setTimeout(() => this.#closeStream(stream), this.#idleMs);
    return baton;
  }

  #openStream(): Stream {
    const db = new Database(this.#path);
    try {
      db.exec(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`);
      const counters = db.prepare("SELECT changes(), total_changes(), last_insert_rowid()")
        .raw(true)
        .safeIntegers(true);
      const stream: Stream = {
        db,
        sqls: new Map(),
        counters,
        baton: undefined,
        timer: undefined,
        closed: false,
      };
      this.#open.add(stream);
      return stream;
    } catch (e) {
      db.close();
      throw e;
    }
  }

  /** Closes a stream; an open transaction is rolled back. */
  #closeStream(stream: Stream): void {
    if (stream.closed) return;
    stream.closed = true;
    clearTimeout(stream.timer);
    stream.timer = undefined;
    if (stream.baton !== undefined) this.#byBaton.delete(stream.baton);
    stream.baton = undefined;
    this.#open.delete(stream);
    try {
      if (stream.db.inTransaction) stream.db.exec("ROLLBACK");
    } catch {
      // Closing the connection rolls back as well.
    }
    try {
      stream.db.close();
    } catch {
      // Nothing more can be done for a connection that does not close.
    }
  }

  /** One `StreamRequest` → one `StreamResult`. ProtocolErrors propagate (HTTP 400). */
  async #request(stream: Stream, req: StreamRequest): Promise<StreamResultJson> {
    if (stream.closed) {
      // HRANA_3_SPEC §"Close stream": "It is an error if the client tries to execute more
      // requests on the same stream."
      return {
        type: "error",
        error: { message: "The stream has already been closed", code: "STREAM_CLOSED" },
      };
    }
    try {
      switch (req.type) {
        case "close":
          this.#closeStream(stream);
          return { type: "ok", response: { type: "close" } };
        case "execute":
          return {
            type: "ok",
            response: { type: "execute", result: await this.#execute(stream, req.stmt) },
          };
        case "batch":
          return {
            type: "ok",
            response: { type: "batch", result: await this.#batch(stream, req.steps) },
          };
        case "sequence":
          await this.#sequence(stream, this.#sqlText(stream, req.sql, req.sqlId));
          return { type: "ok", response: { type: "sequence" } };
        case "describe":
          return {
            type: "ok",
            response: {
              type: "describe",
              result: this.#describe(stream, this.#sqlText(stream, req.sql, req.sqlId)),
            },
          };
        case "store_sql":
          this.#storeSql(stream, req.sqlId, req.sql);
          return { type: "ok", response: { type: "store_sql" } };
        case "close_sql":
          // "It is not an error if the client attempts to close a SQL text id that is not used."
          stream.sqls.delete(req.sqlId);
          return { type: "ok", response: { type: "close_sql" } };
        case "get_autocommit":
          return {
            type: "ok",
            response: { type: "get_autocommit", is_autocommit: !stream.db.inTransaction },
          };
      }
    } catch (e) {
      if (e instanceof StmtError) return { type: "error", error: e.toJson() };
      throw e;
    }
  }

  /** HRANA_3_SPEC §"Store an SQL text on the server". */
  #storeSql(stream: Stream, sqlId: number, sql: string): void {
    if (stream.sqls.has(sqlId)) {
      // "It is a protocol error if the client tries to store an SQL text with an id which is
      // already in use."
      throw new ProtocolError(`SQL text id ${sqlId} is already in use`);
    }
    if (stream.sqls.size >= MAX_SQL_COUNT) {
      throw new StmtError(
        `The server already stores ${stream.sqls.size} SQL texts, it cannot store more`,
        "SQL_STORE_TOO_MANY",
      );
    }
    const bytes = new TextEncoder().encode(sql).length;
    if (bytes > MAX_STORED_SQL_BYTES) {
      throw new StmtError(
        `The statement is too large to be stored: ${bytes}/${MAX_STORED_SQL_BYTES} bytes`,
        "SQL_STORE_TOO_LARGE",
      );
    }
    stream.sqls.set(sqlId, sql);
  }

  /** "Exactly one of `sql` and `sql_id` must be passed." (HRANA_3_SPEC §"Statements") */
  #sqlText(stream: Stream, sql: string | undefined, sqlId: number | undefined): string {
    if (sql !== undefined && sqlId !== undefined) {
      throw new ProtocolError("both sql and sql_id were given");
    }
    if (sql !== undefined) return sql;
    if (sqlId === undefined) throw new ProtocolError("neither sql nor sql_id was given");
    const stored = stream.sqls.get(sqlId);
    if (stored === undefined) throw new ProtocolError(`SQL text id ${sqlId} is not stored`);
    return stored;
  }

  /** Checks a statement before it runs: one statement, one kind of arguments. */
  #checkStmt(stream: Stream, stmt: Stmt): string {
    const sql = this.#sqlText(stream, stmt.sql, stmt.sqlId);
    const count = splitStatements(sql).length;
    if (count === 0) {
      throw new StmtError("SQL string does not contain any statement", "SQL_NO_STATEMENT");
    }
    if (count > 1) {
      throw new StmtError("SQL string contains more than one statement", "SQL_MANY_STATEMENTS");
    }
    if (stmt.args.length > 0 && stmt.namedArgs.length > 0) {
      // "Some servers may not support specifying both positional and named arguments." sqld
      // does not, and neither does this one.
      throw new StmtError(
        "Specifying both positional and named arguments is not supported",
        "ARGS_BOTH_POSITIONAL_AND_NAMED",
      );
    }
    return sql;
  }

  /** HRANA_3_SPEC §"Execute a statement". */
  async #execute(stream: Stream, stmt: Stmt): Promise<StmtResultJson> {
    const sql = this.#checkStmt(stream, stmt);
    return await this.#run(stream, sql, stmt.args, stmt.namedArgs, stmt.wantRows);
  }

  /**
   * HRANA_3_SPEC §"Execute a batch", §"Batches", §"Batch results". Statement-level problems that
   * sqld detects before running anything (SQL texts, statement count, argument kinds) fail the
   * whole request; SQLite errors are reported per step.
   */
  async #batch(stream: Stream, steps: BatchStep[]): Promise<BatchResultJson> {
    const sqls = steps.map((step) => this.#checkStmt(stream, step.stmt));
    const results: (StmtResultJson | null)[] = [];
    const errors: (ErrorJson | null)[] = [];
    const holds = (cond: BatchCond): boolean => {
      switch (cond.type) {
        case "ok":
          return results[cond.step] !== null;
        case "error":
          return errors[cond.step] !== null;
        case "not":
          return !holds(cond.cond);
        case "and":
          return cond.conds.every(holds);
        case "or":
          return cond.conds.some(holds);
        case "is_autocommit":
          return !stream.db.inTransaction;
      }
    };
    for (const [i, step] of steps.entries()) {
      // "If the `condition` of a step is present and evaluates to false, the statement is not
      // executed" and both its result and its error are null.
      if (step.condition !== undefined && !holds(step.condition)) {
        results.push(null);
        errors.push(null);
        continue;
      }
      try {
        const { args, namedArgs, wantRows } = step.stmt;
        results.push(await this.#run(stream, sqls[i], args, namedArgs, wantRows));
        errors.push(null);
      } catch (e) {
        if (!(e instanceof StmtError)) throw e;
        results.push(null);
        errors.push(e.toJson());
      }
    }
    return { step_results: results, step_errors: errors };
  }

  /**
   * HRANA_3_SPEC §"Execute a sequence of SQL statements": rows are ignored, and the first failing
   * statement ends the sequence with an error.
   */
  async #sequence(stream: Stream, sql: string): Promise<void> {
    for (const statement of splitStatements(sql)) {
      await this.#run(stream, statement, [], [], false);
    }
  }

  /** HRANA_3_SPEC §"Describe a statement", §"Result of describing a statement". */
  #describe(stream: Stream, sql: string): Record<string, unknown> {
    const count = splitStatements(sql).length;
    if (count !== 1) {
      throw count === 0
        ? new StmtError("SQL string does not contain any statement", "SQL_NO_STATEMENT")
        : new StmtError("SQL string contains more than one statement", "SQL_MANY_STATEMENTS");
    }
    try {
      const statement = stream.db.prepare(sql);
      const cols = statement.columns().map((c) => ({ name: c.name, decltype: c.type }));
      return {
        params: parametersOf(sql).map((name) => ({ name })),
        cols,
        is_explain: leadingWords(sql, 1).words[0] === "EXPLAIN",
        is_readonly: this.#isReadonly(stream.db, sql),
      };
    } catch (e) {
      throw this.#stmtError(e);
    }
  }

  /**
   * sqlite3_stmt_readonly() of the statement just prepared from `sql`, read from the
   * `sqlite_stmt` virtual table (libsql is built with SQLITE_ENABLE_STMTVTAB). New statements are
   * listed first, so after the query itself comes the statement prepared just before it.
   */
  #isReadonly(db: Db, sql: string): boolean {
    const rows = db.prepare("SELECT sql, ro FROM sqlite_stmt").raw(true).all([]) as [
      string,
      number,
    ][];
    const own = rows.slice(1).find(([text]) => sql.startsWith(text));
    if (own === undefined) throw new Error("the described statement is not in sqlite_stmt");
    return own[1] !== 0;
  }

  /**
   * Runs one statement on the stream's connection. An SQLITE_BUSY (another stream holds the write
   * lock) is retried asynchronously for up to `lockWaitMs`: every connection lives
   * on this one thread, so blocking in SQLite's busy handler could never let the other stream
   * commit, while awaiting here does — the same waiting a client sees from sqld.
   */
  async #run(
    stream: Stream,
    sql: string,
    args: Value[],
    namedArgs: NamedArg[],
    wantRows: boolean,
  ): Promise<StmtResultJson> {
    const started = performance.now();
    if (leadingWords(sql, 1).words[0] === "EXPLAIN") {
      return this.#explain(sql, args, namedArgs, wantRows, started);
    }
    const db = stream.db;
    const deadline = Date.now() + this.#lockWaitMs;
    const mayRetry = () => !this.#closing && !stream.closed && Date.now() < deadline;
    const statement = await this.#prepare(db, sql, mayRetry);
    let bound: Value[];
    try {
      bound = bindArgs(parametersOf(sql), args, namedArgs);
    } catch (e) {
      throw this.#stmtError(e);
    }
    for (;;) {
      const before = this.#counters(stream);
      try {
        const { cols, rows } = step(statement, bound);
        const after = this.#counters(stream);
        // `affected_row_count` and `last_insert_rowid` are only meaningful for statements that
        // changed rows (HRANA_3_SPEC §"Statement results"); total_changes() tells whether this
        // one did, since changes() keeps the count of an earlier INSERT/UPDATE/DELETE.
        const changed = after.total !== before.total;
        return {
          cols,
          rows: wantRows ? rows.map((row) => row.map(encodeValue)) : [],
          affected_row_count: changed ? Number(after.changes) : 0,
          last_insert_rowid: changed ? after.lastRowid.toString() : null,
          query_duration_ms: performance.now() - started,
        };
      } catch (e) {
        if (!isRetryableBusy(e)) throw this.#stmtError(e);
        if (!mayRetry()) {
          haltBusy(db, statement, bound);
          throw this.#stmtError(e);
        }
      }
      // The same statement object is stepped again: libsql resets it first.
      await sleep(BUSY_RETRY_INTERVAL_MS);
    }
  }

  async #prepare(db: Db, sql: string, mayRetry: () => boolean): Promise<Statement> {
    for (;;) {
      try {
        return db.prepare(sql);
      } catch (e) {
        if (!isRetryableBusy(e) || !mayRetry()) throw this.#stmtError(e);
      }
      await sleep(BUSY_RETRY_INTERVAL_MS);
    }
  }

  /**
   * `EXPLAIN [QUERY PLAN]` runs on a connection of its own, closed right after: libsql never
   * resets an EXPLAIN of a write statement, and that open statement would keep the stream's
   * connection from committing. So it does not see uncommitted schema changes of the stream.
   */
  #explain(
    sql: string,
    args: Value[],
    namedArgs: NamedArg[],
    wantRows: boolean,
    started: number,
  ): StmtResultJson {
    const db = new Database(this.#path);
    try {
      const statement = db.prepare(sql);
      const { cols, rows } = step(statement, bindArgs(parametersOf(sql), args, namedArgs));
      return {
        cols,
        rows: wantRows ? rows.map((row) => row.map(encodeValue)) : [],
        affected_row_count: 0,
        last_insert_rowid: null,
        query_duration_ms: performance.now() - started,
      };
    } catch (e) {
      throw this.#stmtError(e);
    } finally {
      db.close();
    }
  }

  #counters(stream: Stream): Counters {
    const [row] = stream.counters.all([]) as bigint[][];
    return { changes: row[0], total: row[1], lastRowid: row[2] };
  }

  /** An SQLite failure → `Error` with the SQLite code name (HRANA_3_SPEC §"Errors"). */
  #stmtError(e: unknown): unknown {
    if (e instanceof StmtError || e instanceof ProtocolError) return e;
    if (isSqliteFailure(e)) {
      // libsql reports the extended name; its first two parts are the primary code.
      const code = this.#extendedCodes ? e.code : e.code.split("_").slice(0, 2).join("_");
      return new StmtError(`SQLite error: ${e.message}`, code);
    }
    return new StmtError(
      `Internal error in the Hrana test server: ${e instanceof Error ? e.message : String(e)}`,
      "TEST_SERVER_INTERNAL_ERROR",
    );
  }
}

type Statement = ReturnType<Db["prepare"]>;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Executes a prepared statement to its end: rows (raw, integers as bigint) for a reader. */
function step(statement: Statement, bound: Value[]): { cols: ColJson[]; rows: unknown[][] } {
  if (!statement.reader) {
    statement.run(bound);
    return { cols: [], rows: [] };
  }
  const cols = statement.columns().map((c) => ({ name: c.name, decltype: c.type }));
  const rows = statement.raw(true).safeIntegers(true).all(bound) as unknown[][];
  return { cols, rows };
}

/**
 * A statement that returned SQLITE_BUSY stays active inside libsql until it is stepped again,
 * and while a write statement is active SQLite does not commit the connection's later
 * autocommit writes. Stepping it once more under `PRAGMA query_only` ends it at its first write
 * (SQLITE_READONLY), without effects.
 */
function haltBusy(db: Db, statement: Statement, bound: Value[]): void {
  try {
    db.exec("PRAGMA query_only = 1");
    step(statement, bound);
  } catch {
    // SQLITE_READONLY is the expected way out.
  } finally {
    try {
      db.exec("PRAGMA query_only = 0");
    } catch {
      // The connection is unusable anyway if this fails; the stream will error out.
    }
  }
}

/**
 * Arguments → one positional array for the statement's parameters (HRANA_3_SPEC §"Statements").
 * A named argument without a prefix is matched against `:name`, `@name` and `$name`. "It is an
 * error if the request specifies an argument that is not expected by the SQL statement, or if
 * the request does not specify an argument that is expected by the SQL statement."
 */
function bindArgs(params: (string | null)[], args: Value[], namedArgs: NamedArg[]): Value[] {
  if (namedArgs.length === 0) {
    if (args.length !== params.length) {
      throw new StmtError(
        `Arguments do not match SQL parameters: the statement has ${params.length} ` +
          `parameter(s), ${args.length} argument(s) were given`,
        "ARGS_INVALID",
      );
    }
    return args;
  }
  const bound: (Value | undefined)[] = params.map(() => undefined);
  for (const { name, value } of namedArgs) {
    const candidates = /^[:@$?]/.test(name) ? [name] : [`:${name}`, `@${name}`, `$${name}`];
    const index = params.findIndex((p) => p !== null && candidates.includes(p));
    if (index < 0) {
      throw new StmtError(
        `Arguments do not match SQL parameters: the statement has no parameter ${name}`,
        "ARGS_INVALID",
      );
    }
    bound[index] = value;
  }
  const missing = bound.findIndex((v) => v === undefined);
  if (missing >= 0) {
    throw new StmtError(
      `Arguments do not match SQL parameters: parameter ${
        params[missing] ?? `?${missing + 1}`
      } has no value`,
      "ARGS_INVALID",
    );
  }
  return bound as Value[];
}
