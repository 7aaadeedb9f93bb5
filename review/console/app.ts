/**
 * The web console's HTTP core: one `fetch(Request) => Promise<Response>` that refuses early and
 * answers every route through one door (`harden`), so no answer can miss the security headers.
 *
 * Access (checked in this order, before any route runs):
 *
 * 1. `Host` must be exactly the address the console listens on, so a DNS-rebinding page on
 *    another name cannot reach it. Any other name (`localhost` included) gets 421 Misdirected
 *    Request (RFC 9110 §15.5.20: this server will not answer for that authority) with the
 *    address to open instead; not 401, which would read as a problem with the credential.
 * 2. A one-time code, printed with the URL to open, in the URL's fragment:
 *    `http://127.0.0.1:PORT/#code=C`. A browser never sends the fragment to any server (RFC 3986
 *    §3.5), so the code is in no request line, log or `Referer`, but the browser keeps the URL in
 *    its history. So the page spends the code at once: it posts it to `/api/session`, which
 *    answers, once, with a session credential and that session's CSRF token, and every later
 *    exchange of the same code is refused. The page keeps both in its memory only (a variable of
 *    its session module, static/session.js), clears the fragment, and sends the credential as
 *    `Authorization: Bearer S` on every API call. Nothing the browser writes to its profile
 *    (history, session restore, `sessionStorage`, which Chromium persists) holds a live secret:
 *    the history keeps a spent code. A reload or another tab has no credential, so each exchange
 *    makes the console print its next link (a fresh one-time code) in the terminal, where the
 *    first one was; opening it starts a new session and ends the previous one, so there is one
 *    live session at a time. No cookie is ever set: cookies are not bound to a port (RFC 6265
 *    §8.5), so a cookie for 127.0.0.1 would go to every other server on 127.0.0.1 as well. The
 *    page shell and its static files (the stylesheet and the script's modules) hold no data and
 *    are served without a credential; every other `/api/` route answers 401 without it. Secrets
 *    are compared in constant time and never logged.
 * 3. State-changing requests also need an `Origin` that is the console's own, a CSRF token in
 *    `X-CSRF-Token`, and a JSON body of at most 16 KiB, counted while it is read: the reading
 *    stops at the first byte over, and the rest is never read. The exchange needs the page's
 *    token (`<meta name="csrf-token">`, one per console run: it only shows the sender could
 *    read a page of the console, which the code itself then proves); every other POST needs the
 *    token the exchange gave with the session, so no client fetching pages, however many, can
 *    make the reviewer's marks fail (a cache of served pages' tokens once could be flushed).
 *
 * Every answer carries a strict Content Security Policy (`default-src 'none'`; scripts, styles
 * and `fetch` only from the console itself; no inline script or style, no `eval`; no frames,
 * images, fonts or media from anywhere), `Referrer-Policy: no-referrer`, `nosniff`, and
 * `Cache-Control: no-store`. The page renders submitted text only with `textContent`.
 *
 * @module
 */
import { base64url } from "../../src/signing/mod.ts";
import { type ConsoleApi, RequestError } from "./api.ts";
import { readBounded } from "../io.ts";

/** The Content Security Policy of every answer. */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "connect-src 'self'",
  "img-src 'none'",
  "font-src 'none'",
  "media-src 'none'",
  "object-src 'none'",
  "frame-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join("; ");

const SECURITY_HEADERS: Record<string, string> = {
  "content-security-policy": CONTENT_SECURITY_POLICY,
  "referrer-policy": "no-referrer",
  "x-content-type-options": "nosniff",
  "x-frame-options": "DENY",
  "cross-origin-opener-policy": "same-origin",
  "cross-origin-resource-policy": "same-origin",
  "cache-control": "no-store",
};

/** Largest JSON body accepted. */
const MAX_BODY = 16 * 1024;

/**
 * The page's files in static/, each served at `/static/NAME`: the stylesheet, the entry script
 * and the modules it imports (plain ES modules, no build step).
 */
export const STATIC_FILES = [
  "console.css",
  "console.js",
  "page.js",
  "session.js",
  "api.js",
  "queue.js",
  "item.js",
  "marks.js",
  "keys.js",
] as const;

/** The static files by name, read once at start. */
export type StaticFiles = Readonly<Record<(typeof STATIC_FILES)[number], string>>;

/** A static file's media type: a module script must be served as JavaScript to run at all. */
function staticType(name: string): string {
  return name.endsWith(".css") ? "text/css; charset=utf-8" : "text/javascript; charset=utf-8";
}

