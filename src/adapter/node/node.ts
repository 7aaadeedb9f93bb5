/**
 * The `node:http` adapter (the package's `./node` export): turns an `IncomingMessage` into a
 * standard `Request` (the body stays a stream that is pulled one chunk at a time, so the core's
 * byte-counting body limit still decides how much is read) and writes the `Response` back with
 * back-pressure. The Node server entry is `server.ts` beside it.
 *
 * Whatever the request, the listener answers: a method the Fetch standard cannot represent
 * (`CONNECT`, `TRACE`, `TRACK`: `new Request` throws for them) gets the core's `405`, a target
 * or `Host` that is not an origin-form URL of ours the core's `404`, both with the core's
 * hardening headers (src/http/errors.ts, src/middleware/response_headers.ts).
 *
 * @example Mount the Beacon under `/beacon` in an existing `node:http` server
 * ```ts ignore
 * import { createServer } from "node:http";
 * import { createBeacon } from "@beacon/beacon";
 * import { toNodeListener } from "@beacon/beacon/node";
 *
 * const beacon = createBeacon({ publicUrl: "https://example.com/beacon" });
 * const listener = toNodeListener(beacon.fetch, { prefix: "/beacon" });
 * createServer((request, response) => {
 *   if (request.url?.startsWith("/beacon/")) return listener(request, response);
 *   response.writeHead(404).end();
 * }).listen(3000);
 * ```
 *
 * @module
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { ConnectionInfo } from "../../types.ts";
import type { RequestLogEntry } from "../../http/request_log.ts";
import type { ErrorCode } from "../../http/errors.ts";
import { createDoor } from "../../middleware/door.ts";

/** A fetch handler in the shape of `Beacon.fetch`. */
export type FetchHandler = (request: Request, info: ConnectionInfo) => Promise<Response>;

/** Options of {@linkcode toNodeListener} and {@linkcode toRequest}. */
export interface NodeAdapterOptions {
  /**
   * A path prefix the Beacon is mounted under (for example `/beacon`). It is removed from the
   * request path before the handler sees it; requests outside the prefix are answered 404.
   */
  prefix?: string;
  /** Receives errors of the adapter itself (a response that could not be written). */
  onError?: (error: unknown) => void;
  /**
   * Receives one entry for each request the adapter answers itself (one the Fetch standard
   * cannot represent), in the shape of the core's request log; the handler logs all others.
   */
  log?: (entry: RequestLogEntry) => void;
}

/** A `node:http` request listener. */
export type NodeListener = (request: IncomingMessage, response: ServerResponse) => void;

/**
 * Streams an `IncomingMessage` as a `ReadableStream`, pulling one chunk at a time: nothing is
 * read from the socket until the consumer asks, so a consumer that stops (the body limit) stops
 * the reading too, and at most one chunk is ever held here.
 */
function bodyStream(message: IncomingMessage): ReadableStream<Uint8Array> {
  let finished = false;
  return new ReadableStream<Uint8Array>({
    start(controller) {
      message.pause();
      message.on("data", (chunk: Uint8Array) => {
        message.pause();
        if (finished) return;
        // Copy: Node may reuse a chunk's memory once the handler returns.
        controller.enqueue(new Uint8Array(chunk));
      });
      message.once("end", () => {
        if (finished) return;
        finished = true;
        controller.close();
      });
      message.once("error", (error) => {
        if (finished) return;
        finished = true;
        controller.error(error);
      });
      message.once("close", () => {
        // The peer went away before the body ended.
        if (finished || message.complete) return;
        finished = true;
        controller.error(new Error("Cannot read the body: the connection closed"));
      });
    },
    pull() {
      message.resume();
    },
    cancel() {
      // The reader gave up (size limit, timeout): discard what still arrives, keep nothing.
      finished = true;
      message.resume();
    },
  });
}

function stripPrefix(path: string, prefix: string): string | undefined {
  if (prefix === "") return path;
  if (path === prefix) return "/";
  if (path.startsWith(prefix + "/") || path.startsWith(prefix + "?")) {
    const rest = path.slice(prefix.length);
    return rest.startsWith("?") ? "/" + rest : rest;
  }
  return undefined;
}

