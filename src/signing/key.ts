/**
 * The Beacon's own Ed25519 signing key, which signs receipts (`receipt.ts`) and checkpoints
 * (`checkpoint.ts`).
 *
 * ## Where the key comes from
 *
 * 1. **Configuration** (`signingKey`: `BEACON_SIGNING_KEY`, a key file), when set: the key lives
 *    outside the database, so a copy of the database alone cannot forge receipts. Nothing is
 *    written to the database.
 * 2. Otherwise the seed an earlier version kept as the secret `signing-key` in the `secrets`
 *    table, so an existing store keeps its identity (the server says at each start how to move
 *    it out: docs/keys.md).
 * 3. Otherwise a new key, as {@linkcode NewSigningKey} says: the server entries keep it in a key
 *    file beside an embedded database and refuse a remote one without a key; an embedding that
 *    says nothing keeps it in the database (a 32-byte CSPRNG seed stored once; concurrent first
 *    starts race harmlessly: the first insert wins and everyone reads the winner back).
 *
 * ## `BEACON_SIGNING_KEY` format
 *
 * Unpadded base64url (RFC 4648 §5) of either
 *
 * - the 32-byte Ed25519 private key of RFC 8032 §5.1.5 (the "seed"), 43 characters — the
 *   preferred form, and the one stored in the database; or
 * - its PKCS#8 `OneAsymmetricKey` DER encoding (RFC 5958, with the Ed25519 encoding of
 *   RFC 8410 §7), 48 bytes, 64 characters: exactly the 16 fixed bytes
 *   `302e020100300506032b657004220420` followed by the seed (what
 *   `crypto.subtle.exportKey("pkcs8", key)` and `openssl genpkey -algorithm ed25519` produce
 *   once converted from PEM/base64 to base64url). Other PKCS#8 variants (with attributes or
 *   a public key) are refused rather than half-parsed.
 *
 * Generate one with `deno task review key generate` (docs/keys.md).
 *
 * @module
 */
import { base64url, fromBase64url } from "../bytes.ts";
import { keyFingerprint, PUBLIC_KEY_BYTES } from "./ed25519.ts";

/** The name of the stored secret holding the generated seed. */
export const SIGNING_KEY_SECRET = "signing-key";

/** Bytes in an Ed25519 private key seed (RFC 8032 §5.1.5). */
export const SEED_BYTES = 32;

/**
 * The fixed DER prefix of an Ed25519 PKCS#8 private key without attributes or public key
 * (RFC 8410 §7): SEQUENCE { INTEGER 0, SEQUENCE { OID 1.3.101.112 }, OCTET STRING { OCTET
 * STRING (32 bytes) } }.
 */
const PKCS8_PREFIX = new Uint8Array([
  0x30,
  0x2e,
  0x02,
  0x01,
  0x00,
  0x30,
  0x05,
  0x06,
  0x03,
  0x2b,
  0x65,
  0x70,
  0x04,
  0x22,
  0x04,
  0x20,
]);

/** The Beacon's signing key, ready to sign. */
export interface SigningKey {
  /** The Ed25519 private key (not extractable). */
  readonly privateKey: CryptoKey;
  /** The raw 32-byte public key, unpadded base64url (43 characters). */
  readonly publicKey: string;
  /** `sha256:<hex>` of the raw public key: the same fingerprint form as sender identities. */
  readonly fingerprint: string;
  /** True when {@linkcode loadSigningKey} generated and stored it just now (a new identity). */
  readonly generated?: boolean;
  /**
   * True when the database keeps a private signing key in its `secrets` table (an earlier
   * version's default): whoever can read the database can then sign receipts and tree heads.
   */
  readonly inDatabase?: boolean;
}

/** What {@linkcode loadSigningKey} needs from the database: `Database` (src/store/database.ts) fits. */
export interface SecretStore {
  /**
   * The named secret, created with `create` on first use (insert once, then read back);
   * `created` says whether this call stored it.
   */
  secret(
    name: string,
    create: () => Uint8Array<ArrayBuffer>,
    now: () => number,
  ): Promise<{ value: Uint8Array; created: boolean }>;
  /** The named secret, or undefined when the database keeps none by that name. */
  storedSecret(name: string): Promise<Uint8Array | undefined>;
}

/**
 * A fresh 32-byte seed from the CSPRNG (RFC 8032 §5.1.5: the private key is 32 random bytes).
 *
 * @returns The seed.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { generateSeed } from "./key.ts";
 *
 * assert.equal(generateSeed().length, 32);
 * ```
 */
export function generateSeed(): Uint8Array<ArrayBuffer> {
  return crypto.getRandomValues(new Uint8Array(SEED_BYTES));
}

