/**
 * Byte encodings used in receipts and storage: base64url without padding (RFC 4648 §5) for ids,
 * lowercase hex for digests.
 *
 * @module
 */
import { sha256 } from "./sha256.ts";

const BASE64URL = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
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

/** Decodes strict base64url without padding; undefined for any other input. */
export function fromBase64url(text: string): Uint8Array<ArrayBuffer> | undefined {
  if (text.length % 4 === 1) return undefined;
  const out = new Uint8Array(Math.floor((text.length * 3) / 4));
  let bits = 0;
  let value = 0;
  let index = 0;
  for (let i = 0; i < text.length; i++) {
    const digit = BASE64URL.indexOf(text[i]);
    if (digit < 0) return undefined;
    value = (value << 6) | digit;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out[index++] = (value >> bits) & 255;
    }
  }
  // Non-zero leftover bits mean a non-canonical encoding (RFC 4648 §3.5).
  if ((value & ((1 << bits) - 1)) !== 0) return undefined;
  return out;
}

/** Lowercase hex of bytes. */
export function hex(bytes: Uint8Array): string {
  let out = "";
  for (let i = 0; i < bytes.length; i++) out += HEX[bytes[i]];
  return out;
}

/** `sha256:<hex>` of the bytes: the digest format of receipts. */
export function sha256Digest(bytes: Uint8Array): string {
  return "sha256:" + hex(sha256(bytes));
}