function normalisePrefix(prefix: string | undefined): string {
  if (prefix === undefined || prefix === "" || prefix === "/") return "";
  if (!prefix.startsWith("/")) {
    throw new Error(`Cannot mount the Beacon: the prefix "${prefix}" does not start with "/"`);
  }
  return prefix.endsWith("/") ? prefix.slice(0, -1) : prefix;
}

/**
 * Builds a standard `Request` from a Node request: URL from the `Host` header and the path,
 * every header as received, and the body as a pull-based stream (never buffered here). Returns
 * undefined when the path lies outside `options.prefix`, the target is not a valid URL, or the
 * method is one the Fetch standard forbids.
 *
 * @example
 * ```ts ignore
 * import { createServer } from "node:http";
 * import { toRequest } from "@beacon/beacon/node";
 *
 * createServer((incoming, outgoing) => {
 *   const request = toRequest(incoming);
 *   outgoing.end(request ? `${request.method} ${new URL(request.url).pathname}` : "bad target");
 * });
 * ```
 */
export function toRequest(
  incoming: IncomingMessage,
  options: NodeAdapterOptions & { signal?: AbortSignal } = {},
): Request | undefined {
  const prefix = normalisePrefix(options.prefix);
  const target = incoming.url ?? "/";
  if (!target.startsWith("/")) return undefined; // absolute-form and `*` targets are not ours
  const path = stripPrefix(target, prefix);
  if (path === undefined) return undefined;
  const secure = (incoming.socket as { encrypted?: boolean }).encrypted === true;
  const host = incoming.headers.host ?? "localhost";
  let url: URL;
  try {
    url = new URL(`${secure ? "https" : "http"}://${host}${path}`);
  } catch {
    return undefined;
  }
  if (url.host !== host.toLowerCase()) return undefined; // a Host carrying a path or userinfo
  const headers = new Headers();
  const raw = incoming.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    try {
      headers.append(raw[i], raw[i + 1]);
    } catch {
      // A header value the Fetch standard refuses: leave it out.
    }
  }
  const method = incoming.method ?? "GET";
  const hasBody = method !== "GET" && method !== "HEAD";
  const init: RequestInit & { duplex?: "half" } = { method, headers, signal: options.signal };
  if (hasBody) {
    init.body = bodyStream(incoming);
    init.duplex = "half";
  }
  try {
    return new Request(url, init);
  } catch {
    return undefined; // a method Fetch forbids (CONNECT, TRACE, TRACK)
  }
}

/**
 * Writes a `Response` to a Node response, streaming the body with back-pressure. When the
 * request body was left unread (a refusal), pass `closeConnection` so the socket is not reused.
 *
 * @example
 * ```ts ignore
 * import { createServer } from "node:http";
 * import { writeResponse } from "@beacon/beacon/node";
 *
 * createServer((_incoming, outgoing) => {
 *   void writeResponse(outgoing, Response.json({ ok: true }));
 * });
 * ```
 */
export async function writeResponse(
  outgoing: ServerResponse,
  response: Response,
  closeConnection = false,
): Promise<void> {
  outgoing.statusCode = response.status;
  for (const [name, value] of response.headers) {
    if (name === "set-cookie") continue;
    outgoing.setHeader(name, value);
  }
  const cookies = response.headers.getSetCookie();
  if (cookies.length > 0) outgoing.setHeader("set-cookie", cookies);
  if (closeConnection) outgoing.setHeader("connection", "close");
  if (response.body === null) {
    outgoing.end();
    return;
  }
  const reader = response.body.getReader();
  try {
    while (true) {
      const { done, value } = await reader.read();
      if (done) break;
      if (outgoing.destroyed) {
        await reader.cancel();
        return;
      }
      if (!outgoing.write(value)) {
        await new Promise<void>((resolve) => {
          outgoing.once("drain", resolve);
          outgoing.once("close", resolve);
        });
      }
    }
    outgoing.end();
  } catch (error) {
    outgoing.destroy();
    throw error;
  }
}

