/**
 * `review triage`, run as a subprocess with its answers on standard input, against a database
 * filled through the real handler: one key per item marks the item just shown, a note leaves it
 * new, a skip moves on, and what lands is what `list` and `show` see.
 */
import { assertEquals, assertMatch, assertStrictEquals } from "../../tests/support/assert.ts";
import { assertRunInert, fill, review, tempDatabase, text } from "./support.ts";

/** A clock that moves 1 s per call, so the queue order is the submission order. */
function clock(): () => number {
  let now = Date.UTC(2026, 0, 1);
  return () => (now += 1000);
}

/** The receipt ids in the order `show` printed them. */
function shown(stdout: string): string[] {
  return [...stdout.matchAll(/^receipt +(\S+)$/gm)].map((match) => match[1]);
}

Deno.test("triage marks each shown item with one key, takes notes and skips, and stops at the end", async () => {
  const database = await tempDatabase();
  const bodies = ["first", "second", "third \u202Eevil", "fourth", "fifth"];
  const receipts = await fill(database, bodies.map((body) => text(body)), { now: clock() });
  const ids = receipts.map((receipt) => String(receipt.id));
  const run = await review(
    database,
    ["triage", "--reviewer", "ana"],
    {},
    // first: a note, then reviewed; second: an unknown key, then dismissed; third: skipped;
    // fourth: escalated; fifth: follow-up. Then the queue is empty.
    "n\nlooks like a test\nr\nx\nd\ns\ne\nf\n",
  );
  assertStrictEquals(run.code, 0, run.stderr);
  assertRunInert(run); // the bidi override of the third item is shown, never sent raw
  assertEquals(shown(run.stdout), ids);
  assertMatch(run.stdout, /^r reviewed {3}f follow-up .* {3}\(4 more new\)$/m);
  assertMatch(
    run.stdout,
    new RegExp(`^> note> ${ids[0]} noted \\(event #1 of its history\\)$`, "m"),
  );
  assertMatch(run.stdout, /answer one of: r reviewed/);
  assertMatch(run.stdout, new RegExp(`^> ${ids[2]} skipped, still new$`, "m"));
  assertMatch(run.stdout, /the queue is empty: 4 marked in this run$/m);

  const listed = JSON.parse((await review(database, ["list", "--json"])).stdout) as {
    id: string;
    status: string | null;
  }[];
  const status = Object.fromEntries(listed.map((row) => [row.id, row.status]));
  assertEquals(ids.map((id) => status[id]), [
    "reviewed",
    "dismissed",
    null, // never marked: new
    "escalated",
    "follow-up",
  ]);
  const first = await review(database, ["show", ids[0], "--width", "200"]);
  assertMatch(first.stdout, /#1 \S+ note by ana: looks like a test$/m);
  assertMatch(first.stdout, /#2 \S+ reviewed by ana$/m);

  // A second run starts from the oldest new item again: only the skipped one is left.
  const again = await review(database, ["triage"], {}, "q\n");
  assertStrictEquals(again.code, 0, again.stderr);
  assertEquals(shown(again.stdout), [ids[2]]);
  assertMatch(again.stdout, /stopped: 0 marked in this run$/m);
  await Deno.remove(database.directory, { recursive: true });
});

Deno.test("triage stops cleanly at the end of its input and on an empty queue", async () => {
  const database = await tempDatabase();
  const receipts = await fill(database, [text("only one")], { now: clock() });
  const ended = await review(database, ["triage"], {}, "");
  assertStrictEquals(ended.code, 0, ended.stderr);
  assertEquals(shown(ended.stdout), [String(receipts[0].id)]);
  assertMatch(ended.stdout, /stopped: 0 marked in this run$/m);
  const marked = await review(database, ["triage", "--kind", "unstructured"], {}, "d\n");
  assertMatch(marked.stdout, /the queue is empty: 1 marked in this run$/m);
  const empty = await review(database, ["triage"], {}, "r\n");
  assertStrictEquals(empty.code, 0);
  assertEquals(shown(empty.stdout), []);
  assertMatch(empty.stdout, /^the queue is empty: 0 marked in this run$/m);
  await Deno.remove(database.directory, { recursive: true });
});
