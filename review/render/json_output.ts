/**
 * Writing JSON and output text that are safe to print: `safeJson` escapes in JSON what the
 * renderer would escape (the value parses back unchanged), `isSafeOutput` checks, and
 * `sanitizeOutput` is the review tool's last line of defence before anything reaches stdout or
 * stderr (io.ts).
 *
 * @module
 */
import { isCombining, MAX_STACKED_MARKS } from "./classify.ts";
import { Findings } from "./findings.ts";
import { safeText } from "./layout.ts";
import { safeRunAt } from "./tokens.ts";

/**
 * `JSON.stringify`, then every character {@linkcode safeText} would escape is written as a
 * JSON `\uXXXX` escape (astral ones as a UTF-16 surrogate pair, RFC 8259 §7). The result parses
 * to exactly the same value, but printing it to a terminal (`cat export.ndjson`) is harmless:
 * raw bidi controls, zero-width characters and the like never appear, only their escapes.
 * (C0 controls are already escaped by `JSON.stringify` itself.)
 *
 * @param value A JSON value.
 * @param space Indentation, as for `JSON.stringify`.
 * @returns JSON text.
 *
 * @example
 * ```ts
 * import { safeJson } from "./mod.ts";
 * safeJson({ subject: "a\u202Eb" }); // '{"subject":"a\\u202eb"}'
 * ```
 */
export function safeJson(value: unknown, space?: number): string {
  const json = JSON.stringify(value, null, space);
  let out = "";
  let start = 0;
  let marks = 0;
  for (let i = 0; i < json.length;) {
    const cp = json.codePointAt(i)!;
    const units = cp > 0xffff ? 2 : 1;
    let escape = false;
    // A keycap sequence starts with ASCII (`1`, `#`, `*`) followed by U+FE0F or U+20E3.
    const next = json.charCodeAt(i + 1);
    const keycap = cp < 0x80 && (next === 0xfe0f || next === 0x20e3);
    if (cp >= 0x80 || cp < 0x20 && cp !== 0x0a || keycap) {
      const safe = safeRunAt(json, i);
      escape = safe === 0;
      if (safe > units) {
        i += safe; // a whole emoji sequence, left as it is
        marks = 0;
        continue;
      }
      if (!escape && isCombining(cp)) escape = ++marks > MAX_STACKED_MARKS;
      else if (!isCombining(cp)) marks = 0;
    } else {
      marks = 0;
    }
    if (escape) {
      out += json.slice(start, i);
      for (let unit = 0; unit < units; unit++) {
        out += "\\u" + json.charCodeAt(i + unit).toString(16).padStart(4, "0");
      }
      start = i + units;
    }
    i += units;
  }
  return out + json.slice(start);
}

/**
 * Whether output text is safe to write to a terminal: no character {@linkcode safeText} would
 * escape, except line feeds. The writer of the review tool passes everything through
 * {@linkcode sanitizeOutput}, so this holds for all its output; tests check it independently.
 *
 * @param text Output text.
 * @returns True when nothing dangerous is left.
 *
 * @example
 * ```ts
 * import { isSafeOutput } from "./mod.ts";
 * isSafeOutput("fine\n"); // true
 * isSafeOutput("\u001B[2J"); // false
 * ```
 */
export function isSafeOutput(text: string): boolean {
  for (let i = 0; i < text.length;) {
    const safe = safeRunAt(text, i);
    if (safe === 0) return false;
    i += safe;
  }
  return true;
}

/**
 * The last line of defence of the review tool's writer: escapes anything dangerous that is
 * still in `text`, keeping line feeds. The identity on text that is already safe, so rendered
 * output is never escaped twice.
 *
 * @param text Text about to be written.
 * @returns Safe text.
 *
 * @example
 * ```ts
 * import { sanitizeOutput } from "./mod.ts";
 * sanitizeOutput("ok\n\u001B]0;title\u0007"); // "ok\n\\u001B]0;title\\u0007"
 * ```
 */
export function sanitizeOutput(text: string): string {
  if (isSafeOutput(text)) return text;
  return safeText(text, new Findings(), { newlines: "keep", defang: false });
}
