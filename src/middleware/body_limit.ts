/**
 * Reads the request body under a byte limit, counting the bytes actually received: a
 * `Content-Length` above the limit is refused before reading (when no `Transfer-Encoding`
 * overrides it, RFC 9112 §6.3), and a body without a length, chunked, or with a lying length is
 * cut off at the first byte past the limit. At most limit + one chunk is ever buffered, and the
 * stream is cancelled so the runtime stops receiving it. A sender that stalls mid-body is answered
 * `408 request_timeout` when the read deadline passes.
 *
 * @module
 */
import { refuse } from "../http/errors.ts";
import { CoarseTimer } from "../timers.ts";
import type { Context } from "../http/context.ts";
import type { Middleware } from "./compose.ts";

/**
 * Why a body could not be read: over the limit, too slow, or broken off (the sender reset the
 * connection, or the server is shutting down): `unavailable`, so a client that is still there
 * knows to retry.
 */
export type BodyRefusal = "too_large" | "request_timeout" | "unavailable";

/**
 * Body-read deadlines, served by the shared coarse timer (src/timers.ts) instead of one timer
 * per request; a deadline fires within one tick (at most `TICK_MS`) after it is due. Each entry is
 * the function that settles its read as timed out, so a deadline costs no promise of its own and
 * nothing waits on one that never settles.
 */
const TICK_MS = 50;
const timer = new CoarseTimer(TICK_MS);
const deadlines = new Map<(timedOut: "request_timeout") => void, number>();

function tick(now: number): boolean {
  for (const [expire, due] of deadlines) {
    if (due <= now) {
      deadlines.delete(expire);
      expire("request_timeout");
    }
  }
  return deadlines.size > 0;
}

/** Calls `expire` with `request_timeout` once `ms` have passed, unless it is forgotten first. */
function expireAfter(expire: (timedOut: "request_timeout") => void, ms: number): void {
  const now = Date.now();
  deadlines.set(expire, now + ms);
  timer.watch(tick, now);
}

/**
 * Drops a deadline whose read has ended. The shared interval is not stopped here: `tick` stops
 * it at its next run if no read is pending then. Stopping it whenever the map empties, which
 * under load is after nearly every read (a small body arrives at once), made each request
 * create and clear an interval: about 4 % of the durable path's main-thread time.
 */
function forget(expire: (timedOut: "request_timeout") => void): void {
  deadlines.delete(expire);
}

/**
 * Reads a body framed by its `Content-Length` in one step (one runtime call instead of a read
 * per chunk): one promise, settled by the read (with the bytes, or `too_large` past `maxBytes`)
 * or by the deadline, whichever comes first.
 */
function readDeclared(
  request: Request,
  maxBytes: number,
  timeoutMs: number,
): Promise<Uint8Array<ArrayBuffer> | BodyRefusal> {
  return new Promise((resolve) => {
    const broken = () => {
      forget(resolve);
      resolve("unavailable");
    };
    expireAfter(resolve, timeoutMs);
    try {
      // arrayBuffer(), not bytes(): older runtimes (Node 20's fetch) lack the latter.
      request.arrayBuffer().then((buffer) => {
        forget(resolve);
        resolve(buffer.byteLength > maxBytes ? "too_large" : new Uint8Array(buffer));
      }, broken);
    } catch {
      broken(); // a body already used, say: it can never complete
    }
  });
}

/**
 * Below one memory page, a chunk is copied before it is kept; from a page up, the runtime's own
 * view is kept. Deno hands each chunk as a view at the start of a fresh 64 KiB buffer, whose
 * untouched pages take no memory: keeping a view costs the pages its bytes fill, at most twice its
 * size from a page up, while a copy adds its size again (200 hostile chunked uploads in 16 KiB
 * chunks peaked at 161 MiB with copies, 149 MiB with views: `deno task bench:uploads`). A view of
 * a few bytes still holds a whole page: a 64 KiB body in 1-byte chunks would hold 256 MiB.
 */
const MIN_KEPT_VIEW_BYTES = 4096;

/** The chunk itself, or a copy of it when it is a small view into a larger buffer. */
function keepable(chunk: Uint8Array<ArrayBuffer>): Uint8Array<ArrayBuffer> {
  const small = chunk.byteLength < MIN_KEPT_VIEW_BYTES &&
    chunk.byteLength < chunk.buffer.byteLength;
  return small ? chunk.slice() : chunk;
}

/**
 * Reads `request`'s body: the bytes, or the refusal. `timeoutMs` bounds the whole read. A body
 * framed by its length is {@linkcode readDeclared}'s own promise, with no async frame around it
 * (every submission takes that path); any other is read chunk by chunk.
 */
