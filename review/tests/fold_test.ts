/**
 * The search fold's per-code-point table (review/search/fold.ts) folds exactly as the
 * `unhomoglyph` function it replaced: the same output for every confusable code point of the
 * data, alone and inside words, and for the look-alike spellings the search tests find. So an
 * index built before the change needs no rebuild (FOLD_VERSION stays), and a folded search finds
 * no less than before.
 */
import unhomoglyph from "unhomoglyph";
import confusables from "unhomoglyph/data.json" with { type: "json" };
import { fold } from "../search/fold.ts";
import { assertStrictEquals } from "../../tests/support/assert.ts";

/** The fold as it was: the package's own regular expression. */
function previousFold(text: string): string {
  const visible = text.replace(/\p{Default_Ignorable_Code_Point}/gu, "").normalize("NFKC")
    .toLowerCase();
  return unhomoglyph(visible.normalize("NFD")).normalize("NFD");
}

/** The spellings the search and rendering tests hunt for, and text of many scripts. */
const CORPUS = [
  "Send your paypal password here",
  "Send your pay\u200Bpal password here",
  "Send your p\u0430ypal password here",
  "Send your \uFF50\uFF41\uFF59\uFF50\uFF41\uFF4C password here",
  "SEND YOUR PAYPAL PASSWORD HERE",
  "Send your payp4l passw0rd here",
  "Payment to a pal",
  "AAAABBBB is the code",
  "Your p\u0430yp\u0430l account",
  "pay\u200Bpal invoice \x1b[31mred\x1b[0m",
  "Invoice \u202Etxt.exe p\u0430ypal \u2066hidden\u2069",
  "\uFDFA".repeat(50),
  "\u{1F469}\u200D\u{1F469}\u200D\u{1F467}\u{1F44D}\u{1F3FD} \u{1F1EB}\u{1F1F7}",
  "\u0928\u092E\u0938\u094D\u0924\u0947 \u0645\u0631\u062D\u0628\u0627 \u4F60\u597D \u041F\u0440\u0438\u0432\u0435\u0442",
  "\u{1D41A}\u{1D41B}\u{1D41C} \u{1D5BA} \uFB01 \u2460 \u00C5ngstr\u00F6m \u212B",
  "rn m l I 1 | 0 O o",
];

Deno.test("fold: the table folds every confusable code point as unhomoglyph did", () => {
  for (const key of Object.keys(confusables)) {
    for (const text of [key, `a${key}b`, `${key.toUpperCase()} ${key}${key}`]) {
      assertStrictEquals(fold(text), previousFold(text), `U+${key.codePointAt(0)!.toString(16)}`);
    }
  }
});

Deno.test("fold: the search tests' look-alikes and other scripts fold as before", () => {
  for (const text of CORPUS) assertStrictEquals(fold(text), previousFold(text), text);
  // All the keys in one text, in order and reversed: no replacement leaks into its neighbour.
  const all = Object.keys(confusables).join("");
  assertStrictEquals(fold(all), previousFold(all));
  const reversed = [...all].reverse().join("");
  assertStrictEquals(fold(reversed), previousFold(reversed));
});
