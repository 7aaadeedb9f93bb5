/**
 * Classification of single code points, and of the emoji sequences that use otherwise
 * invisible characters legitimately. The one classification of the review side: the terminal
 * renderer, the JSON writer and the web console (which gets already classified segments from
 * its server) all use it.
 *
 * A zero-width joiner, a variation selector or a tag character is invisible on its own, and is
 * flagged; inside a standard emoji sequence (a ZWJ family, a flag, a skin tone, a keycap, an
 * emoji presentation selector, a subdivision flag) it is what makes the picture, and the whole
 * sequence is shown as it is. "Standard" is the Unicode property `RGI_Emoji` of UTS #51 §1.4.7
 * ("recommended for general interchange"), as the engine's `v`-flag regular expressions know
 * it (ECMAScript 2024 `\p{RGI_Emoji}`), so the list follows the Unicode version of the runtime.
 *
 * @module
 */
import type { FindingKind } from "./findings.ts";

/** A kind of dangerous character, found one code point at a time. */
export type Danger = Exclude<FindingKind, "escape" | "combining" | "link">;

const FORMAT = /^\p{Cf}$/u;
const UNASSIGNED_OR_PRIVATE = /^[\p{Cn}\p{Co}]$/u;
const COMBINING = /^[\p{Mn}\p{Me}]$/u;

/** Combining marks shown in a row before the rest are escaped (Zalgo text). */
export const MAX_STACKED_MARKS = 4;

function inRanges(cp: number, ranges: readonly (readonly [number, number])[]): boolean {
  for (const [low, high] of ranges) if (cp >= low && cp <= high) return true;
  return false;
}

const BIDI: readonly (readonly [number, number])[] = [
  [0x061c, 0x061c],
  [0x200e, 0x200f],
  [0x202a, 0x202e],
  [0x2066, 0x2069],
];

// Characters that draw nothing (or only blank space where none is expected) but are not all
// format characters (Cf): some are letters (Hangul fillers) or marks (variation selectors).
const INVISIBLE: readonly (readonly [number, number])[] = [
  [0x00ad, 0x00ad],
  [0x034f, 0x034f],
  [0x115f, 0x1160],
  [0x17b4, 0x17b5],
  [0x180b, 0x180f],
  [0x200b, 0x200d],
  [0x2060, 0x2064],
  [0x2800, 0x2800],
  [0x3164, 0x3164],
  [0xfe00, 0xfe0f],
  [0xfeff, 0xfeff],
  [0xffa0, 0xffa0],
  [0x1d173, 0x1d17a],
  [0xe0000, 0xe007f],
  [0xe0100, 0xe01ef],
];

/**
 * What kind of dangerous character `cp` is (line feed excluded), or undefined when it is safe.
 *
 * @param cp The code point.
 * @returns The kind, or undefined.
 *
 * @example
 * ```ts
 * import { classify } from "./classify.ts";
 * import { assertStrictEquals } from "../../tests/support/assert.ts";
 * assertStrictEquals(classify(0x202e), "bidi");
 * assertStrictEquals(classify(0x41), undefined);
 * ```
 */
export function classify(cp: number): Danger | undefined {
  if (cp >= 0x20 && cp < 0x7f) return undefined;
  if (cp === 0x09) return "tab";
  if (cp < 0x20 || (cp >= 0x7f && cp <= 0x9f) || cp === 0x2028 || cp === 0x2029) {
    return "control";
  }
  if (cp < 0xa0) return undefined;
  if (inRanges(cp, BIDI)) return "bidi";
  if (cp >= 0xd800 && cp <= 0xdfff) return "surrogate";
  if (inRanges(cp, INVISIBLE)) return "invisible";
  const char = String.fromCodePoint(cp);
  if (FORMAT.test(char)) return "invisible";
  if (UNASSIGNED_OR_PRIVATE.test(char)) return "unassigned";
  return undefined;
}

/**
 * Whether `cp` is a combining mark (General Category Mn or Me).
 *
 * @param cp The code point.
 * @returns True for a mark.
 */
export function isCombining(cp: number): boolean {
  return cp >= 0x300 && COMBINING.test(String.fromCodePoint(cp));
}