/** What the handler needs. */
export interface ConsoleOptions {
  /** `host:port` the console listens on, as the browser sends it in `Host`. */
  readonly authority: string;
  /** The one-time code the printed URL carries, exchanged once for a session credential. */
  readonly code: string;
  /**
   * Shows the reviewer the next link, with the fresh one-time code an exchange leaves behind
   * (serve.ts prints it in the terminal): a reload or another tab opens the console with it.
   */
  readonly nextCode?: (code: string) => Promise<void>;
  /** The JSON views and actions. */
  readonly api: ConsoleApi;
  /** The static files. */
  readonly files: StaticFiles;
}

/**
 * A fresh one-time code, session credential or CSRF token: 32 random bytes, base64url.
 *
 * @returns The token.
 */
export function randomToken(): string {
  return base64url(crypto.getRandomValues(new Uint8Array(32)));
}

function sameText(a: string, b: string): boolean {
  // Constant time in the length of `b` (the secret), whatever `a` is.
  let difference = a.length ^ b.length;
  for (let i = 0; i < b.length; i++) difference |= (a.charCodeAt(i) | 0) ^ b.charCodeAt(i);
  return difference === 0;
}

function harden(response: Response): Response {
  for (const [name, value] of Object.entries(SECURITY_HEADERS)) {
    response.headers.set(name, value);
  }
  return response;
}

/**
 * The body of a POST, as text, read only up to `MAX_BODY` bytes: a declared `Content-Length`
 * over it is refused before reading, and a body sent in chunks is counted as it arrives and
 * cancelled at the first byte over, so an oversized body costs at most `MAX_BODY + 1` bytes of
 * memory and the rest of it is never read.
 *
 * @returns The text, or `undefined` when the body is too large.
 * @throws {RequestError} 400 when it is not UTF-8.
 */
async function boundedBody(request: Request): Promise<string | undefined> {
  const bytes = await readBounded(request, MAX_BODY);
  if (bytes === undefined) return undefined;
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    throw new RequestError(400, "the body is not UTF-8");
  }
}

function text(status: number, body: string, headers: Record<string, string> = {}): Response {
  return new Response(body, {
    status,
    headers: { "content-type": "text/plain; charset=utf-8", ...headers },
  });
}

/**
 * A JSON answer.
 *
 * @param status The status.
 * @param body A JSON value.
 * @returns The response (hardened by the caller's door).
 */
export function json(status: number, body: unknown): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { "content-type": "application/json; charset=utf-8" },
  });
}

const EXPORT_TYPES = {
  ndjson: "application/x-ndjson; charset=utf-8",
  csv: "text/csv; charset=utf-8; header=present",
} as const;

/** An export, streamed as it is read, as an attachment (the page saves it through a Blob). */
async function exported(api: ConsoleApi, params: URLSearchParams): Promise<Response> {
  const { format, chunks } = await api.export(params);
  const encoder = new TextEncoder();
  const iterator = chunks[Symbol.asyncIterator]();
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      const { value, done } = await iterator.next();
      if (done) controller.close();
      else controller.enqueue(encoder.encode(value));
    },
    async cancel() {
      await iterator.return?.();
    },
  });
  return new Response(body, {
    headers: {
      "content-type": EXPORT_TYPES[format],
      "content-disposition": `attachment; filename="beacon-export.${format}"`,
    },
  });
}

