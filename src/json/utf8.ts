/**
 * Strict UTF-8 (RFC 3629) for every byte body the Beacon reads: ill-formed or overlong sequences
 * are refused, never replaced with U+FFFD as `Request.text()` and `TextDecoder` do by default.
 *
 * @module
 */

const utf8Encoder = new TextEncoder();
const lenientDecoder = new TextDecoder("utf-8", { ignoreBOM: true });
const fatalDecoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
const REPLACEMENT_CHARACTER = "\uFFFD";

/**
 * Decodes UTF-8 with a fatal decoder; returns undefined for invalid/overlong UTF-8. Does NOT
 * strip a BOM (ignoreBOM: true), so callers can see it.
 */
export function decodeUtf8Strict(bytes: Uint8Array): string | undefined {
  // Fast path, same answer: the WHATWG Encoding Standard (§4.1 "decode", error mode
  // "replacement") turns every malformed sequence into U+FFFD, so output without U+FFFD proves
  // the bytes were valid and equals what the fatal decoder returns. Runtimes ship a much faster
  // replacement-mode decoder (bench/README.md, "Figures behind constants"). Only text holding
  // U+FFFD, sent or substituted, pays for the fatal decode that tells the two apart.
  const text = lenientDecoder.decode(bytes);
  if (!text.includes(REPLACEMENT_CHARACTER)) return text;
  try {
    return fatalDecoder.decode(bytes);
  } catch {
    return undefined;
  }
}

const REPLACEMENT_BYTES = [0xef, 0xbf, 0xbd];

/**
 * The offset of the first byte of the first ill-formed UTF-8 sequence. The WHATWG decoder
 * replaces each ill-formed sequence with U+FFFD and decodes everything before it exactly, so
 * the first U+FFFD that the bytes do not spell as EF BF BD marks the spot.
 */
export function firstInvalidUtf8Byte(bytes: Uint8Array): number {
  const text = lenientDecoder.decode(bytes);
  let from = 0;
  for (;;) {
    const index = text.indexOf(REPLACEMENT_CHARACTER, from);
    if (index < 0) return bytes.length; // not reached for bytes the fatal decoder refused
    const offset = utf8Encoder.encode(text.slice(0, index)).length;
    if (!REPLACEMENT_BYTES.every((byte, i) => bytes[offset + i] === byte)) return offset;
    from = index + 1;
  }
}
