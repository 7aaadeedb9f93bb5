/**
 * The human-readable specifications, served as Markdown (`text/markdown; charset=utf-8`,
 * RFC 7763) beside the machine-readable documents, so an agent developer holding only the
 * served documents can learn how to verify a receipt or the card's signature. The discovery
 * document links both; the agent card's `documentationUrl` names the A2A one.
 *
 * @module
 */
import { DOCS_PATH } from "../routes.ts";

/** The served documents, by file name under `docs/`. */
export const SERVED_DOC_FILES = ["protocol-0.1.md", "a2a.md"] as const;

/** A served document's file name. */
export type ServedDoc = typeof SERVED_DOC_FILES[number];

/** Media type of a served document (RFC 7763). */
export const MARKDOWN_CONTENT_TYPE = "text/markdown; charset=utf-8";

/** The public URL of a served document. */
export function docUrl(origin: string, name: ServedDoc): string {
  return origin + DOCS_PATH + name;
}
