/**
 * The byte encodings of the whole project, in one place: base64url without padding (RFC 4648 §5)
 * for ids, keys and signatures, lowercase hex for digests and fingerprints, and the one SHA-256.
 *
 * SHA-256 is synchronous: the digests are on the submission path, where WebCrypto's asynchronous
 * `digest` costs an operation round trip per call. It is `node:crypto`'s native hash where the
 * runtime has one (Deno, Node, Bun, Workers with `nodejs_compat`), reached through
 * `process.getBuiltinModule` so that a Workers bundle without `nodejs_compat` still links, and
 * `@noble/hashes` (audited, dependency-free) for short inputs and wherever `node:crypto` is
 * missing. Short inputs stay in JavaScript because the native call's fixed cost is larger than
 * hashing a block or two: see {@linkcode NATIVE_SHA256_MIN_BYTES}.
 *
 * The base64url codec is the Beacon's own because its decoder must be stricter than the common
 * ones: every key, signature and id has exactly one accepted spelling (no padding, no non-zero
 * spare bits, RFC 4648 §3.5), which `atob` and most libraries do not enforce.
 *
 * @module
 */
import { sha256 as nobleSha256 } from "@noble/hashes/sha2.js";

/** The part of `node:crypto` used here. */
interface NodeCrypto {
  createHash(algorithm: "sha256"): NodeHash;
}

/** A `node:crypto` `Hash`: `update` takes bytes, or a string it hashes as UTF-8. */
interface NodeHash {
  update(data: Uint8Array | string): NodeHash;
  digest(): Uint8Array;
  digest(encoding: "hex"): string;
}

/**
 * `node:crypto` when the runtime has it, without a static import: workerd without
 * `nodejs_compat` has no `process` and no such module to link.
 */
const nodeCrypto: NodeCrypto | undefined = (() => {
  const process = (globalThis as {
    process?: { getBuiltinModule?: (name: string) => unknown };
  }).process;
  try {
    const module = process?.getBuiltinModule?.("node:crypto") as Partial<NodeCrypto> | undefined;
    return typeof module?.createHash === "function" ? module as NodeCrypto : undefined;
  } catch {
    return undefined;
  }
})();

/**
 * Shortest input hashed natively. Below it the JavaScript hash is cheaper than the call into
 * `node:crypto` (two runtime calls, a hasher object, a result buffer); from 512 bytes the native
 * hash is as cheap or cheaper (`bench/sha256_bench.ts`; bench/README.md, "Figures behind
 * constants").
 */
export const NATIVE_SHA256_MIN_BYTES = 512;

/**
 * The JavaScript hash without a hasher per call: every short hash starts `scratch` over from a
 * copy of the initial state (`_cloneInto` copies the eight state words and resets the length and
 * flags) and writes the digest straight into its result. A fresh noble hasher per call allocates
 * its block buffer and a `DataView`, and `digest()` copies out and zeroes it: about a third of
 * the time of hashing a Merkle node (`bench/sha256_bench.ts`). Calls are synchronous, so the one
 * scratch state is never shared between two hashes.
 */
const INITIAL_STATE = nobleSha256.create();
const scratch = nobleSha256.create();

/** SHA-256 of the bytes (FIPS 180-4). */
export function sha256(bytes: Uint8Array): Uint8Array<ArrayBuffer> {
  if (nodeCrypto === undefined || bytes.byteLength < NATIVE_SHA256_MIN_BYTES) {
    const digest = new Uint8Array(32);
    INITIAL_STATE._cloneInto(scratch).update(bytes).digestInto(digest);
    return digest;
  }
  // A copy: the result is a Buffer (another prototype, maybe a view of a shared pool), and callers
  // get a plain Uint8Array of exactly 32 bytes, as from the JavaScript hash.
  return new Uint8Array(nodeCrypto.createHash("sha256").update(bytes).digest());
}

const encoder = new TextEncoder();

/** Whether `bytes` holds `part` at `offset` (a hash among hashes kept end to end, say). */
export function sameBytes(bytes: Uint8Array, offset: number, part: Uint8Array): boolean {
  if (offset < 0 || offset + part.length > bytes.length) return false;
  for (let i = 0; i < part.length; i++) if (bytes[offset + i] !== part[i]) return false;
  return true;
}

