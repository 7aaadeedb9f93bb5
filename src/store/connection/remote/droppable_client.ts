/**
 * A connection to a remote database (sqld or Turso, Hrana over HTTP through
 * `@libsql/client/web`) that can be dropped: a call past its deadline is abandoned together with
 * everything it was sent on, and the next call goes out on a fresh client.
 *
 * Why a fresh client and not just a deadline: a TCP connection can go dark without closing (a NAT
 * timeout, a failed load-balancer node, a half-open connection). A request on it never answers,
 * and the runtime's HTTP client only notices after its own timeouts, minutes later. Each client
 * made here sends through its own `fetch` wrapper holding an `AbortController`; dropping the
 * client aborts every request still in flight on it, which makes the runtime close those sockets
 * (Fetch §"abort fetch": an aborted request's connection is not returned to the pool). On Deno the
 * client also gets its own connection pool (`Deno.createHttpClient`), closed with it, so a fresh
 * client never reuses an idle pooled connection that went dark with the old one.
 *
 * The wrapper also records what happened to each `POST` (a Hrana pipeline: the statement):
 * whether it was sent at all, and whether the server answered. That is what tells a failed commit
 * that stored nothing from one whose outcome is unknown: {@linkcode RemoteConnection.lastSend}
 * for the client, and the write stream's own list for commits ({@linkcode WriteStream}).
 *
 * Commits go out on one Hrana stream (`@libsql/hrana-client`, the protocol `@libsql/client`
 * speaks) kept open from commit to commit, over the same sockets: sqld gives every stream a
 * SQLite connection of its own, and `@libsql/client` opens a stream for every call, so each
 * commit would otherwise have the database open a connection and parse the whole schema
 * (bench/README.md, "The signed log beside the floor with heads").
 *
 * @module
 */
import type { Client } from "@libsql/client";
import type * as Hrana from "@libsql/hrana-client";
import type { DatabaseConfig } from "../../client.ts";

/** What happened to the last statement request of a connection. */
export interface SendRecord {
  /** The server answered with this HTTP status (0: no answer). */
  status: number;
  /** The request failed before any byte could reach the server (the connection was refused). */
  connectFailed: boolean;
}

/** Deno's own HTTP client: a connection pool the caller owns and closes. */
type DenoHttpClient = { close(): void };
type DenoNamespace = { createHttpClient?: (options: Record<string, never>) => DenoHttpClient };

/**
 * Whether a `fetch` rejection means the connection was never established (so no request byte
 * left): `ECONNREFUSED` (Node), `ConnectionRefused` (Bun), Deno's "tcp connect error". Anything
 * else (reset, aborted, timed out) happened on a connection that may have carried the request.
 */
export function isConnectFailure(error: unknown): boolean {
  for (let cause = error, depth = 0; cause !== undefined && depth < 5; depth++) {
    const { code, message } = cause as { code?: unknown; message?: unknown };
    if (code === "ECONNREFUSED" || code === "ConnectionRefused") return true;
    if (typeof message === "string" && /tcp connect error|connection refused/i.test(message)) {
      return true;
    }
    cause = (cause as { cause?: unknown })?.cause;
  }
  return false;
}

/**
 * Deno's `fetch` sends a request again, on a new connection, when the pooled connection it went
 * out on closes before an answer (it replays a body it holds whole): a statement the server ran
 * before it died is sent a second time, and the retry's refused connection reads like a request
 * that never left. So on Deno a refused connection proves nothing was sent only on a client that
 * has no pooled connection to have sent it on: one that has had no answer yet. (Sending each
 * statement as a stream, which Deno cannot replay, also closes this, at a cost in CPU a request
 * that bench/README.md "Figures behind constants" gives.)
 * Node's and Bun's `fetch` do not resend a `POST`. After a commit without an answer the caller
 * drops the client (remote.ts), so during an outage each later commit goes out on a fresh client,
 * whose refusals are exact again (`tests/e2e/commit_retry_test.ts`, `tests/e2e/metrics_test.ts`).
 */