/**
 * The configuration form of a seed: unpadded base64url, 43 characters.
 *
 * @param seed A 32-byte seed.
 * @returns The text to put in `BEACON_SIGNING_KEY`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { encodeSeed } from "./key.ts";
 *
 * assert.equal(encodeSeed(new Uint8Array(32)).length, 43);
 * ```
 */
export function encodeSeed(seed: Uint8Array): string {
  if (seed.length !== SEED_BYTES) throw new TypeError("Cannot encode seed: it must be 32 bytes");
  return base64url(seed);
}

/**
 * Parses `BEACON_SIGNING_KEY` (see the module documentation) into the 32-byte seed.
 *
 * Every refusal says what is expected: 43 base64url characters, a 32-byte Ed25519 seed. Standard
 * base64 (RFC 4648 §4: `+`, `/`, `=` padding), which `openssl rand -base64 32` and most tools
 * print, is the common mistake, so it is recognised and the fix is named rather than guessed at:
 * decoding it anyway would accept a value the operator may also have pasted elsewhere under the
 * other alphabet.
 *
 * @param text The configured value.
 * @param name What the value is called in the messages (`BEACON_SIGNING_KEY`, a key file).
 * @returns The seed.
 * @throws {Error} "Cannot use BEACON_SIGNING_KEY: …" for anything else; the message never
 *   repeats the value, which is a secret.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseSigningKey } from "./key.ts";
 *
 * assert.equal(parseSigningKey("nWGxne_9WmC6hEr0kuwsxERJxWl7MmkZcDusAxyuf2A").length, 32);
 * assert.throws(
 *   () => parseSigningKey("nWGxne/9WmC6hEr0kuwsxERJxWl7MmkZcDusAxyuf2A="),
 *   /standard base64/,
 * );
 * ```
 */
export function parseSigningKey(
  text: string,
  name = "BEACON_SIGNING_KEY",
): Uint8Array<ArrayBuffer> {
  const trimmed = text.trim();
  const expected = "expected 43 base64url characters (A-Z, a-z, 0-9, - and _, no padding): " +
    "the unpadded base64url encoding (RFC 4648 §5) of a 32-byte Ed25519 seed";
  if (/^[A-Za-z0-9+/_-]+={0,2}$/.test(trimmed) && /[+/=]/.test(trimmed)) {
    throw new Error(
      `Cannot use ${name}: it looks like standard base64 (it has +, / or = padding); ${expected}. ` +
        "To convert it, replace + with -, / with _ and drop the trailing =",
    );
  }
  const bytes = fromBase64url(trimmed);
  if (bytes === undefined) {
    throw new Error(
      `Cannot use ${name}: it is not unpadded base64url (it has ${trimmed.length} characters); ` +
        expected,
    );
  }
  if (bytes.length === SEED_BYTES) return bytes;
  if (
    bytes.length === PKCS8_PREFIX.length + SEED_BYTES &&
    PKCS8_PREFIX.every((byte, i) => bytes[i] === byte)
  ) {
    return bytes.slice(PKCS8_PREFIX.length);
  }
  throw new Error(
    `Cannot use ${name}: it decodes to ${bytes.length} bytes; ${expected} (or 64 characters, ` +
      "its 48-byte PKCS#8 form)",
  );
}

/**
 * Turns a 32-byte seed into a usable signing key. WebCrypto cannot import a bare seed, so it is
 * wrapped in the fixed PKCS#8 form (RFC 8410 §7), imported once as extractable only to read the
 * public key out of its JWK (`x`, RFC 8037 §2), and imported again non-extractable for use.
 *
 * @param seed The 32-byte private key.
 * @returns The key, its public key and fingerprint.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { signingKeyFromSeed } from "./key.ts";
 *
 * const key = await signingKeyFromSeed(new Uint8Array(32));
 * assert.equal(key.publicKey.length, 43);
 * ```
 */
export async function signingKeyFromSeed(seed: Uint8Array): Promise<SigningKey> {
  if (seed.length !== SEED_BYTES) {
    throw new TypeError("Cannot use signing key: seed must be 32 bytes");
  }
  const pkcs8 = new Uint8Array(PKCS8_PREFIX.length + SEED_BYTES);
  pkcs8.set(PKCS8_PREFIX);
  pkcs8.set(seed, PKCS8_PREFIX.length);
  const algorithm = { name: "Ed25519" };
  const exportable = await crypto.subtle.importKey("pkcs8", pkcs8, algorithm, true, ["sign"]);
  const jwk = await crypto.subtle.exportKey("jwk", exportable);
  const rawPublic = jwk.x === undefined ? undefined : fromBase64url(jwk.x);
  if (rawPublic?.length !== PUBLIC_KEY_BYTES) {
    throw new Error("Cannot use signing key: the runtime did not derive a public key");
  }
  const privateKey = await crypto.subtle.importKey("pkcs8", pkcs8, algorithm, false, ["sign"]);
  pkcs8.fill(0);
  return {
    privateKey,
    publicKey: base64url(rawPublic),
    fingerprint: await keyFingerprint(rawPublic),
  };
}