/**
 * Adapts a fetch handler (such as `beacon.fetch`) to a `node:http` request listener. The peer
 * address comes from `socket.remoteAddress`; the Beacon reads forwarding headers only when it is
 * configured with `trustedProxies`.
 *
 * @example Serve the Beacon with `node:http`
 * ```ts ignore
 * import { createServer } from "node:http";
 * import { createBeacon } from "@beacon/beacon";
 * import { toNodeListener } from "@beacon/beacon/node";
 *
 * const beacon = createBeacon({ database: { url: "file:data/beacon.db" } });
 * createServer(toNodeListener(beacon.fetch)).listen(8000);
 * ```
 */
export function toNodeListener(
  handler: FetchHandler,
  options: NodeAdapterOptions = {},
): NodeListener {
  normalisePrefix(options.prefix); // fail at mount time, not per request
  // The core's door for the answers the adapter gives itself: logged through `options.log`.
  const door = createDoor(options.log, Date.now);
  // A handler that failed without an answer has logged nothing, and writing its answer may have
  // been what failed: that last resort is hardened but not logged again.
  const lastResort = createDoor(undefined, Date.now);
  const deny = (incoming: IncomingMessage, outgoing: ServerResponse, code: ErrorCode) => {
    incoming.resume(); // discard a body nobody will read
    const response = door.turnAway({ method: incoming.method ?? "" }, Date.now(), code);
    writeResponse(outgoing, response, true).catch((error) => {
      options.onError?.(error);
      outgoing.destroy();
    });
  };
  return (incoming, outgoing) => {
    const aborted = new AbortController();
    outgoing.once("close", () => {
      if (!outgoing.writableFinished) aborted.abort();
    });
    const request = toRequest(incoming, { ...options, signal: aborted.signal });
    if (request === undefined) {
      // Fetch cannot carry the method: no resource of ours allows it (the core answers 405 to
      // every method a route lacks). Otherwise the target or Host is not one of ours.
      const method = (incoming.method ?? "").toUpperCase();
      const forbidden = method === "CONNECT" || method === "TRACE" || method === "TRACK";
      return deny(incoming, outgoing, forbidden ? "method_not_allowed" : "not_found");
    }
    let answer: Promise<Response>;
    try {
      answer = handler(request, {
        remoteAddress: incoming.socket.remoteAddress ?? null, // undefined once the socket closed
        scheme: request.url.startsWith("https:") ? "https" : "http",
        // The prefix this listener strips: the Beacon's published URLs carry it.
        basePath: normalisePrefix(options.prefix),
      });
    } catch (error) {
      answer = Promise.reject(error);
    }
    answer
      .then((response) => writeResponse(outgoing, response, !incoming.complete))
      .catch((error) => {
        options.onError?.(error);
        if (!outgoing.headersSent) {
          const response = lastResort.turnAway({ method: incoming.method ?? "" }, 0, "internal");
          writeResponse(outgoing, response, true).catch(() => outgoing.destroy());
        } else {
          outgoing.destroy();
        }
      });
  };
}

/**
 * A `connect` listener for a `node:http` server. Node hands `CONNECT` requests (RFC 9110 §9.3.6,
 * a tunnel request) to the server's `connect` event, never to the request listener, and closes
 * the connection unanswered when nothing listens. This answers them with the core's `405` and
 * hardening headers, then closes: no resource of the Beacon is a tunnel.
 *
 * @example
 * ```ts ignore
 * import { createServer } from "node:http";
 * import { refuseConnect, toNodeListener } from "@beacon/beacon/node";
 *
 * const server = createServer(toNodeListener(beacon.fetch));
 * server.on("connect", refuseConnect);
 * ```
 */
export function refuseConnect(
  _request: IncomingMessage,
  socket: { end(data: string): void; destroy(): void; writable: boolean },
): void {
  if (!socket.writable) return socket.destroy();
  void (async () => {
    const arrival = { method: "CONNECT" };
    const response = createDoor(undefined, Date.now).turnAway(arrival, 0, "method_not_allowed");
    const body = await response.text();
    let head = `HTTP/1.1 ${response.status} Method Not Allowed\r\n`;
    for (const [name, value] of response.headers) head += `${name}: ${value}\r\n`;
    head += `content-length: ${new TextEncoder().encode(body).length}\r\nconnection: close\r\n\r\n`;
    socket.end(head + body);
  })().catch(() => socket.destroy());
}