const FETCH_RESENDS = "Deno" in globalThis;

type CreateClient = typeof import("@libsql/client/web").createClient;

/** `@libsql/hrana-client`'s `openHttp`: a Hrana client on a base URL and a `fetch`. */
type OpenHttp = typeof import("@libsql/hrana-client").openHttp;

/**
 * The longest a write stream is left idle before the next commit opens a fresh one. sqld expires
 * a stream 10 s after its last request (libsql-server `hrana/http/stream.rs`, `EXPIRATION`); a
 * commit on a stream the server no longer knows is refused unapplied and sent again on a fresh
 * stream (remote.ts), so this only spares that round trip in the common case.
 */
const STREAM_IDLE_MS = 5_000;

/**
 * A Hrana stream kept open across commits, on a Hrana client of its own so that the requests it
 * sends are its own.
 */
export interface WriteStream {
  readonly stream: Hrana.HttpStream;
  readonly hrana: Hrana.HttpClient;
  /**
   * The first `POST` the stream sent since {@linkcode RemoteConnection.writeStream} handed it to
   * the commit: that commit's request. A stream that is closed sends one more (its `close`), which
   * never takes its place.
   */
  sent: SendRecord | undefined;
  /** Whether an earlier commit went out on this stream. */
  reused: boolean;
  usedAt: number;
}

/** One client and what dropping it must release. */
interface Current {
  readonly client: Client;
  /** Sends a request on this client's connections, recording a `POST` in `record`. */
  readonly send: (request: Request, record: (sent: SendRecord) => void) => Promise<Response>;
  writer: WriteStream | undefined;
  /** The requests still in flight on this client, to abort when it is dropped. */
  readonly inFlight: Set<AbortController>;
  readonly pool: DenoHttpClient | undefined;
}

/** A remote database client that can be replaced when a call on it is abandoned. */
export class RemoteConnection {
  readonly #config: DatabaseConfig;
  readonly #createClient: CreateClient;
  readonly #openHttp: OpenHttp;
  /** The Hrana base URL (`http:` or `https:`) by `@libsql/client`'s own rules; undefined for `ws:`. */
  readonly #hranaUrl: string | undefined;
  #current: Current | undefined;
  /** What happened to the last statement request (a fresh record per request). */
  lastSend: SendRecord = { status: 0, connectFailed: false };
  /** Clients dropped so far (each after a call past its deadline). */
  dropped = 0;

  private constructor(
    config: DatabaseConfig,
    createClient: CreateClient,
    openHttp: OpenHttp,
    hranaUrl: string | undefined,
  ) {
    this.#config = config;
    this.#createClient = createClient;
    this.#openHttp = openHttp;
    this.#hranaUrl = hranaUrl;
  }

  /** A connection to `config.url`; the client modules are loaded once, here. */
  static async open(config: DatabaseConfig): Promise<RemoteConnection> {
    const [{ createClient }, { openHttp }, { expandConfig }, { encodeBaseUrl }] = await Promise
      .all([
        import("@libsql/client/web"),
        import("@libsql/hrana-client"),
        import("@libsql/core/config"),
        import("@libsql/core/uri"),
      ]);
    // The URL rules are `@libsql/client`'s own (a `libsql:` URL is `https:`, or `http:` with
    // `?tls=0`); the Hrana client takes the base URL they give.
    const expanded = expandConfig({ url: config.url, authToken: config.authToken }, true);
    const hranaUrl = expanded.scheme === "http" || expanded.scheme === "https"
      ? encodeBaseUrl(expanded.scheme, expanded.authority, expanded.path).toString()
      : undefined;
    return new RemoteConnection(config, createClient, openHttp, hranaUrl);
  }

