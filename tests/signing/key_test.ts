/** The Beacon's signing key (src/signing/key.ts). */
import { SubmissionStore } from "../../src/store/store.ts";
import {
  encodeSeed,
  generateSeed,
  loadSigningKey,
  parseSigningKey,
  SIGNING_KEY_SECRET,
  signingKeyFromSeed,
} from "../../src/signing/key.ts";
import {
  assert,
  assertEquals,
  assertRejects,
  assertStrictEquals,
  assertThrows,
} from "../support/assert.ts";

const hexBytes = (text: string) => new Uint8Array(text.match(/../g)!.map((h) => parseInt(h, 16)));
const base64url = (bytes: Uint8Array) =>
  btoa(String.fromCharCode(...bytes)).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");

// RFC 8032 §7.1, TEST 1: a published key pair and the signature of the empty message.
const TEST1_SECRET = hexBytes("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60");
const TEST1_PUBLIC = hexBytes("d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a");
const TEST1_SIGNATURE = hexBytes(
  "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b",
);
const PKCS8_PREFIX = hexBytes("302e020100300506032b657004220420");

Deno.test("signingKeyFromSeed() derives the RFC 8032 TEST 1 public key and signature", async () => {
  const key = await signingKeyFromSeed(TEST1_SECRET);
  assertStrictEquals(key.publicKey, base64url(TEST1_PUBLIC));
  assertStrictEquals(key.privateKey.extractable, false);
  const fingerprint = new Uint8Array(await crypto.subtle.digest("SHA-256", TEST1_PUBLIC));
  assertStrictEquals(
    key.fingerprint,
    "sha256:" + Array.from(fingerprint, (b) => b.toString(16).padStart(2, "0")).join(""),
  );
  const signature = new Uint8Array(
    await crypto.subtle.sign("Ed25519", key.privateKey, new Uint8Array(0)),
  );
  assertEquals(signature, TEST1_SIGNATURE);
});

Deno.test("parseSigningKey() takes a 32-byte seed or its PKCS#8 form, in base64url", () => {
  assertEquals(parseSigningKey(base64url(TEST1_SECRET)), TEST1_SECRET);
  assertEquals(parseSigningKey(` ${base64url(TEST1_SECRET)}\n`), TEST1_SECRET);
  assertEquals(
    parseSigningKey(base64url(new Uint8Array([...PKCS8_PREFIX, ...TEST1_SECRET]))),
    TEST1_SECRET,
  );
  assertStrictEquals(encodeSeed(TEST1_SECRET), base64url(TEST1_SECRET));
  const bad = [
    "",
    base64url(TEST1_SECRET) + "=",
    base64url(TEST1_SECRET.slice(1)),
    base64url(new Uint8Array([...PKCS8_PREFIX.slice(0, 15), 0x21, ...TEST1_SECRET])),
    btoa(String.fromCharCode(...TEST1_SECRET)).replace(/=+$/, "") + "+/",
  ];
  for (const text of bad) {
    assertThrows(() => parseSigningKey(text), /Cannot use BEACON_SIGNING_KEY/);
  }
  try {
    parseSigningKey(base64url(TEST1_SECRET.slice(1)));
  } catch (error) {
    assert(!(error as Error).message.includes(base64url(TEST1_SECRET.slice(1))), "never echoed");
  }
});

Deno.test("loadSigningKey() generates a key once, stores it, and reads it back", async () => {
  const store = await SubmissionStore.open({ url: ":memory:" });
  try {
    const first = await loadSigningKey(store.database, Date.now);
    const second = await loadSigningKey(store.database, Date.now);
    assertStrictEquals(second.publicKey, first.publicKey);
    const rows = (await store.database.client.execute({
      sql: "SELECT value FROM secrets WHERE name = ?",
      args: [SIGNING_KEY_SECRET],
    })).rows;
    assertStrictEquals(rows.length, 1);
    const stored = await signingKeyFromSeed(new Uint8Array(rows[0].value as ArrayBuffer));
    assertStrictEquals(stored.publicKey, first.publicKey);
  } finally {
    await store.close();
  }
});

