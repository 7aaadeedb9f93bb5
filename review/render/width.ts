/**
 * Terminal columns of safe text: 0 for a combining mark, 2 for an East Asian Wide or Fullwidth
 * character (Unicode Standard Annex #11, from the kept `get-east-asian-width` data, ambiguous
 * characters narrow as UAX #11 §5 advises without context), 1 otherwise. It decides where long
 * lines wrap and where list columns are cut.
 *
 * @module
 */
import { eastAsianWidth } from "get-east-asian-width";
import { isCombining } from "./classify.ts";

/**
 * Terminal columns taken by a safe code point.
 *
 * @param cp The code point.
 * @returns 0, 1 or 2.
 *
 * @example
 * ```ts
 * import { codePointWidth } from "./width.ts";
 * import { assertStrictEquals } from "../../tests/support/assert.ts";
 * assertStrictEquals(codePointWidth("界".codePointAt(0)!), 2);
 * ```
 */
export function codePointWidth(cp: number): number {
  if (cp < 0x300) return 1;
  if (isCombining(cp)) return 0;
  return eastAsianWidth(cp);
}

/**
 * Display width in terminal columns of text that is already safe (rendered).
 *
 * @param safe Safe text without line feeds.
 * @returns Columns.
 *
 * @example
 * ```ts
 * import { displayWidth } from "./width.ts";
 * import { assertStrictEquals } from "../../tests/support/assert.ts";
 * assertStrictEquals(displayWidth("ab界"), 4);
 * ```
 */
export function displayWidth(safe: string): number {
  let width = 0;
  for (const char of safe) width += codePointWidth(char.codePointAt(0)!);
  return width;
}