function page(csrf: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="csrf-token" content="${csrf}">
<title>Beacon review console</title>
<link rel="stylesheet" href="/static/console.css">
<script type="module" src="/static/console.js"></script>
</head>
<body>
<header class="topbar">
  <h1>Beacon review</h1>
  <p id="counts" aria-live="polite"></p>
  <section id="integrity" aria-label="Integrity"></section>
  <button type="button" id="help-button" aria-keyshortcuts="?">Keys</button>
</header>
<details id="filter-panel" open>
<summary>Filters and export</summary>
<form id="filters" aria-label="Filters">
  <label>Status <select name="status">
    <option value="">queue (new first)</option><option>new</option><option>reviewed</option>
    <option>follow-up</option><option>dismissed</option><option>escalated</option>
  </select></label>
  <label>Surface <select name="surface"><option value="">any</option><option>native</option>
    <option>a2a</option></select></label>
  <label>Kind <select name="kind"><option value="">any</option><option>structured</option>
    <option>unstructured</option></select></label>
  <label>Signed <select name="signed"><option value="">any</option><option value="yes">signed</option>
    <option value="no">unsigned</option></select></label>
  <label>Intent <input name="intent" maxlength="200" autocomplete="off"></label>
  <label>Sender <input name="sender" maxlength="200" autocomplete="off"></label>
  <label>Source hash <input name="source" maxlength="128" autocomplete="off"></label>
  <label>Since <input name="since" placeholder="2025-06-01 or 24h" maxlength="40" autocomplete="off"></label>
  <label>Until <input name="until" placeholder="2025-06-02" maxlength="40" autocomplete="off"></label>
  <label class="wide">Search <input name="q" type="search" maxlength="200" autocomplete="off" aria-keyshortcuts="/"></label>
  <div class="form-actions">
    <button type="submit" class="primary">Apply filters</button>
    <button type="button" id="export-ndjson">Export NDJSON</button>
    <button type="button" id="export-csv">Export CSV</button>
    <span id="search-mode"></span>
  </div>
</form>
</details>
<main>
  <nav aria-label="Queue">
    <div class="nav-head">
      <div class="list-head">
        <span id="shown"></span>
        <span id="pending" aria-live="polite"></span>
        <button type="button" id="select-all">Select all shown</button>
      </div>
      <div id="bulk" role="toolbar" aria-label="Bulk actions" hidden></div>
    </div>
    <ol id="queue"></ol>
    <button type="button" id="more">Load more</button>
  </nav>
  <article id="item" aria-label="Submission" tabindex="-1">
    <p class="empty">Loading the queue…</p>
  </article>
</main>
<footer>
  <div id="legend" aria-label="Keyboard shortcuts"></div>
  <div id="status" role="status" aria-live="polite"></div>
</footer>
<dialog id="help" aria-label="Keyboard shortcuts"></dialog>
</body>
</html>
`;
}

/** Who may call a route: anyone (the page and its files hold no data), the session, or the
 * exchange of a one-time code (with the page's CSRF token, before there is a session). */
type Access = "open" | "session" | "exchange";

/** One route: its method and path, who may call it, and its answer (a POST's parsed body). */
interface ConsoleRoute {
  readonly method: "GET" | "POST";
  readonly path: string;
  readonly access: Access;
  readonly answer: (url: URL, body: unknown) => Promise<Response>;
}

/** Answers an API view or action with its JSON value. */
function jsonAnswer(
  answer: (url: URL, body: unknown) => Promise<unknown>,
): (url: URL, body: unknown) => Promise<Response> {
  return async (url, body) => json(200, await answer(url, body));
}

/** Every route the console answers, in one table (src/handler.ts `routeTable` is the model). */
function routeTable(
  api: ConsoleApi,
  files: StaticFiles,
  pageToken: string,
  exchange: (body: unknown) => Promise<Response>,
): ConsoleRoute[] {
  const get = (path: string, answer: (url: URL) => Promise<unknown>): ConsoleRoute => ({
    method: "GET",
    path,
    access: "session",
    answer: jsonAnswer(answer),
  });
  const post = (path: string, answer: (body: unknown) => Promise<unknown>): ConsoleRoute => ({
    method: "POST",
    path,
    access: "session",
    answer: jsonAnswer((_url, body) => answer(body)),
  });
  return [
    {
      method: "GET",
      path: "/",
      access: "open",
      answer: () =>
        Promise.resolve(
          new Response(page(pageToken), {
            headers: { "content-type": "text/html; charset=utf-8" },
          }),
        ),
    },
    ...STATIC_FILES.map((name): ConsoleRoute => ({
      method: "GET",
      path: `/static/${name}`,
      access: "open",
      answer: () => Promise.resolve(text(200, files[name], { "content-type": staticType(name) })),
    })),
    get("/api/queue", (url) => api.queue(url.searchParams)),
    get("/api/item", (url) => api.item(url.searchParams)),
    get("/api/integrity", () => api.integrity()),
    get("/api/counts", (url) => api.counts(url.searchParams)),
    {
      method: "GET",
      path: "/api/export",
      access: "session",
      answer: (url) => exported(api, url.searchParams),
    },
    {
      method: "POST",
      path: "/api/session",
      access: "exchange",
      answer: (_url, body) => exchange(body),
    },
    post("/api/event", (body) => api.event(body)),
    post("/api/verify", () => api.verify()),
  ];
}

/**
 * The route for a request not in the table: an unknown view or action is still behind the
 * session (and an action behind its checks), so a caller without one learns nothing about
 * which paths exist.
 */
function unknownRoute(method: string, path: string): ConsoleRoute | Response {
  if (!path.startsWith("/api/")) {
    return method === "GET" ? text(404, "not found") : text(405, "method not allowed");
  }
  if (method !== "GET" && method !== "POST") return text(405, "method not allowed");
  const refusal = new RequestError(404, method === "GET" ? "no such view" : "no such action");
  return { method, path, access: "session", answer: () => Promise.reject(refusal) };
}

/**
 * A POST's checks, in order: same Origin and the CSRF token `expected` (403), a JSON content
 * type (415), a body of at most `MAX_BODY` bytes (413, then the connection closes) that parses
 * as JSON (400).
 *
 * @returns The parsed body, or the refusal.
 */
async function checkedPost(
  request: Request,
  origin: string,
  expected: string | undefined,
): Promise<{ body: unknown } | Response> {
  const csrf = request.headers.get("x-csrf-token") ?? "";
  if (
    request.headers.get("origin") !== origin || expected === undefined ||
    !sameText(csrf, expected)
  ) {
    return text(403, "forbidden");
  }
  if (!/^application\/json(;|$)/.test(request.headers.get("content-type") ?? "")) {
    return text(415, "unsupported media type");
  }
  const body = await boundedBody(request);
  if (body === undefined) {
    // The rest of the body is never read: the connection closes after this answer
    // (RFC 9112 §9.6), which is the only way to stop a sender without reading on.
    const refused = json(413, { error: `the body is over ${MAX_BODY} bytes` });
    refused.headers.set("connection", "close");
    return refused;
  }
  try {
    return { body: JSON.parse(body) };
  } catch {
    return json(400, { error: "the body is not JSON" });
  }
}

/** The refusal of a request at the wrong name or with the code in its query, before any route. */
function misdirected(request: Request, url: URL, authority: string): Response | undefined {
  if (request.headers.get("host") !== authority) {
    return text(
      421,
      `open the console at http://${authority}/ (the address review serve printed): it answers ` +
        "at no other name, so that a web page on another name cannot reach it (DNS rebinding)",
    );
  }
  if (url.searchParams.has("token") || url.searchParams.has("code")) {
    // The code would be in the request line, the server's logs and the history.
    return text(400, "the code goes in the fragment: open the URL review serve printed (#code=)");
  }
  return undefined;
}