  /**
   * The stream to commit on: the one kept from the last commit, or a fresh one (on a Hrana
   * client of its own, over this connection's sockets) after {@linkcode abandonWriteStream},
   * {@linkcode drop} or {@linkcode STREAM_IDLE_MS} of idleness. Undefined for a WebSocket URL,
   * whose commits go through {@linkcode client}.
   */
  writeStream(now = Date.now()): WriteStream | undefined {
    if (this.#hranaUrl === undefined) return undefined;
    const current = this.#current ??= this.#connect();
    const kept = current.writer;
    if (kept !== undefined && !kept.stream.closed && now - kept.usedAt < STREAM_IDLE_MS) {
      kept.sent = undefined;
      kept.reused = true;
      kept.usedAt = now;
      return kept;
    }
    kept?.hrana.close();
    const hrana = this.#openHttp(
      this.#hranaUrl,
      this.#config.authToken,
      ((request: Request) => current.send(request, (sent) => writer.sent ??= sent)) as typeof fetch,
    );
    hrana.intMode = "number";
    const writer: WriteStream = {
      stream: hrana.openStream(),
      hrana,
      sent: undefined,
      reused: false,
      usedAt: now,
    };
    current.writer = writer;
    return writer;
  }

  /** Closes the write stream (after a failed commit): the next commit opens a fresh one. */
  abandonWriteStream(): void {
    const current = this.#current;
    if (current?.writer === undefined) return;
    current.writer.hrana.close();
    current.writer = undefined;
  }

  /** The client to send the next call on (a fresh one after {@linkcode drop}). */
  get client(): Client {
    return (this.#current ??= this.#connect()).client;
  }

  #connect(): Current {
    const inFlight = new Set<AbortController>();
    let answered = false;
    const deno = (globalThis as { Deno?: DenoNamespace }).Deno;
    const pool = deno?.createHttpClient?.({});
    // Bun pools connections per process and cannot be given a pool of its own: after a drop, its
    // idle pooled connections may be dark too, and each would hold one call for one deadline.
    // A client made after a drop therefore opens a new connection per request there.
    const keepalive = !(pool === undefined && this.dropped > 0 && "Bun" in globalThis);
    const send = async (
      request: Request,
      record: (sent: SendRecord) => void,
    ): Promise<Response> => {
      // One controller per request, made in the calling request's context: workerd refuses an
      // AbortSignal of another request's context (the client outlives the request that made it).
      const controller = new AbortController();
      inFlight.add(controller);
      const init: RequestInit & { client?: DenoHttpClient } = {
        signal: controller.signal,
        keepalive,
      };
      if (pool !== undefined) init.client = pool;
      const sent: SendRecord = { status: 0, connectFailed: false };
      if (request.method === "POST") record(sent);
      const couldBeResent = FETCH_RESENDS && answered;
      try {
        const response = await fetch(request, init);
        answered = true;
        sent.status = response.status;
        // The body is read here, while the request can still be aborted: a connection can go
        // dark between the head and the body too. (Hrana answers are small: one statement's rows.)
        const body = await response.arrayBuffer();
        return new Response(body, { status: response.status, headers: response.headers });
      } catch (error) {
        sent.connectFailed = !couldBeResent && isConnectFailure(error);
        throw error;
      } finally {
        inFlight.delete(controller);
      }
    };
    const client = this.#createClient({
      url: this.#config.url,
      authToken: this.#config.authToken,
      intMode: "number",
      concurrency: this.#config.concurrency,
      fetch: ((request: Request) => send(request, (sent) => this.lastSend = sent)) as typeof fetch,
    });
    return { client, send, writer: undefined, inFlight, pool };
  }

  /**
   * Abandons the current client: aborts every request still in flight on it (closing their
   * sockets) and closes it. The next call gets a fresh client.
   */
  drop(): void {
    const current = this.#current;
    if (current === undefined) return;
    this.#current = undefined;
    this.dropped++;
    for (const controller of current.inFlight) controller.abort();
    try {
      current.client.close();
    } catch {
      // closed either way
    }
    try {
      current.writer?.hrana.close();
    } catch {
      // closed either way
    }
    try {
      current.pool?.close();
    } catch {
      // closed either way
    }
  }

  /** Closes the connection for good. */
  close(): void {
    this.drop();
  }
}
