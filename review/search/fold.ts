/**
 * Search folding: the form in which submissions are indexed and queries are matched, so that a
 * reviewer who types `paypal` also finds the spellings a spammer uses to get past a filter:
 * `pay\u200Bpal` (an invisible character inside the word), `pаypal` (a Cyrillic а), `ｐａｙｐａｌ`
 * (full-width letters), `PAYPAL`.
 *
 * 1. Default-ignorable code points (zero-width spaces and joiners, bidi controls, variation
 *    selectors, soft hyphens; Unicode's `Default_Ignorable_Code_Point` property, UAX #44) are
 *    removed: they render as nothing, so a word split by one still reads as one word.
 * 2. NFKC (UAX #15) folds compatibility forms: full-width and mathematical letters, ligatures.
 * 3. Lower case (Unicode default case mapping), so that the skeleton of an upper-case word equals
 *    the skeleton of its lower-case form: UTS #39's prototypes are case-sensitive (`I` and `l`
 *    share one).
 * 4. The UTS #39 §4 skeleton: NFD, each confusable replaced by its prototype from Unicode's
 *    `confusables.txt`, NFD again. The table is the `unhomoglyph` package's copy of that file
 *    (nodeca/unhomoglyph's `data.json`, generated from unicode.org's data), not a hand-made list.
 *    Every key of that table is one code point, so the replacement is a lookup per code point in
 *    a `Map` built once, not the package's own function: that one is a regular expression
 *    alternating all 6,311 keys, which V8 runs fast but JavaScriptCore (Bun) so slowly that one
 *    63 KB row took seconds. The lookup costs the same on every runtime and grows linearly with
 *    the row, whose size the intake bounds (64 KiB by default); bench/fold_bench.ts measures it.
 *
 * The fold is for matching only: what a reviewer sees is always the stored bytes, rendered
 * inertly. It is deliberately lossy (a skeleton maps `m` and `rn` together, `0` and `O`), which
 * for a reviewer hunting look-alikes is the point: a search may find more, never less.
 *
 * @module
 */
import confusables from "unhomoglyph/data.json" with { type: "json" };

/**
 * Bumped whenever the fold changes, so that an index built with an older fold is rebuilt
 * (review/search/search.ts) instead of silently missing matches.
 */
export const FOLD_VERSION = 1;

const DEFAULT_IGNORABLE = /\p{Default_Ignorable_Code_Point}/gu;

/**
 * The text in its search form.
 *
 * @example
 * ```ts
 * import { assertEquals } from "../../tests/support/assert.ts";
 * import { fold } from "./fold.ts";
 *
 * const plain = fold("PayPal");
 * assertEquals(fold("pay\u200Bpal"), plain); // a zero-width space inside the word
 * assertEquals(fold("p\u0430ypal"), plain); // a Cyrillic а
 * assertEquals(fold("\uFF30\uFF41\uFF59\uFF30\uFF41\uFF4C"), plain); // full-width letters
 * ```
 */
export function fold(text: string): string {
  const visible = text.replace(DEFAULT_IGNORABLE, "").normalize("NFKC").toLowerCase()
    .normalize("NFD");
  // One pass over the code points; a run with nothing to replace is copied as one slice, so
  // the cost is one integer lookup per code point and one concatenation per replacement.
  let skeleton = "";
  let copied = 0;
  for (let index = 0; index < visible.length; index++) {
    const point = visible.codePointAt(index)!;
    const prototype = PROTOTYPES.get(point);
    const width = point > 0xFFFF ? 2 : 1;
    if (prototype !== undefined) {
      skeleton += visible.slice(copied, index) + prototype;
      copied = index + width;
    }
    index += width - 1;
  }
  return (skeleton + visible.slice(copied)).normalize("NFD");
}

/**
 * Each confusable code point's prototype (confusables.txt, through unhomoglyph's data), keyed by
 * the code point: every key of the data is exactly one.
 */
const PROTOTYPES: ReadonlyMap<number, string> = new Map(
  Object.entries(confusables as Record<string, string>).map((
    [key, prototype],
  ) => [key.codePointAt(0)!, prototype]),
);
