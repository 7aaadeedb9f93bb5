/**
 * A scanner for terminal escape and control sequences (ECMA-48, 5th edition, 1991): where one
 * that starts at a given position ends, so the renderer can show the whole sequence escaped
 * and count it once.
 *
 * - ESC `[` or C1 CSI (U+009B): a control sequence, §5.4: parameter bytes 0x30–0x3F,
 *   intermediate bytes 0x20–0x2F, one final byte 0x40–0x7E.
 * - ESC `]` `P` `X` `^` `_` or C1 OSC, DCS, SOS, PM, APC: a control string, §5.6, ended by BEL
 *   (as xterm accepts for OSC), ST (U+009C) or ESC `\`; scanned at most 4096 units far.
 * - Any other ESC: intermediates, then one final byte (ECMA-35 §13.2, ECMA-48 §5.3), or a lone
 *   ESC.
 *
 * @module
 */

const ST = 0x9c;
const ESC = 0x1b;
const BEL = 0x07;
/** Control strings (ECMA-48 §5.6) after ESC: OSC `]`, DCS `P`, SOS `X`, PM `^`, APC `_`. */
const STRING_INTRODUCERS = new Set([0x5d, 0x50, 0x58, 0x5e, 0x5f]);
/** Their C1 forms, and CSI U+009B. */
const C1_STRING_INTRODUCERS = new Set([0x9d, 0x90, 0x98, 0x9e, 0x9f]);
const C1_CSI = 0x9b;
/** Longest control string scanned as one sequence; beyond that, the rest is plain text. */
const MAX_CONTROL_STRING = 4096;

/**
 * The end (exclusive, in UTF-16 units) of the escape sequence starting at `start`.
 *
 * @param text The text.
 * @param start Where a sequence may start.
 * @returns The end, or undefined when no escape sequence starts there.
 *
 * @example
 * ```ts
 * import { sequenceEnd } from "./ecma48.ts";
 * import { assertStrictEquals } from "../../tests/support/assert.ts";
 * assertStrictEquals(sequenceEnd("\u001B[31mred", 0), 5);
 * ```
 */
export function sequenceEnd(text: string, start: number): number | undefined {
  const first = text.charCodeAt(start);
  let i: number;
  let kind: "csi" | "string" | "short";
  if (first === ESC) {
    const next = text.charCodeAt(start + 1);
    if (next === 0x5b) {
      kind = "csi";
      i = start + 2;
    } else if (STRING_INTRODUCERS.has(next)) {
      kind = "string";
      i = start + 2;
    } else {
      kind = "short";
      i = start + 1;
    }
  } else if (first === C1_CSI) {
    kind = "csi";
    i = start + 1;
  } else if (C1_STRING_INTRODUCERS.has(first)) {
    kind = "string";
    i = start + 1;
  } else {
    return undefined;
  }
  const at = (index: number) => index < text.length ? text.charCodeAt(index) : -1;
  if (kind === "csi") {
    // ECMA-48 §5.4: parameter bytes 0x30–0x3F, intermediate bytes 0x20–0x2F, one final byte.
    while (at(i) >= 0x30 && at(i) <= 0x3f) i++;
    while (at(i) >= 0x20 && at(i) <= 0x2f) i++;
    if (at(i) >= 0x40 && at(i) <= 0x7e) i++;
    return i;
  }
  if (kind === "string") {
    const limit = Math.min(text.length, start + MAX_CONTROL_STRING);
    while (i < limit) {
      const c = text.charCodeAt(i);
      if (c === BEL || c === ST) return i + 1;
      if (c === ESC) return at(i + 1) === 0x5c ? i + 2 : i; // ST as ESC \
      i++;
    }
    return i;
  }
  // ESC with intermediates then a final byte (ECMA-35 / ECMA-48 §5.3), or a lone ESC.
  while (at(i) >= 0x20 && at(i) <= 0x2f) i++;
  if (at(i) >= 0x30 && at(i) <= 0x7e) i++;
  return i;
}
