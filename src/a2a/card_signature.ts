/**
 * The signed agent card (A2A 1.0.1 §8.4) and the JWKS that publishes its key (RFC 7517).
 *
 * - **Payload** (§8.4.1): the card without `signatures`, after the field-presence rules
 *   (optional arrays and objects that are empty are omitted; REQUIRED ones stay even when
 *   empty), serialised with RFC 8785 (JCS, `src/json/canonical.ts`). The Beacon applies the
 *   presence rules to the card it serves too, so the served card minus `signatures` *is* the
 *   signed object, and a verifier re-canonicalising it gets the signed bytes.
 * - **Signature** (§8.4.2): one JWS (RFC 7515) in the flattened JSON form without its payload
 *   member, `{protected, signature}`. The protected header is
 *   `{"alg":"EdDSA","jku":<JWKS URL>,"kid":<fingerprint>,"typ":"JOSE"}` (RFC 8037 §3.1: EdDSA
 *   with an Ed25519 key), serialised canonically so the same key and origin always give the
 *   same bytes. Ed25519 is deterministic (RFC 8032 §5.1.6), so the card, and its ETag, are
 *   stable for a key and an origin across restarts.
 * - **Key**: the Beacon's own Ed25519 key, the one that signs receipts (src/signing/key.ts).
 *   `kid` is its fingerprint `sha256:<hex of the raw public key>`, the form the discovery
 *   document's `receiptSigning.fingerprint` names.
 *
 * @module
 */
import { base64url } from "../bytes.ts";
import { isJsonObject } from "../json/value.ts";
import { canonicalJson } from "../json/canonical.ts";
import type { SigningKey } from "../signing/key.ts";
import type { PreviousKey } from "../signing/key_history.ts";

/** Media type of a JWK Set (RFC 7517 §8.5.1). */
export const JWKS_CONTENT_TYPE = "application/jwk-set+json";

/** The public half of the signing key: what {@linkcode signCard} and {@linkcode jwks} need. */
export type CardKey = Pick<SigningKey, "privateKey" | "publicKey" | "fingerprint">;

/**
 * REQUIRED members of the objects in the Beacon's card that are arrays or objects (proto
 * `AgentCard`, `AgentSkill`, by path; `[]` stands for any array index): kept even when empty.
 */
const REQUIRED_CONTAINERS = new Set([
  "supportedInterfaces",
  "capabilities",
  "defaultInputModes",
  "defaultOutputModes",
  "skills",
  "skills[].tags",
]);

function isEmptyContainer(value: unknown): boolean {
  return Array.isArray(value) ? value.length === 0 : isJsonObject(value) &&
    Object.keys(value).length === 0;
}

function applyPresence(value: unknown, path: string): unknown {
  if (Array.isArray(value)) return value.map((item) => applyPresence(item, `${path}[]`));
  if (!isJsonObject(value)) return value;
  const kept: [string, unknown][] = [];
  for (const [name, member] of Object.entries(value)) {
    const memberPath = path === "" ? name : `${path}.${name}`;
    const processed = applyPresence(member, memberPath);
    if (isEmptyContainer(processed) && !REQUIRED_CONTAINERS.has(memberPath)) continue;
    kept.push([name, processed]);
  }
  return Object.fromEntries(kept);
}

/**
 * The card as signed and served: without `signatures`, empty optional arrays and objects
 * omitted (§8.4.1). Scalars are never dropped: the card states its booleans explicitly, and an
 * explicitly set optional field is present (§8.4.1).
 *
 * @example
 * ```ts
 * import { unsignedCard } from "./card_signature.ts";
 * unsignedCard({ name: "B", skills: [], capabilities: { extensions: [] }, signatures: [] });
 * // { name: "B", skills: [], capabilities: {} }
 * ```
 */
export function unsignedCard(card: Record<string, unknown>): Record<string, unknown> {
  const { signatures: _signatures, ...rest } = card;
  return applyPresence(rest, "") as Record<string, unknown>;
}

/**
 * The JWS payload bytes for a card: the RFC 8785 form of {@linkcode unsignedCard}, as UTF-8.
 *
 * @example
 * ```ts
 * import { cardPayload } from "./card_signature.ts";
 * new TextDecoder().decode(cardPayload({ name: "B", version: "1" })); // '{"name":"B","version":"1"}'
 * ```
 */
export function cardPayload(card: Record<string, unknown>): Uint8Array<ArrayBuffer> {
  return new TextEncoder().encode(canonicalJson(unsignedCard(card)));
}

/**
 * Signs a card: returns the card as served, {@linkcode unsignedCard} plus
 * `signatures: [{protected, signature}]`.
 *
 * @param card The rendered card (src/a2a/card.ts).
 * @param key The Beacon's signing key.
 * @param jwksUrl The absolute URL of the JWKS, for the `jku` header.
 *
 * @example
 * ```ts
 * import { signCard } from "./card_signature.ts";
 * // const signed = await signCard(agentCard({ origin }), key, origin + JWKS_PATH);
 * ```
 */
export async function signCard(
  card: Record<string, unknown>,
  key: CardKey,
  jwksUrl: string,
): Promise<Record<string, unknown>> {
  const header = { alg: "EdDSA", typ: "JOSE", kid: key.fingerprint, jku: jwksUrl };
  const encoder = new TextEncoder();
  const protectedHeader = base64url(encoder.encode(canonicalJson(header)));
  // RFC 7515 §5.1: the signing input is ASCII(BASE64URL(header) || "." || BASE64URL(payload)).
  const input = encoder.encode(`${protectedHeader}.${base64url(cardPayload(card))}`);
  const signature = await crypto.subtle.sign("Ed25519", key.privateKey, input);
  return {
    ...unsignedCard(card),
    signatures: [{ protected: protectedHeader, signature: base64url(new Uint8Array(signature)) }],
  };
}

/**
 * The JWK Set publishing the signing key: one OKP key (RFC 8037 §2) with `crv: "Ed25519"`, the
 * raw public key as `x`, `kid` (the fingerprint, as in the card's JWS header), `use: "sig"` and
 * `alg: "EdDSA"` (RFC 7517 §4). Keys the log rotated from follow, each with the rows it vouches for
 * (`beacon_rows`, a member of our own: RFC 7517 §4 lets a JWK carry more) so old receipts keep
 * verifying; the current key is first.
 *
 * @example
 * ```ts
 * import { jwks } from "./card_signature.ts";
 * // jwks(key).keys[0].kty === "OKP"
 * ```
 */
export function jwks(
  key: Pick<SigningKey, "publicKey" | "fingerprint">,
  previousKeys: readonly PreviousKey[] = [],
): {
  keys: Record<string, unknown>[];
} {
  const jwk = (publicKey: string, fingerprint: string) => ({
    kty: "OKP",
    crv: "Ed25519",
    x: publicKey,
    kid: fingerprint,
    use: "sig",
    alg: "EdDSA",
  });
  return {
    keys: [
      jwk(key.publicKey, key.fingerprint),
      ...previousKeys.map((previous) => ({
        ...jwk(previous.publicKey, previous.fingerprint),
        beacon_rows: { first: previous.firstSeq, last: previous.lastSeq },
      })),
    ],
  };
}
