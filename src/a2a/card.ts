/**
 * The A2A 1.0 agent card (A2A §4.4.1 `AgentCard`, §8), rendered from the template
 * `schemas/agent-card.json` by filling in the public origin. The Beacon serves it at
 * `/.well-known/agent-card.json` (§8.2; caching per §8.6 is done by src/http/cacheable.ts), and
 * `deno task card -- <public URL>` prints the same card for the apex site to host as a static
 * file (print_card.ts). Both serve it signed (§8.4, card_signature.ts), with `documentationUrl`
 * naming the served copy of docs/a2a.md.
 *
 * What the card claims, and why it claims no more (design principle 4):
 *
 * - one interface, `{url: <origin>/a2a/v1, protocolBinding: "JSONRPC", protocolVersion: "1.0"}`
 *   (§5.2: every supported protocol MUST be declared; this is the only one);
 * - `streaming`, `pushNotifications` and `extendedAgentCard` explicitly false (§3.3.4: the
 *   matching methods then MUST answer -32004 / -32003 / -32004, which methods.ts does);
 * - the beacon/0.1 discovery document as an extension that is not required (§4.6.3), so no
 *   client is refused for not knowing it (-32008 never applies);
 * - no `securitySchemes`: the intake is public and anonymous;
 * - the statement of design principle 5, literally, in the description and the skill.
 *
 * @module
 */
import template from "../../schemas/agent-card.json" with { type: "json" };

/** The placeholder in the template's strings that stands for the public origin. */
export const ORIGIN_PLACEHOLDER = "{{origin}}";

/** What the card is rendered for. */
export interface CardFacts {
  /** The public origin, such as `https://beacon.example.com` (no trailing slash). */
  readonly origin: string;
}

function render(value: unknown, origin: string): unknown {
  if (typeof value === "string") return value.replaceAll(ORIGIN_PLACEHOLDER, origin);
  if (Array.isArray(value)) return value.map((item) => render(item, origin));
  if (typeof value === "object" && value !== null) {
    return Object.fromEntries(
      Object.entries(value).map(([key, item]) => [key, render(item, origin)]),
    );
  }
  return value;
}

/**
 * The agent card for an origin: a fresh object each call, so a caller can never change what
 * another one serves.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { agentCard } from "./card.ts";
 *
 * const card = agentCard({ origin: "https://beacon.example.com" });
 * const [face] = card.supportedInterfaces as { url: string }[];
 * assert.equal(face.url, "https://beacon.example.com/a2a/v1");
 * ```
 */
export function agentCard(facts: CardFacts): Record<string, unknown> {
  return render(template, facts.origin) as Record<string, unknown>;
}