Deno.test("loadSigningKey() uses a configured key and leaves the database alone", async () => {
  const store = await SubmissionStore.open({ url: ":memory:" });
  try {
    const fromText = await loadSigningKey(store.database, Date.now, base64url(TEST1_SECRET));
    const fromBytes = await loadSigningKey(store.database, Date.now, TEST1_SECRET);
    assertStrictEquals(fromText.publicKey, base64url(TEST1_PUBLIC));
    assertStrictEquals(fromBytes.publicKey, base64url(TEST1_PUBLIC));
    const count = (await store.database.client.execute(
      "SELECT count(*) AS n FROM secrets WHERE name = 'signing-key'",
    ))
      .rows[0].n;
    assertStrictEquals(Number(count), 0);
  } finally {
    await store.close();
  }
});

Deno.test("loadSigningKey() refuses a stored secret that is not a seed", async () => {
  // A real database whose stored secret was written by something else: 16 bytes, not a seed.
  const store = await SubmissionStore.open({ url: ":memory:" });
  await store.database.secret("signing-key", () => new Uint8Array(16), Date.now);
  let message = "";
  try {
    await loadSigningKey(store.database, Date.now);
  } catch (error) {
    message = (error as Error).message;
  } finally {
    await store.close();
  }
  assertStrictEquals(message, "Cannot use the stored signing key: it is not a 32-byte seed");
  assertStrictEquals(generateSeed().length, 32);
});

Deno.test("parseSigningKey() says what is expected, and spots standard base64 with its fix", () => {
  const standard = btoa(String.fromCharCode(...TEST1_SECRET)); // "nWGx…/…=" with padding
  for (const text of [standard, standard.replace(/=+$/, ""), standard.replaceAll("_", "/")]) {
    if (!/[+/=]/.test(text)) continue;
    assertThrows(
      () => parseSigningKey(text),
      (error: Error) =>
        /looks like standard base64/.test(error.message) &&
        /replace \+ with -, \/ with _ and drop the trailing =/.test(error.message) &&
        /43 base64url characters/.test(error.message) && !error.message.includes(text),
    );
  }
  assertThrows(
    () => parseSigningKey(base64url(TEST1_SECRET.slice(1))),
    /decodes to 31 bytes; expected 43 base64url characters .* 32-byte Ed25519 seed/,
  );
  assertThrows(() => parseSigningKey("not a key!"), /not unpadded base64url .*expected 43/);
  assertThrows(() => parseSigningKey("+", "the key file x"), /^Error: Cannot use the key file x:/);
});

Deno.test("loadSigningKey() keeps an earlier version's stored key, and can refuse or make one", async () => {
  const store = await SubmissionStore.open({ url: ":memory:" });
  try {
    await assertRejects(
      () => loadSigningKey(store.database, Date.now, undefined, "refuse"),
      (error: Error) =>
        error.name === "SigningKeyMissing" && /review key generate/.test(error.message),
    );
    const made = await loadSigningKey(
      store.database,
      Date.now,
      undefined,
      () => Promise.resolve({ seed: TEST1_SECRET, created: true }),
    );
    assertStrictEquals(made.publicKey, base64url(TEST1_PUBLIC));
    assertEquals([made.generated, made.inDatabase], [true, false]);
    assertStrictEquals(await store.database.storedSecret(SIGNING_KEY_SECRET), undefined);
    // An earlier version's key in `secrets` wins over making one, and is reported as kept there.
    const kept = await loadSigningKey(store.database, Date.now);
    const again = await loadSigningKey(store.database, Date.now, undefined, "refuse");
    assertStrictEquals(again.publicKey, kept.publicKey);
    assertEquals([again.generated, again.inDatabase], [undefined, true]);
    const configured = await loadSigningKey(store.database, Date.now, TEST1_SECRET, "refuse");
    assertEquals([configured.publicKey, configured.inDatabase], [base64url(TEST1_PUBLIC), true]);
  } finally {
    await store.close();
  }
});
