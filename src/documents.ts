/**
 * The documents the Beacon serves (discovery document, agent card, message schema, JWKS, served
 * Markdown), prepared so that the work per request never depends on how many `Host` values
 * clients send.
 *
 * - With a configured public origin (`publicUrl`, `BEACON_PUBLIC_URL`), every request gets the
 *   documents of that origin whatever its `Host` (the handler's `origin` says so), prepared once.
 *   The agent card is signed (A2A 1.0.1 §8.4) for that origin only.
 * - Without one, the documents name the origin of each request's validated `Host`, and the card
 *   is served **unsigned**: a signature would turn any `Host` a client invents into a portable,
 *   signed pointer to an endpoint of its choice. Each document is prepared once as a template
 *   split at the origin; a request only joins the pieces with its origin (JSON-escaped) and
 *   derives the ETag from the template's and the origin's hash. There is no per-`Host` cache to
 *   fill and no per-`Host` signing, so a rotating `Host` costs what a fixed one does. The server
 *   warns at start (src/start/config.ts).
 *
 * The origin-independent documents are prepared once in both cases.
 *
 * @module
 */
import { sha256Digest } from "./bytes.ts";
import { type CachedDocument, prepareDocument, prepareText } from "./http/cacheable.ts";
import { agentCard } from "./a2a/card.ts";
import { jwks, JWKS_CONTENT_TYPE, signCard, unsignedCard } from "./a2a/card_signature.ts";
import { JWKS_PATH } from "./routes.ts";
import { MARKDOWN_CONTENT_TYPE, SERVED_DOC_FILES, type ServedDoc } from "./native/docs.ts";
import { SERVED_DOC_TEXTS } from "./native/served_docs.ts";
import { messageJsonSchema } from "./message/json_schema.ts";
import type { SigningKey } from "./signing/key.ts";
import type { PreviousKey } from "./signing/key_history.ts";

/** Everything served as a document, for one origin. */
export interface DocumentSet {
  readonly discovery: CachedDocument;
  readonly card: CachedDocument;
  readonly schema: CachedDocument;
  readonly jwks: CachedDocument;
  readonly docs: Readonly<Record<ServedDoc, CachedDocument>>;
}

/** What the documents are made from. */
export interface DocumentSources {
  /** The configured public origin, if any: the only origin a card is signed for. */
  readonly publicOrigin?: string;
  /** `Last-Modified` of every document: when the Beacon started. */
  readonly started: Date;
  /** The discovery document for an origin (src/native/discovery.ts). */
  readonly discovery: (origin: string, key: SigningKey) => Record<string, unknown>;
  /** The signing key, known once the Beacon is open (documents are only asked for then). */
  readonly key: () => SigningKey;
  /** The keys the log rotated from, published in the JWKS with the rows each vouches for. */
  readonly previousKeys?: readonly PreviousKey[];
}

/** Stands for the origin in a template; no document holds it otherwise. */
const PLACEHOLDER = "\u{10FFFF}origin\u{10FFFF}";
const encoder = new TextEncoder();

/** A document prepared once with the origin left open. */
interface Template {
  readonly pieces: readonly string[];
  readonly prepared: CachedDocument;
}

async function template(
  value: unknown,
  options: Parameters<typeof prepareDocument>[1],
): Promise<Template> {
  const prepared = await prepareDocument(value, options);
  return { pieces: prepared.body.split(PLACEHOLDER), prepared };
}

function fill(template: Template, origin: string): CachedDocument {
  // The origin comes from a validated Host; escape it for JSON all the same.
  const body = template.pieces.join(JSON.stringify(origin).slice(1, -1));
  // The body is a function of the template and the origin, so this is a strong validator.
  const hash = sha256Digest(encoder.encode(`${template.prepared.etag} ${origin}`)).slice(7, 39);
  return { ...template.prepared, body, etag: `"${hash}"` };
}

/**
 * The document source the handler asks per request.
 *
 * @param sources Public origin, start time, discovery document, key.
 * @returns A function from the request's origin to its documents.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { originDocuments } from "./documents.ts";
 * import { signingKeyFromSeed } from "./signing/key.ts";
 *
 * const key = await signingKeyFromSeed(new Uint8Array(32));
 * const documents = originDocuments({
 *   started: new Date(0),
 *   discovery: (origin) => ({ submit: origin + "/beacon/0.1/submissions" }),
 *   key: () => key,
 * });
 * const card = JSON.parse((await documents("http://evil.example")).card.body);
 * assert.equal(card.signatures, undefined); // no public origin configured: never signed
 * ```
 */
export function originDocuments(
  sources: DocumentSources,
): (origin: string) => Promise<DocumentSet> {
  const cache = { lastModified: sources.started, maxAgeSeconds: 300 };
  let fixed: Promise<Omit<DocumentSet, "discovery" | "card">> | undefined;
  const prepareFixed = async () => {
    const key = sources.key();
    const [schema, keySet, ...docs] = await Promise.all([
      prepareDocument(messageJsonSchema(), { ...cache, contentType: "application/schema+json" }),
      prepareDocument(jwks(key, sources.previousKeys), {
        ...cache,
        contentType: JWKS_CONTENT_TYPE,
      }),
      ...SERVED_DOC_FILES.map((name) =>
        prepareText(SERVED_DOC_TEXTS[name], { ...cache, contentType: MARKDOWN_CONTENT_TYPE })
      ),
    ]);
    const served = Object.fromEntries(
      SERVED_DOC_FILES.map((name, i) => [name, docs[i]]),
    ) as Record<ServedDoc, CachedDocument>;
    return { schema, jwks: keySet, docs: served };
  };

  if (sources.publicOrigin !== undefined) {
    const origin = sources.publicOrigin;
    let signed: Promise<DocumentSet> | undefined;
    const prepareSigned = async (): Promise<DocumentSet> => {
      const key = sources.key();
      const [rest, discovery, card] = await Promise.all([
        fixed ??= prepareFixed(),
        prepareDocument(sources.discovery(origin, key), cache),
        signCard(agentCard({ origin }), key, origin + JWKS_PATH).then((card) =>
          prepareDocument(card, cache)
        ),
      ]);
      return { ...rest, discovery, card };
    };
    // Any other origin (none reaches here: the handler serves the public one) gets these too.
    return () => signed ??= prepareSigned();
  }

  let templates: Promise<{ discovery: Template; card: Template }> | undefined;
  const prepareTemplates = async () => {
    const [discovery, card] = await Promise.all([
      template(sources.discovery(PLACEHOLDER, sources.key()), cache),
      template(unsignedCard(agentCard({ origin: PLACEHOLDER })), cache),
    ]);
    return { discovery, card };
  };
  return async (origin) => {
    const [rest, open] = await Promise.all([
      fixed ??= prepareFixed(),
      templates ??= prepareTemplates(),
    ]);
    return { ...rest, discovery: fill(open.discovery, origin), card: fill(open.card, origin) };
  };
}