/**
 * The console's request handler.
 *
 * @param options Address, one-time code, API and files.
 * @returns The handler.
 */
export function consoleHandler(options: ConsoleOptions): (request: Request) => Promise<Response> {
  const origin = `http://${options.authority}`;
  // The pages' CSRF token, the same in every page served (see the module's doc).
  const pageToken = randomToken();
  // The live code, spent by its exchange; the session it gave is the only one, with its own CSRF
  // token.
  let code: string | undefined = options.code;
  let session: { credential: string; csrf: string } | undefined;
  const authorised = (request: Request) => {
    const match = /^Bearer ([A-Za-z0-9_-]{1,64})$/.exec(request.headers.get("authorization") ?? "");
    return match !== null && session !== undefined && sameText(match[1], session.credential);
  };
  const exchange = async (value: unknown): Promise<Response> => {
    const offered = (value as { code?: unknown } | null)?.code;
    if (typeof offered !== "string" || code === undefined || !sameText(offered, code)) {
      return json(401, {
        error: "this link's code is spent or wrong: each link opens the console once. " +
          "Open the newest link review serve printed.",
      });
    }
    session = { credential: randomToken(), csrf: randomToken() };
    code = options.nextCode === undefined ? undefined : randomToken();
    if (code !== undefined) await options.nextCode?.(code);
    return json(200, { session: session.credential, csrf: session.csrf });
  };
  const routes = routeTable(options.api, options.files, pageToken, exchange);
  const answer = async (request: Request): Promise<Response> => {
    const url = new URL(request.url);
    const refused = misdirected(request, url, options.authority);
    if (refused !== undefined) return refused;
    const route =
      routes.find((entry) => entry.method === request.method && entry.path === url.pathname) ??
        unknownRoute(request.method, url.pathname);
    if (route instanceof Response) return route;
    if (route.access === "session" && !authorised(request)) return text(401, "unauthorized");
    if (route.method === "GET") return await route.answer(url, undefined);
    const posted = await checkedPost(
      request,
      origin,
      route.access === "exchange" ? pageToken : session?.csrf,
    );
    if (posted instanceof Response) return posted;
    return await route.answer(url, posted.body);
  };
  return async (request) => {
    try {
      return harden(await answer(request));
    } catch (error) {
      // A refusal has a message of our own; anything else is never shown (it may hold data).
      if (error instanceof RequestError) {
        return harden(json(error.status, { error: error.message }));
      }
      return harden(json(500, { error: "internal error" }));
    }
  };
}