/**
 * What the Beacon does when no key is configured and the database holds none from an earlier
 * version: `"database"` generates one and keeps it in the `secrets` table (an in-memory database's
 * ephemeral key); `"refuse"` throws {@linkcode SigningKeyMissing} (a remote database: the key must
 * come from the environment, docs/keys.md); a function makes one and keeps it outside the database,
 * durably, before it is used (the server entries write a key file beside an embedded database,
 * src/start/key_file.ts), saying whether it created it or found one another process made.
 */
export type NewSigningKey =
  | "database"
  | "refuse"
  | (() => Promise<{ seed: Uint8Array; created: boolean }>);

/**
 * The refusal of a start that has no signing key: none configured, none in the database, and
 * `newSigningKey: "refuse"`. Its message is the one line the server prints.
 */
export class SigningKeyMissing extends Error {
  /** Marks a refusal the server reports in one line and exits 2 for (src/start/serve.ts). */
  readonly refusesStart = true;
  constructor() {
    super(
      "Cannot start: no signing key for a remote database: set BEACON_SIGNING_KEY (or " +
        "BEACON_SIGNING_KEY_FILE) to a key made by `deno task review key generate` " +
        "(`npm run review -- key generate`, `bun run review key generate`; docs/keys.md)",
    );
    this.name = "SigningKeyMissing";
  }
}

/**
 * Loads the Beacon's signing key: the configured one when given; otherwise the seed kept as secret
 * `signing-key` by an earlier version; otherwise a new one, made as `whenNone` says.
 *
 * @param store The database, read for a kept seed (and written only with `whenNone: "database"`).
 * @param now Clock for the secret's `created_at`.
 * @param configured `BEACON_SIGNING_KEY` text, or a 32-byte seed. When given, nothing is written
 *   to the database; it is only asked whether it still keeps a private key (`inDatabase`).
 * @param whenNone What to do when there is no key at all (default `"database"`).
 * @param beforeNewKey Runs before a new key is made, and may refuse it by throwing (the Beacon
 *   refuses one for a store that another key signed heads of: src/signing/key_change.ts).
 * @returns The signing key.
 * @throws {Error} When `configured` is malformed, or the stored secret is not a 32-byte seed.
 * @throws {SigningKeyMissing} With `whenNone: "refuse"` and no key anywhere.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { loadSigningKey } from "./key.ts";
 * import { Database } from "../store/database.ts";
 *
 * const database = await Database.open({ url: ":memory:" });
 * const key = await loadSigningKey(database, Date.now);
 * assert.equal((await loadSigningKey(database, Date.now)).publicKey, key.publicKey);
 * await database.close();
 * ```
 */
export async function loadSigningKey(
  store: SecretStore,
  now: () => number,
  configured?: string | Uint8Array,
  whenNone: NewSigningKey = "database",
  beforeNewKey: () => Promise<void> = () => Promise.resolve(),
): Promise<SigningKey> {
  const stored = await store.storedSecret(SIGNING_KEY_SECRET);
  if (configured !== undefined) {
    const seed = typeof configured === "string" ? parseSigningKey(configured) : configured;
    return { ...await signingKeyFromSeed(seed), inDatabase: stored !== undefined };
  }
  if (stored !== undefined) return { ...await storedKey(stored), inDatabase: true };
  if (whenNone === "refuse") throw new SigningKeyMissing();
  await beforeNewKey();
  if (whenNone === "database") {
    const kept = await store.secret(SIGNING_KEY_SECRET, generateSeed, now);
    return { ...await storedKey(kept.value), generated: kept.created, inDatabase: true };
  }
  const made = await whenNone();
  return { ...await signingKeyFromSeed(made.seed), generated: made.created, inDatabase: false };
}

/** The key of a seed read from the `secrets` table, which must be exactly a seed. */
async function storedKey(value: Uint8Array): Promise<SigningKey> {
  if (value.length !== SEED_BYTES) {
    throw new Error("Cannot use the stored signing key: it is not a 32-byte seed");
  }
  return await signingKeyFromSeed(value);
}