export function readBodyWithin(
  request: Request,
  maxBytes: number,
  timeoutMs: number,
): Promise<Uint8Array<ArrayBuffer> | BodyRefusal> {
  const declared = request.headers.get("content-length");
  const framed = declared !== null && !request.headers.has("transfer-encoding");
  if (framed) {
    const length = Number(declared);
    if (Number.isFinite(length) && length > maxBytes) return Promise.resolve("too_large");
  }
  if (framed) {
    // An HTTP server frames the body by its Content-Length (RFC 9112 §6.2), which is within the
    // limit here, so it delivers no more. The length is checked again for Requests built by an
    // embedding application, which nothing frames.
    // `arrayBuffer()` without a look at `body` first: on Deno the `body` getter builds a
    // `ReadableStream`, and the read then collects it chunk by chunk instead of taking the
    // buffered bytes in one step (about 3 % of the durable path's main-thread time). A
    // request without a body reads as empty.
    return readDeclared(request, maxBytes, timeoutMs);
  }
  return readChunks(request, maxBytes, timeoutMs);
}

/** Reads a body without a trusted length chunk by chunk, counting the bytes as they come. */
async function readChunks(
  request: Request,
  maxBytes: number,
  timeoutMs: number,
): Promise<Uint8Array<ArrayBuffer> | BodyRefusal> {
  if (request.body === null) return new Uint8Array(0);
  const reader = request.body.getReader();
  const chunks: Uint8Array<ArrayBuffer>[] = [];
  let total = 0;
  // Deno hands a 1-byte chunk as a view of a much larger buffer, so whatever keeps a chunk keeps
  // that buffer: a 64 KiB body in 1-byte chunks held about 3 GiB. Hence no race of every read
  // against a deadline (each race would leave a reaction holding that read's chunk until the
  // deadline; the deadline cancels the reader instead, which ends the pending read), and small
  // chunks are kept as copies ({@linkcode keepable}).
  let timedOut = false;
  const expire = () => {
    timedOut = true;
    reader.cancel().catch(() => {});
  };
  expireAfter(expire, timeoutMs);
  try {
    while (true) {
      const step = await reader.read();
      if (timedOut) return "request_timeout";
      if (step.done) break;
      total += step.value.byteLength;
      if (total > maxBytes) {
        reader.cancel().catch(() => {});
        return "too_large";
      }
      chunks.push(keepable(step.value));
    }
  } catch {
    // The peer reset or the runtime aborted the body (a shutdown): it never completed.
    return "unavailable";
  } finally {
    forget(expire);
  }
  if (chunks.length === 1) return chunks[0];
  const body = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    body.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return body;
}

/**
 * Largest declared body a refusal drains instead of cancelling. On Deno 2.9, reading a small
 * body that has already arrived costs the server less than cancelling it (cancelling builds a
 * `ReadableStream` first; bench/README.md, "Figures behind constants"). A body this small costs
 * its connection no more memory
 * than its headers did; a larger, chunked or undeclared one is cancelled, so a hostile upload
 * is never received.
 */
const DRAIN_MAX_BYTES = 16_384;

/**
 * Releases the body of a request answered without reading it (a 429, 405, 404, 413 by
 * `Content-Length`), so the runtime need not buffer or wait for it: on Deno an unread body costs
 * the connection four times the work of a released one. Never waits.
 */
export function releaseBody(request: Request): void {
  if (request.bodyUsed) return;
  const declared = request.headers.get("content-length");
  if (declared !== null && !request.headers.has("transfer-encoding")) {
    const length = Number(declared);
    if (length === 0) return;
    if (length <= DRAIN_MAX_BYTES) {
      request.arrayBuffer().catch(() => {});
      return;
    }
  }
  // `body` is read only here: on Deno the getter itself builds the stream.
  request.body?.cancel().catch(() => {});
}

/** The body-limit middleware: sets `context.body` or answers 413 / 408. */
export function bodyLimit(maxBytes: number, timeoutMs: number): Middleware {
  return async (context: Context, next) => {
    const body = await readBodyWithin(context.request, maxBytes, timeoutMs);
    if (typeof body === "string") {
      // A body the client broke off is its doing, not a fault of ours, although it is a 503.
      // The rest of the body is never read, so the connection cannot carry another request; the
      // HTTP servers we run on answer `Connection: close` themselves (RFC 9112 §9.6).
      // A 413 says the limit, so the sender knows what to change (docs/protocol-0.1.md §Errors).
      const details = body === "too_large" ? { maxBodyBytes: maxBytes } : undefined;
      return refuse(context, body, {
        details,
        outcome: body === "unavailable" ? "refused" : undefined,
      });
    }
    context.body = body;
    return next();
  };
}