const EMOJI_SEQUENCE = /\p{RGI_Emoji}/vy;
/** Code points that are only ever fine inside an emoji sequence. */
const SEQUENCE_PARTS =
  /[\u200D\uFE0F\u20E3\u{1F3FB}-\u{1F3FF}\u{1F1E6}-\u{1F1FF}\u{E0020}-\u{E007F}]/u;

/**
 * The length in UTF-16 units of the standard emoji sequence starting at `index` that holds a
 * joiner, a selector, a modifier, a keycap mark, regional indicators or tags, or 0 when there
 * is none (a single plain emoji needs no special treatment: it is classified as safe anyway).
 *
 * @param text The text.
 * @param index Where to look.
 * @returns The sequence's length, or 0.
 *
 * @example
 * ```ts
 * import { emojiSequenceAt } from "./classify.ts";
 * import { assertStrictEquals } from "../../tests/support/assert.ts";
 * assertStrictEquals(emojiSequenceAt("👩‍💻!", 0), 5); // woman, ZWJ, laptop
 * assertStrictEquals(emojiSequenceAt("a\u200Db", 0), 0);
 * ```
 */
export function emojiSequenceAt(text: string, index: number): number {
  const first = text.charCodeAt(index);
  // Every sequence of interest starts with a digit, #, *, or a non-ASCII emoji.
  if (first < 0x80 && !(first >= 0x30 && first <= 0x39) && first !== 0x23 && first !== 0x2a) {
    return 0;
  }
  EMOJI_SEQUENCE.lastIndex = index;
  const match = EMOJI_SEQUENCE.exec(text);
  if (match === null || match[0].length < 2) return 0;
  return SEQUENCE_PARTS.test(match[0]) ? match[0].length : 0;
}

/**
 * The visible escape of a code point: `\t`, `\r`, `\uXXXX` or `\u{XXXXX}`.
 *
 * @param cp The code point.
 * @returns Printable ASCII.
 *
 * @example
 * ```ts
 * import { escapeCodePoint } from "./classify.ts";
 * import { assertStrictEquals } from "../../tests/support/assert.ts";
 * assertStrictEquals(escapeCodePoint(0x202e), "\\u202E");
 * ```
 */
export function escapeCodePoint(cp: number): string {
  if (cp === 0x09) return "\\t";
  if (cp === 0x0d) return "\\r";
  const digits = cp.toString(16).toUpperCase();
  return cp > 0xffff ? `\\u{${digits}}` : "\\u" + digits.padStart(4, "0");
}

const WORD = /[\p{L}\p{M}]+/gu;
const LATIN = /\p{Script=Latin}/u;
const LOOK_ALIKE_SCRIPTS = /[\p{Script=Cyrillic}\p{Script=Greek}\p{Script=Armenian}]/u;
const LOOK_ALIKE = /[\p{Script=Cyrillic}\p{Script=Greek}\p{Script=Armenian}]/gu;

/**
 * Where the look-alike letters of mixed-script words are: in a word that mixes Latin letters
 * with Cyrillic, Greek or Armenian ones (the scripts whose letters pass for Latin, UTS #39
 * §5.1 "mixed-script confusables", as in `pаypal` with a Cyrillic а), the positions (UTF-16
 * index) of the non-Latin letters. A word in one script is never touched, so Russian or Greek
 * text reads as it is.
 *
 * @param text The text.
 * @returns The indexes to show escaped.
 *
 * @example
 * ```ts
 * import { lookAlikeLetters } from "./classify.ts";
 * import { assertEquals } from "../../tests/support/assert.ts";
 * assertEquals([...lookAlikeLetters("p\u0430ypal привет")], [1]);
 * ```
 */
export function lookAlikeLetters(text: string): Set<number> {
  const found = new Set<number>();
  // Cheap exit for the common case: no letter of those scripts at all.
  if (!LOOK_ALIKE_SCRIPTS.test(text)) return found;
  for (const word of text.matchAll(WORD)) {
    if (!LATIN.test(word[0]) || !LOOK_ALIKE_SCRIPTS.test(word[0])) continue;
    for (const letter of word[0].matchAll(LOOK_ALIKE)) found.add(word.index + letter.index);
  }
  return found;
}
