/**
 * What look-alike words read as: for each word that mixes Latin letters with look-alike letters
 * of another script (the words review/render/mod.ts shows with those letters escaped), its
 * UTS #39 skeleton as the search folds it (search/fold.ts), so `p\u0430ypal` reads as `paypal`.
 * One list for the console's "reads as:" line and `review show`'s, so both say the same.
 * The words are submitted text: each caller renders them inertly like any other.
 *
 * @module
 */
import { lookAlikeLetters } from "../render/classify.ts";
import { fold } from "./fold.ts";

/** Most look-alike words spelled out for one text (a long text repeats its tricks). */
export const MAX_READS_AS = 12;

/**
 * The folded forms of the look-alike words of `text`, each once, in order of appearance.
 *
 * @param text Submitted text.
 * @returns At most {@linkcode MAX_READS_AS} words.
 *
 * @example
 * ```ts
 * import { assertEquals } from "../../tests/support/assert.ts";
 * import { readsAs } from "./reads_as.ts";
 *
 * assertEquals(readsAs("Pay your p\u0430yp\u0430l invoice"), ["paypal"]);
 * assertEquals(readsAs("plain words only"), []);
 * ```
 */
export function readsAs(text: string): string[] {
  const words = new Set<string>();
  for (const word of text.matchAll(/[\p{L}\p{M}]+/gu)) {
    if (words.size >= MAX_READS_AS) break;
    if (lookAlikeLetters(word[0]).size > 0) words.add(fold(word[0]));
  }
  return [...words];
}
