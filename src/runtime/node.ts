/**
 * Node entry and `node:http` adapter. The adapter turns an `IncomingMessage` into a standard
 * `Request` (the body stays a stream that is pulled one chunk at a time, so the core's
 * byte-counting body limit still decides how much is read) and writes the `Response` back with
 * back-pressure. {@linkcode main} serves the Beacon the same way as the Deno entry: same
 * environment variables, same JSON lines on stdout, clean shutdown on SIGINT / SIGTERM.
 *
 * Node 20 cannot run TypeScript, so `deno task start:node` first bundles this file with esbuild
 * into `tools/dist/node.mjs` (see `scripts/runtimes.ts`).
 *
 * @example Mount the Beacon under `/beacon` in an existing `node:http` server
 * ```ts ignore
 * import { createServer } from "node:http";
 * import { createBeacon } from "./mod.ts";
 * import { toNodeListener } from "./src/runtime/node.ts";
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
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import process from "node:process";
import type { ConnectionInfo } from "../../mod.ts";
import { beaconForServer, closeAndReport, configFromEnvironment } from "./config.ts";

/** A fetch handler in the shape of `Beacon.fetch`. */
export type FetchHandler = (request: Request, info?: ConnectionInfo) => Promise<Response>;

/** Options of {@linkcode toNodeListener} and {@linkcode toRequest}. */
export interface NodeAdapterOptions {
  /**
   * A path prefix the Beacon is mounted under (for example `/beacon`). It is removed from the
   * request path before the handler sees it; requests outside the prefix are answered 404.
   */
  prefix?: string;
  /** Receives errors of the adapter itself (a response that could not be written). */
  onError?: (error: unknown) => void;
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
 * undefined when the path lies outside `options.prefix` or the target is not a valid URL.
 *
 * @example
 * ```ts ignore
 * import { createServer } from "node:http";
 * import { toRequest } from "./src/runtime/node.ts";
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
  return new Request(url, init);
}

/**
 * Writes a `Response` to a Node response, streaming the body with back-pressure. When the
 * request body was left unread (a refusal), pass `closeConnection` so the socket is not reused.
 *
 * @example
 * ```ts ignore
 * import { createServer } from "node:http";
 * import { writeResponse } from "./src/runtime/node.ts";
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
 * import { createBeacon } from "./mod.ts";
 * import { toNodeListener } from "./src/runtime/node.ts";
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
  return (incoming, outgoing) => {
    const aborted = new AbortController();
    outgoing.once("close", () => {
      if (!outgoing.writableFinished) aborted.abort();
    });
    const request = toRequest(incoming, { ...options, signal: aborted.signal });
    if (request === undefined) {
      incoming.resume();
      outgoing.writeHead(404, { "content-type": "application/json", connection: "close" });
      outgoing.end(JSON.stringify({ error: { code: "not_found", message: "No such resource" } }));
      return;
    }
    handler(request, {
      remoteAddress: incoming.socket.remoteAddress,
      scheme: request.url.startsWith("https:") ? "https" : "http",
    })
      .then((response) => writeResponse(outgoing, response, !incoming.complete))
      .catch((error) => {
        options.onError?.(error);
        if (!outgoing.headersSent) {
          outgoing.writeHead(500, { "content-type": "application/json", connection: "close" });
          outgoing.end(JSON.stringify({ error: { code: "internal", message: "Internal error" } }));
        } else {
          outgoing.destroy();
        }
      });
  };
}

/**
 * Serves the Beacon on Node from the environment (`PORT`, `HOSTNAME`, `BEACON_*`), printing
 * `{"event":"listening",...}` and, after SIGINT / SIGTERM, `{"event":"shutdown",...}`.
 *
 * @example
 * ```ts ignore
 * import { main } from "./src/runtime/node.ts";
 * await main();
 * ```
 */
export async function main(): Promise<void> {
  const config = configFromEnvironment((name) => process.env[name]);
  const beacon = beaconForServer(config);
  await beacon.ready();
  const server = createServer(toNodeListener(beacon.fetch));
  // Slow senders are bounded by the core's body deadline; these bound the header phase.
  server.headersTimeout = 15_000;
  server.requestTimeout = 30_000;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(config.port, config.hostname, () => resolve());
  });
  const address = server.address();
  const port = typeof address === "object" && address !== null ? address.port : config.port;
  console.log(JSON.stringify({ event: "listening", hostname: config.hostname, port }));

  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    const closed = new Promise((resolve) => server.close(resolve)); // in-flight requests finish
    server.closeIdleConnections();
    await closed;
    await closeAndReport(beacon);
    process.exit(0);
  };
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
}
