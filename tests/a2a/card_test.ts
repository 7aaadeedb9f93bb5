/**
 * The agent card: its content against A2A 1.0 (§4.4.1 REQUIRED fields, §5.2 interfaces, §3.3.4
 * capabilities), the template, the served document's caching headers (§8.6), and the
 * `deno task card` printer producing the served bytes.
 */
import { assert, assertEquals, assertStrictEquals } from "../support/assert.ts";
import { agentCard, ORIGIN_PLACEHOLDER } from "../../src/a2a/card.ts";
import { cardText, originOf } from "../../src/cli/print_card.ts";
import { parseSigningKey, signingKeyFromSeed } from "../../src/signing/key.ts";
import { IDENTITY_STATEMENT } from "../../src/native/discovery.ts";
import { startA2AServer } from "../support/a2a.ts";

const ORIGIN = "https://beacon.example.com";
// deno-lint-ignore no-explicit-any
const card = agentCard({ origin: ORIGIN }) as any;

Deno.test("agentCard() has every REQUIRED AgentCard field of A2A 1.0", () => {
  for (const field of ["name", "description", "version"]) {
    assertStrictEquals(typeof card[field], "string");
    assert(card[field].length > 0, field);
  }
  assertStrictEquals(card.version, "0.1.0");
  assert(Array.isArray(card.supportedInterfaces) && card.supportedInterfaces.length === 1);
  assertStrictEquals(typeof card.capabilities, "object");
  assertEquals(card.defaultInputModes, ["text/plain", "application/json"]);
  assertEquals(card.defaultOutputModes, ["application/json"]);
  assertStrictEquals(card.skills.length, 1);
  const skill = card.skills[0];
  for (const field of ["id", "name", "description"]) {
    assertStrictEquals(typeof skill[field], "string");
  }
  assertStrictEquals(skill.id, "submit-for-human-review");
  assert(skill.tags.length > 0 && skill.tags.every((tag: unknown) => typeof tag === "string"));
  assert(skill.examples.length > 0);
  assertEquals(card.provider, { organization: "Beacon operators", url: ORIGIN });
});

Deno.test("agentCard() declares exactly one JSON-RPC 1.0 interface at <origin>/a2a/v1", () => {
  assertEquals(card.supportedInterfaces, [
    { url: `${ORIGIN}/a2a/v1`, protocolBinding: "JSONRPC", protocolVersion: "1.0" },
  ]);
});

Deno.test("agentCard() claims no streaming, push or extended card, and a non-required extension", () => {
  assertStrictEquals(card.capabilities.streaming, false);
  assertStrictEquals(card.capabilities.pushNotifications, false);
  assert(card.capabilities.extendedAgentCard !== true);
  assertStrictEquals(card.capabilities.extensions.length, 1);
  const extension = card.capabilities.extensions[0];
  assertStrictEquals(extension.uri, `${ORIGIN}/.well-known/autonomous-agent`);
  assertStrictEquals(extension.required, false);
  assert(extension.description.includes("beacon/0.1"));
  // The human-readable A2A document, served by the Beacon itself.
  assertStrictEquals(card.documentationUrl, `${ORIGIN}/docs/a2a.md`);
  assertStrictEquals(card.securitySchemes, undefined);
  assertStrictEquals(card.securityRequirements, undefined);
  // Removed in 1.0 (Appendix A.2): a 0.3-style top-level url would be a second, stale claim.
  for (const field of ["url", "protocolVersion", "preferredTransport", "additionalInterfaces"]) {
    assertStrictEquals(card[field], undefined, field);
  }
});

Deno.test("agentCard() states literally that identity is not personhood", () => {
  assertStrictEquals(
    IDENTITY_STATEMENT,
    "Cryptographic identity does not establish autonomy, consciousness or personhood.",
  );
  assert(card.description.includes(IDENTITY_STATEMENT));
  assert(card.skills[0].description.includes(IDENTITY_STATEMENT));
  assert(card.description.includes("asynchronous human review"));
});

Deno.test("agentCard() fills every placeholder and returns a fresh object per call", () => {
  const text = JSON.stringify(card);
  assert(!text.includes("{{"), "no placeholder left");
  const other = agentCard({ origin: "http://127.0.0.1:8000" }) as typeof card;
  assertStrictEquals(other.supportedInterfaces[0].url, "http://127.0.0.1:8000/a2a/v1");
  other.capabilities.streaming = true;
  other.skills.push({});
  const again = agentCard({ origin: ORIGIN }) as typeof card;
  assertStrictEquals(again.capabilities.streaming, false);
  assertStrictEquals(again.skills.length, 1);
});

