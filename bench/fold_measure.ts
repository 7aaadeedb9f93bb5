/**
 * The measuring half of bench/fold_bench.ts, run on whichever runtime runs it (Deno and Bun from
 * this source, Node from an esbuild bundle of it): the search fold (review/search/fold.ts) of
 * the rows that once froze the console on Bun, beside the `unhomoglyph` regular expression it
 * replaced. Prints one JSON line per row: wall-clock milliseconds per fold, the median of
 * `ROUNDS`, for each of the two.
 *
 * @module
 */
import unhomoglyph from "unhomoglyph";
import { fold } from "../review/search/fold.ts";

/** The rows: each at most the intake's 64 KiB limit, as a sender can submit them. */
const ROWS: Record<string, string> = {
  // 21,000 x 3 bytes; NFKC turns each into 18 letters and 3 spaces.
  "63 KB U+FDFA": "\uFDFA".repeat(21_000),
  // 1,578 x 38 bytes: thumbs up with a skin tone, a family (joiners), a flag, a smiley.
  "60 KB emoji":
    "\u{1F44D}\u{1F3FD}\u{1F469}\u200D\u{1F469}\u200D\u{1F467}\u{1F1EB}\u{1F1F7}\u{1F600}"
      .repeat(1_578),
};

const ROUNDS = Number(globalThis.process?.env?.FOLD_ROUNDS ?? 5);

/** The fold as it was, for comparison: the same steps around the package's own function. */
function regexFold(text: string): string {
  const visible = text.replace(/\p{Default_Ignorable_Code_Point}/gu, "").normalize("NFKC")
    .toLowerCase();
  return unhomoglyph(visible.normalize("NFD")).normalize("NFD");
}

function median(run: () => unknown, rounds: number): number {
  const samples: number[] = [];
  for (let round = 0; round < rounds; round++) {
    const start = performance.now();
    run();
    samples.push(performance.now() - start);
  }
  return samples.sort((a, b) => a - b)[samples.length >> 1];
}

for (const [name, row] of Object.entries(ROWS)) {
  const bytes = new TextEncoder().encode(row).length;
  const table = median(() => fold(row), ROUNDS);
  // The regex is run fewer times: one round of it on Bun takes seconds.
  const regex = median(() => regexFold(row), Math.min(ROUNDS, 3));
  console.log(JSON.stringify({ row: name, bytes, tableMs: table, regexMs: regex }));
}
