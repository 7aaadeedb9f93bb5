/**
 * `deno task card -- <public URL>`: prints the agent card for that public origin, byte for byte
 * as the Beacon serves it (same rendering, same serialisation, so the same ETag), for the apex
 * site to host as a static `/.well-known/agent-card.json`.
 *
 * The argument must be an http(s) URL with no path, query, fragment or credentials beyond the
 * origin: the card names `<origin>/a2a/v1`, and a path would be silently dropped otherwise.
 *
 * @example
 * ```sh
 * deno task card -- https://beacon.example.com > site/.well-known/agent-card.json
 * ```
 *
 * @module
 */
import { agentCard } from "./card.ts";

/**
 * The origin of a public URL argument, or undefined when it is not a bare http(s) origin.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { originOf } from "./print_card.ts";
 *
 * assert.equal(originOf("https://beacon.example.com/"), "https://beacon.example.com");
 * assert.equal(originOf("https://beacon.example.com/a2a"), undefined);
 * ```
 */
export function originOf(argument: string | undefined): string | undefined {
  if (argument === undefined || !URL.canParse(argument)) return undefined;
  const url = new URL(argument);
  if (url.protocol !== "https:" && url.protocol !== "http:") return undefined;
  if (url.username !== "" || url.password !== "") return undefined;
  if (url.pathname !== "/" || url.search !== "" || url.hash !== "") return undefined;
  return url.origin;
}

/**
 * The card as served: pretty-printed JSON with a final newline (as src/http/cacheable.ts
 * serialises documents).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { cardText } from "./print_card.ts";
 *
 * assert.ok(cardText("https://beacon.example.com").endsWith("}\n"));
 * ```
 */
export function cardText(origin: string): string {
  return JSON.stringify(agentCard({ origin }), null, 2) + "\n";
}

if (import.meta.main) {
  const origin = originOf(Deno.args[0]);
  if (origin === undefined || Deno.args.length !== 1) {
    console.error(
      "Usage: deno task card -- <public URL>, an http(s) origin such as https://beacon.example.com",
    );
    Deno.exit(2);
  }
  await Deno.stdout.write(new TextEncoder().encode(cardText(origin)));
}