Deno.test("schemas/agent-card.json is a template: placeholders, no fixed origin", async () => {
  const template = await Deno.readTextFile(
    new URL("../../schemas/agent-card.json", import.meta.url),
  );
  assert(template.includes(`"${ORIGIN_PLACEHOLDER}/a2a/v1"`));
  // Every URL in the card is derived from the origin: the template names no host at all.
  assert(!/https?:\/\//.test(template));
  assert(!template.includes("beacon.example.com"));
});

Deno.test("originOf() accepts bare http(s) origins only", () => {
  assertStrictEquals(originOf("https://beacon.example.com"), ORIGIN);
  assertStrictEquals(originOf("https://beacon.example.com/"), ORIGIN);
  assertStrictEquals(originOf("http://127.0.0.1:8000"), "http://127.0.0.1:8000");
  assertStrictEquals(originOf("HTTPS://Beacon.Example.COM"), ORIGIN);
  for (
    const bad of [
      undefined,
      "",
      "beacon.example.com",
      "ftp://beacon.example.com",
      "https://beacon.example.com/a2a",
      "https://beacon.example.com/?x=1",
      "https://beacon.example.com/#x",
      "https://user:pw@beacon.example.com",
    ]
  ) {
    assertStrictEquals(originOf(bad), undefined, String(bad));
  }
});

const TEST_KEY = "nWGxne_9WmC6hEr0kuwsxERJxWl7MmkZcDusAxyuf2A"; // RFC 8032 §7.1 TEST 1 seed

/** Runs `deno task card`'s command line, with the task's permissions and extra variables. */
function printCard(args: string[], env: Record<string, string> = {}) {
  const script = new URL("../../src/cli/print_card.ts", import.meta.url).pathname;
  const permissions = [
    "--allow-env=BEACON_SIGNING_KEY,BEACON_SIGNING_KEY_FILE,BEACON_DATABASE_URL," +
    "BEACON_DATABASE_AUTH_TOKEN,LIBSQL_JS_DEV",
    "--allow-read",
    // SQLite opens its -shm/-wal files beside the database, even to read.
    "--allow-write",
    "--allow-ffi",
    "--allow-sys",
    "--allow-net",
  ];
  // The runtime's own environment (DENO_DIR, certificates, proxies) is inherited.
  return new Deno.Command(Deno.execPath(), {
    args: ["run", ...permissions, script, ...args],
    env: { BEACON_SIGNING_KEY: "", BEACON_SIGNING_KEY_FILE: "", BEACON_DATABASE_URL: "", ...env },
    stdout: "piped",
    stderr: "piped",
  }).output();
}

Deno.test("deno task card: signed with BEACON_SIGNING_KEY; says so plainly when unsigned", async () => {
  const decode = (bytes: Uint8Array) => new TextDecoder().decode(bytes);
  const signed = await printCard(["https://beacon.example.com/"], {
    BEACON_SIGNING_KEY: TEST_KEY,
  });
  assertStrictEquals(signed.code, 0, decode(signed.stderr));
  const key = await signingKeyFromSeed(parseSigningKey(TEST_KEY));
  assertStrictEquals(decode(signed.stdout), await cardText(ORIGIN, key));
  assert(decode(signed.stderr).includes(key.fingerprint));
  const printed = JSON.parse(decode(signed.stdout));
  assertEquals({ ...printed, signatures: undefined }, { ...card, signatures: undefined });
  assertStrictEquals(printed.signatures.length, 1);

  const directory = await Deno.makeTempDir({ prefix: "beacon-card-" });
  try {
    const unsigned = await printCard(["https://beacon.example.com"], {
      BEACON_DATABASE_URL: `file:${directory}/missing.db`,
    });
    assertStrictEquals(unsigned.code, 0);
    assertStrictEquals(decode(unsigned.stdout), await cardText(ORIGIN));
    assertStrictEquals(JSON.parse(decode(unsigned.stdout)).signatures, undefined);
    assert(decode(unsigned.stderr).startsWith("The card is NOT signed:"), decode(unsigned.stderr));
    // Nothing was created where the database was looked for.
    assertEquals([...Deno.readDirSync(directory)], []);
  } finally {
    await Deno.remove(directory, { recursive: true });
  }

  // What `deno task card -- <origin>` passes: the `--` as well.
  const viaTask = await printCard(["--", ORIGIN], { BEACON_SIGNING_KEY: TEST_KEY });
  assertStrictEquals(decode(viaTask.stdout), decode(signed.stdout));

  for (const args of [[], ["--"], ["https://beacon.example.com/path"], ["a", "b"]]) {
    const refused = await printCard(args);
    assertStrictEquals(refused.code, 2);
    assertStrictEquals(refused.stdout.byteLength, 0);
    assert(decode(refused.stderr).startsWith("Usage: deno task card"));
  }
});

Deno.test("the served card: the printed bytes, ETag/304, Last-Modified, max-age, CORS, HEAD", async () => {
  const a2a = await startA2AServer({ BEACON_PUBLIC_URL: "https://beacon.example.com" });
  try {
    const url = a2a.url + "/.well-known/agent-card.json";
    // The JS SDK sends A2A-Version on the card request too; the card must not refuse it.
    const response = await fetch(url, { headers: { "a2a-version": "1.0" } });
    assertStrictEquals(response.status, 200);
    // `deno task card` with the Beacon's database prints the served bytes (same signature): the
    // key is the one in the key file beside it (docs/keys.md).
    const printed = await printCard([ORIGIN], { BEACON_DATABASE_URL: a2a.server.databaseUrl });
    assertStrictEquals(printed.code, 0);
    assertStrictEquals(await response.text(), new TextDecoder().decode(printed.stdout));
    assertStrictEquals(response.headers.get("content-type"), "application/json");
    assertStrictEquals(response.headers.get("access-control-allow-origin"), "*");
    assert(/max-age=\d+/.test(response.headers.get("cache-control") ?? ""));
    const etag = response.headers.get("etag");
    assert(etag !== null && /^"[0-9a-f]+"$/.test(etag));
    const lastModified = response.headers.get("last-modified");
    assert(lastModified !== null && !Number.isNaN(Date.parse(lastModified)));

    const cached = await fetch(url, { headers: { "if-none-match": etag } });
    assertStrictEquals(cached.status, 304);
    assertStrictEquals(await cached.text(), "");
    assertStrictEquals(cached.headers.get("etag"), etag);

    const head = await fetch(url, { method: "HEAD" });
    assertStrictEquals(head.status, 200);
    assertStrictEquals(await head.text(), "");
    assertStrictEquals(head.headers.get("etag"), etag);

    const post = await fetch(url, { method: "POST", body: "{}" });
    assertStrictEquals(post.status, 405);
    await post.body?.cancel();
  } finally {
    await a2a.close();
  }
});
