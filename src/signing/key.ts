/**
 * The Beacon's own Ed25519 signing key, which signs receipts (`receipt.ts`) and checkpoints
 * (`checkpoint.ts`).
 *
 * ## Where the key comes from
 *
 * 1. **Configuration** (`BEACON_SIGNING_KEY`), when set: the key lives outside the database, so
 *    a copy of the database alone cannot forge receipts. Nothing is written to the database.
 * 2. Otherwise **the database**: a 32-byte seed generated from the CSPRNG on first use and
 *    stored once as the secret `signing-key` in the append-only `secrets` table. Concurrent
 *    first starts race harmlessly: the first insert wins and everyone reads the winner back.
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
 * Generate one with: `deno eval 'import {generateSeed, encodeSeed} from "./src/signing/key.ts";
 * console.log(encodeSeed(generateSeed()))'`.
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
 * @param text The configured value.
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
 * ```
 */
export function parseSigningKey(text: string): Uint8Array<ArrayBuffer> {
  const bytes = fromBase64url(text.trim());
  if (bytes === undefined) {
    throw new Error("Cannot use BEACON_SIGNING_KEY: it is not unpadded base64url");
  }
  if (bytes.length === SEED_BYTES) return bytes;
  if (
    bytes.length === PKCS8_PREFIX.length + SEED_BYTES &&
    PKCS8_PREFIX.every((byte, i) => bytes[i] === byte)
  ) {
    return bytes.slice(PKCS8_PREFIX.length);
  }
  throw new Error(
    "Cannot use BEACON_SIGNING_KEY: it must be a 32-byte Ed25519 seed or its 48-byte PKCS#8 form",
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
 * Loads the Beacon's signing key: the configured one when given, otherwise the seed stored as
 * secret `signing-key`, generated and stored on first use.
 *
 * @param store Where a generated seed is kept (`Database`).
 * @param now Clock for the secret's `created_at`.
 * @param configured `BEACON_SIGNING_KEY` text, or a 32-byte seed. When given, the database is
 *   neither read nor written.
 * @returns The signing key.
 * @throws {Error} When `configured` is malformed, or the stored secret is not a 32-byte seed.
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
): Promise<SigningKey> {
  if (configured !== undefined) {
    const seed = typeof configured === "string" ? parseSigningKey(configured) : configured;
    return await signingKeyFromSeed(seed);
  }
  const stored = await store.secret(SIGNING_KEY_SECRET, generateSeed, now);
  if (stored.value.length !== SEED_BYTES) {
    throw new Error("Cannot use the stored signing key: it is not a 32-byte seed");
  }
  return { ...await signingKeyFromSeed(stored.value), generated: stored.created };
}
