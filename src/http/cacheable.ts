/**
 * Cacheable JSON documents (the discovery document, the agent card, the message schema): a
 * strong `ETag` derived from the exact bytes, `Last-Modified`, `Cache-Control` with `max-age`,
 * and `304 Not Modified` for a matching `If-None-Match` (RFC 9110 §13.1.2, §15.4.5; A2A §8.6).
 *
 * @module
 */
import { hex } from "../bytes.ts";

/** A prepared document: body and validators computed once. */
export interface CachedDocument {
  readonly body: string;
  readonly etag: string;
  readonly lastModified: string;
  readonly contentType: string;
  readonly maxAgeSeconds: number;
}

/** Prepares a document: serialises it and derives its strong ETag from a SHA-256 of the bytes. */
export function prepareDocument(
  value: unknown,
  options: { lastModified: Date; maxAgeSeconds: number; contentType?: string },
): Promise<CachedDocument> {
  return prepareText(JSON.stringify(value, null, 2) + "\n", options);
}

/** Prepares a text document (served Markdown) with the same validators as a JSON one. */
export async function prepareText(
  body: string,
  options: { lastModified: Date; maxAgeSeconds: number; contentType?: string },
): Promise<CachedDocument> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(body));
  return {
    body,
    etag: `"${hex(new Uint8Array(digest, 0, 16))}"`,
    lastModified: options.lastModified.toUTCString(),
    contentType: options.contentType ?? "application/json",
    maxAgeSeconds: options.maxAgeSeconds,
  };
}

/** Whether an `If-None-Match` value matches the ETag (weak comparison, RFC 9110 §13.1.2). */
function matches(ifNoneMatch: string, etag: string): boolean {
  if (ifNoneMatch.trim() === "*") return true;
  return ifNoneMatch.split(",").some((tag) => {
    const candidate = tag.trim();
    return (candidate.startsWith("W/") ? candidate.slice(2) : candidate) === etag;
  });
}

/** Serves a prepared document: 200 with validators, or 304 when the client's copy is current. */
export function serveDocument(request: Request, document: CachedDocument): Response {
  const headers = {
    "content-type": document.contentType,
    etag: document.etag,
    "last-modified": document.lastModified,
    "cache-control": `public, max-age=${document.maxAgeSeconds}`,
    vary: "accept-encoding",
  };
  const ifNoneMatch = request.headers.get("if-none-match");
  if (ifNoneMatch !== null && matches(ifNoneMatch, document.etag)) {
    return new Response(null, { status: 304, headers });
  }
  return new Response(document.body, { status: 200, headers });
}