/**
 * Lowercase hex SHA-256 of bytes, or of a string's UTF-8 encoding (WHATWG Encoding §4.2: an
 * unpaired surrogate becomes U+FFFD, as `TextEncoder` writes it). Natively, whatever the length:
 * a string needs no encoding step and the hex comes from the hash itself, so this is cheaper
 * than `hex(sha256(encode(text)))` at every size the Beacon hashes (`bench/sha256_bench.ts`).
 */
export function sha256Hex(data: Uint8Array | string): string {
  if (nodeCrypto !== undefined) return nodeCrypto.createHash("sha256").update(data).digest("hex");
  return hex(nobleSha256(typeof data === "string" ? encoder.encode(data) : data));
}

const BASE64URL = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
const BASE64URL_VALUES = new Int8Array(128).fill(-1);
for (let i = 0; i < BASE64URL.length; i++) BASE64URL_VALUES[BASE64URL.charCodeAt(i)] = i;
const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, "0"));

/** Encodes bytes as base64url without padding. */
export function base64url(bytes: Uint8Array): string {
  let out = "";
  let i = 0;
  for (; i + 2 < bytes.length; i += 3) {
    const n = (bytes[i] << 16) | (bytes[i + 1] << 8) | bytes[i + 2];
    out += BASE64URL[n >> 18] + BASE64URL[(n >> 12) & 63] + BASE64URL[(n >> 6) & 63] +
      BASE64URL[n & 63];
  }
  if (i < bytes.length) {
    const n = (bytes[i] << 16) | ((bytes[i + 1] ?? 0) << 8);
    out += BASE64URL[n >> 18] + BASE64URL[(n >> 12) & 63];
    if (i + 1 < bytes.length) out += BASE64URL[(n >> 6) & 63];
  }
  return out;
}

/**
 * Decodes strict, unpadded base64url; undefined for padding, characters outside the alphabet,
 * a length no byte string has, or non-zero spare bits (a non-canonical spelling, RFC 4648 §3.5),
 * so every byte string has exactly one accepted text.
 */
export function fromBase64url(text: string): Uint8Array<ArrayBuffer> | undefined {
  // A lone trailing character would carry only 6 bits, less than a byte.
  if (text.length % 4 === 1) return undefined;
  const bytes = new Uint8Array(Math.floor(text.length * 3 / 4));
  let buffer = 0;
  let bits = 0;
  let out = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    const value = code < 128 ? BASE64URL_VALUES[code] : -1;
    if (value < 0) return undefined;
    buffer = ((buffer << 6) | value) & 0xfff;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      bytes[out++] = (buffer >> bits) & 0xff;
    }
  }
  if ((buffer & ((1 << bits) - 1)) !== 0) return undefined;
  return bytes;
}

/** Lowercase hex of bytes. */
export function hex(bytes: Uint8Array): string {
  let out = "";
  for (let i = 0; i < bytes.length; i++) out += HEX[bytes[i]];
  return out;
}

/** Decodes hex (either case, an even number of digits); undefined for anything else. */
export function fromHex(text: string): Uint8Array<ArrayBuffer> | undefined {
  if (!/^(?:[0-9a-fA-F]{2})*$/.test(text)) return undefined;
  const bytes = new Uint8Array(text.length / 2);
  for (let i = 0; i < bytes.length; i++) bytes[i] = parseInt(text.slice(2 * i, 2 * i + 2), 16);
  return bytes;
}

/** Standard padded base64 (RFC 4648 §4), as JSON exports and spreadsheets expect it. */
export function base64(bytes: Uint8Array): string {
  let binary = "";
  for (let i = 0; i < bytes.length; i += 0x8000) {
    binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  }
  return btoa(binary);
}

/**
 * Decodes standard padded base64 (RFC 4648 §4), as C2SP notes spell keys, signatures and roots;
 * undefined for anything outside the alphabet (whitespace included) or without its padding, as Go's
 * `base64.StdEncoding` (which checks these notes elsewhere) refuses them.
 */
export function fromBase64(text: string): Uint8Array<ArrayBuffer> | undefined {
  if (text.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(text)) return undefined;
  try {
    return Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
  } catch {
    return undefined;
  }
}

/** `sha256:<hex>` of the bytes: the digest format of receipts. */
export function sha256Digest(bytes: Uint8Array): string {
  return "sha256:" + sha256Hex(bytes);
}
