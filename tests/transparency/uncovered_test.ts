import { assertStrictEquals, assertThrows } from "../support/assert.ts";
import { UncoveredCommits } from "../../src/transparency/uncovered.ts";

Deno.test("uncovered commits: the oldest not covered by the largest head, forgotten once covered", () => {
  const commits = new UncoveredCommits();
  assertStrictEquals(commits.oldest(), undefined);
  commits.add(25, 1_000);
  commits.add(50, 2_000);
  commits.add(75, 3_000);
  commits.cover(24); // ends inside the first commit: that commit is still waiting
  assertStrictEquals(commits.oldest(), 1_000);
  commits.cover(50);
  assertStrictEquals(commits.oldest(), 3_000);
  assertStrictEquals(commits.size, 1);
  commits.cover(75);
  assertStrictEquals(commits.oldest(), undefined);
  assertStrictEquals(commits.size, 0);
});

Deno.test("uncovered commits: past the limit a new commit joins the newest kept, so the lag is never hidden", () => {
  const commits = new UncoveredCommits(2);
  commits.add(10, 1_000);
  commits.add(20, 2_000);
  commits.add(30, 3_000); // joins the commit ending at 20, which keeps its older time
  assertStrictEquals(commits.size, 2);
  commits.cover(20);
  // The commit ending at 30 is still waiting: reported with the time of the one it joined.
  assertStrictEquals(commits.oldest(), 2_000);
  commits.cover(30);
  assertStrictEquals(commits.oldest(), undefined);
  // Room again: later commits are kept one by one.
  commits.add(40, 4_000);
  commits.add(50, 5_000);
  assertStrictEquals(commits.size, 2);
  commits.cover(40);
  assertStrictEquals(commits.oldest(), 5_000);
});

Deno.test("uncovered commits: a long run of commits covered as they go stays small and in order", () => {
  const commits = new UncoveredCommits(8);
  for (let i = 1; i <= 10_000; i++) {
    commits.add(i * 3, i);
    if (i % 7 === 0) {
      commits.cover(i * 3 - 3); // every head ends one commit behind
      assertStrictEquals(commits.oldest(), i);
      assertStrictEquals(commits.size, 1);
    }
  }
});

Deno.test("uncovered commits: the limit is a positive integer", () => {
  assertThrows(() => new UncoveredCommits(0), RangeError);
  assertThrows(() => new UncoveredCommits(1.5), RangeError);
});
