/**
 * `deno task card -- <public URL>`: prints the agent card for that public origin, byte for byte
 * as the Beacon serves it (same rendering, same signature, same serialisation, so the same ETag),
 * for the apex site to host as a static `/.well-known/agent-card.json`.
 *
 * The card is signed (A2A §8.4, card_signature.ts) when the Beacon's signing key is available, found
 * as the server finds it (docs/keys.md): `BEACON_SIGNING_KEY`, `BEACON_SIGNING_KEY_FILE`, the key
 * file beside an embedded database (`BEACON_DATABASE_URL`, default `file:data/beacon.db`), or else
 * a key an earlier version kept in the database, read without creating or migrating anything. Without a key it prints
 * the unsigned card and says so on stderr; that copy differs from the served card (and its ETag).
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
import { agentCard } from "../a2a/card.ts";
import { type CardKey, signCard, unsignedCard } from "../a2a/card_signature.ts";
import { JWKS_PATH } from "../routes.ts";
import { DEFAULT_DATABASE_URL } from "../defaults.ts";
import { embeddedFilePath, isEmbedded, openClient } from "../store/client.ts";
import { parseSigningKey, SIGNING_KEY_SECRET, signingKeyFromSeed } from "../signing/key.ts";
import { keyFileBeside, readKeyFile } from "../start/key_file.ts";

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
 * assert.ok((await cardText("https://beacon.example.com")).endsWith("}\n"));
 * ```
 */
export async function cardText(origin: string, key?: CardKey): Promise<string> {
  const card = key === undefined
    ? unsignedCard(agentCard({ origin }))
    : await signCard(agentCard({ origin }), key, origin + JWKS_PATH);
  return JSON.stringify(card, null, 2) + "\n";
}

/** Where the key came from, or why there is none (for the stderr line). */
export type KeySource =
  | { readonly key: CardKey; readonly from: string }
  | { readonly key: undefined; readonly why: string };

/**
 * Finds the Beacon's signing key as the server would, without ever creating one: the configured
 * `BEACON_SIGNING_KEY`, else `BEACON_SIGNING_KEY_FILE` or the key file beside an embedded database,
 * else the `signing-key` secret of an existing database.
 */
export async function findSigningKey(
  env: (name: string) => string | undefined,
): Promise<KeySource> {
  const configured = env("BEACON_SIGNING_KEY");
  if (configured !== undefined && configured !== "") {
    return {
      key: await signingKeyFromSeed(parseSigningKey(configured)),
      from: "BEACON_SIGNING_KEY",
    };
  }
  const given = (name: string) => {
    const value = env(name);
    return value === undefined || value === "" ? undefined : value;
  };
  const url = given("BEACON_DATABASE_URL") ?? DEFAULT_DATABASE_URL;
  // The key file the server reads: the configured one, else the one beside an embedded database.
  const keyFile = given("BEACON_SIGNING_KEY_FILE") ??
    (url.startsWith("file:") ? keyFileBeside(url) : undefined);
  if (keyFile !== undefined) {
    const seed = await readKeyFile(keyFile).catch(() => undefined);
    if (seed !== undefined) {
      return { key: await signingKeyFromSeed(seed), from: `key file ${keyFile}` };
    }
  }
  const none = { key: undefined, why: `no BEACON_SIGNING_KEY, and no Beacon database at ${url}` };
  // Never creates one: an embedded file must already exist (opening would create it). The
  // client refuses a WAL without its -shm index beside a running server (store/client.ts).
  if (isEmbedded(url) && url !== ":memory:" && !await fileExists(embeddedFilePath(url))) {
    return none;
  }
  let client;
  try {
    client = await openClient({ url, authToken: given("BEACON_DATABASE_AUTH_TOKEN") });
  } catch {
    return none;
  }
  try {
    const rows = (await client.execute({
      sql: "SELECT value FROM secrets WHERE name = ?",
      args: [SIGNING_KEY_SECRET],
    })).rows;
    const value = rows[0]?.value;
    if (!(value instanceof ArrayBuffer) || value.byteLength !== 32) {
      return { key: undefined, why: `the database at ${url} holds no signing key yet` };
    }
    return { key: await signingKeyFromSeed(new Uint8Array(value)), from: url };
  } catch {
    return none; // no secrets table: not a Beacon database
  } finally {
    client.close();
  }
}

async function fileExists(path: string): Promise<boolean> {
  const { stat } = await import("node:fs/promises");
  return await stat(path).then(() => true, () => false);
}

if (import.meta.main) {
  // `deno task card -- <origin>` hands the script the `--` too (Deno 2.9); it is not an argument.
  const args = Deno.args[0] === "--" ? Deno.args.slice(1) : Deno.args;
  const origin = originOf(args[0]);
  if (origin === undefined || args.length !== 1) {
    console.error(
      "Usage: deno task card -- <public URL>, an http(s) origin such as https://beacon.example.com",
    );
    Deno.exit(2);
  }
  const found = await findSigningKey((name) => Deno.env.get(name));
  if (found.key === undefined) {
    console.error(
      `The card is NOT signed: ${found.why}. Set BEACON_SIGNING_KEY, BEACON_SIGNING_KEY_FILE (or ` +
        "BEACON_DATABASE_URL) " +
        "to the Beacon's, or the static copy will differ from the served, signed card.",
    );
  } else {
    console.error(`Signed with the Beacon's key ${found.key.fingerprint} (from ${found.from}).`);
  }
  await Deno.stdout.write(new TextEncoder().encode(await cardText(origin, found.key)));
}
