/**
 * `GET /`: a small HTML page for a person who opens the Beacon's address in a browser.
 * It says what the Beacon is and links the discovery document, the agent card, the served
 * specifications, the message schema and the two ways to submit. It is built from the public
 * origin alone, never from a request's content or anything submitted.
 *
 * The page has no script, style, image or form, so the response headers every answer carries
 * (`Content-Security-Policy: default-src 'none'; frame-ancestors 'none'`, `nosniff`) hold for
 * it unchanged. The handler sets only what is the page's own (its media type and caching, through
 * `src/http/cacheable.ts`, as every served document does); the hardening headers come from the
 * door (`src/middleware/door.ts`), as for every other answer.
 *
 * @module
 */
import {
  A2A_PATH,
  CARD_PATH,
  DISCOVERY_PATH,
  JWKS_PATH,
  SCHEMA_PATH,
  STATUS_PATH,
  SUBMIT_PATH,
} from "../routes.ts";
import { prepareText, serveDocument } from "../http/cacheable.ts";
import type { RouteHandler } from "../http/route.ts";
import { BEACON_DESCRIPTION, IDENTITY_STATEMENT } from "./discovery.ts";
import { docUrl } from "./docs.ts";
import type { PublicOrigin } from "../http/context.ts";

/** Media type of the page. */
export const HOME_CONTENT_TYPE = "text/html; charset=utf-8";

/** Escapes text for HTML element content and double-quoted attribute values. */
function escapeHtml(text: string): string {
  return text.replace(
    /[&<>"']/g,
    (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!,
  );
}

/** The page for `origin` (the public origin, without a trailing slash). */
export function homePage(origin: string): string {
  const link = (url: string, text = url) => `<a href="${escapeHtml(url)}">${escapeHtml(text)}</a>`;
  const code = (text: string) => `<code>${escapeHtml(text)}</code>`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>Beacon</title>
</head>
<body>
<h1>Beacon</h1>
<p>${escapeHtml(BEACON_DESCRIPTION)}</p>
<p>${escapeHtml(IDENTITY_STATEMENT)}</p>
<h2>For agents</h2>
<ul>
<li>Discovery document (beacon/0.1): ${link(origin + DISCOVERY_PATH)}</li>
<li>A2A agent card (A2A 1.0, JSON-RPC): ${link(origin + CARD_PATH)}</li>
<li>Message schema: ${link(origin + SCHEMA_PATH)}</li>
<li>Receipt signing key (JWKS): ${link(origin + JWKS_PATH)}</li>
</ul>
<h2>How to submit</h2>
<ul>
<li>beacon/0.1: ${code(`POST ${origin}${SUBMIT_PATH}`)} with a JSON message
(${code("application/json")}) or plain text (${code("text/plain; charset=utf-8")}); the receipt
names ${code(`GET ${origin}${STATUS_PATH}`)} for its status.</li>
<li>A2A 1.0: ${code(`SendMessage`)} over JSON-RPC to ${code(origin + A2A_PATH)}.</li>
</ul>
<p>Nobody replies and nothing is acted on: people read what arrives, later.</p>
<h2>Specifications</h2>
<ul>
<li>${link(docUrl(origin, "protocol-0.1.md"), "beacon/0.1")}</li>
<li>${link(docUrl(origin, "a2a.md"), "The Beacon's A2A surface")}</li>
</ul>
</body>
</html>
`;
}

/** When this module was loaded: the page's `Last-Modified` (it changes with the code only). */
const STARTED = new Date(Math.floor(Date.now() / 1000) * 1000);

/** The `GET /` route handler, for the public origin `origin` gives for a request. */
export function homeHandler(origin: PublicOrigin): RouteHandler {
  return async (context) => {
    const page = await prepareText(homePage(origin(context)), {
      lastModified: STARTED,
      maxAgeSeconds: 300,
      contentType: HOME_CONTENT_TYPE,
    });
    context.log.outcome = "served";
    return serveDocument(context.request, page);
  };
}
