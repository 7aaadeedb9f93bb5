/**
 * Hostile submissions through the real handler, then the real CLI: nothing a sender wrote may
 * reach the reviewer's terminal as a raw control, bidi or invisible character, in `show`,
 * `list`, `list --json`, `export` or `stats`.
 */
import { assert, assertMatch, assertStrictEquals } from "../../tests/support/assert.ts";
import {
  assertInert,
  assertRunInert,
  fill,
  message,
  review,
  tempDatabase,
  text,
} from "./support.ts";

const ESCAPES = [
  "\x1b[31mred\x1b[0m", // SGR colour
  "\x1b[2J\x1b[H", // clear screen, cursor home
  "\x1b]0;pwned title\x07", // OSC 0: window title
  "\x1b]8;;https://evil.example/\x07click me\x1b]8;;\x07", // OSC 8 hyperlink
  "\x1b]52;c;ZWNobyBoaQ==\x07", // OSC 52: write the clipboard
  "\x1bP+q544e\x1b\\", // DCS request (answer-back)
  "\x9b31m", // C1 CSI
  "\x1b[6n", // cursor position report: the terminal would type an answer
].join(" ");

const CONTROLS = "over\rwrite back\b\b\bspace bell\x07 nul\x00 del\x7f nel\x85 vt\x0b ff\x0c";

const TROJAN_SOURCE = "/*\u202E } \u2066if (isAdmin)\u2069 \u2066 begin admins only */ " +
  "rlo\u202Dlro\u202Clre\u202Arle\u202B lrm\u200Erlm\u200Falm\u061C fsi\u2068";

const INVISIBLE = "zw\u200Bsp zwnj\u200C zwj\u200D wj\u2060 fa\u2061 bom\uFEFF shy\u00AD " +
  "mvs\u180E vs16\uFE0F tags\u{E0041}\u{E0042}\u{E007F} filler\u3164 cgj\u034F ls\u2028ps\u2029";

const ZALGO = "Z" + "\u0301\u0302\u0303\u0304\u0305\u0306\u0307\u0308".repeat(4) + "algo";

const LONG = "word ".repeat(200) + "x".repeat(300);

/** Terminal columns of a line without wide characters: combining marks take none. */
function columns(line: string): number {
  return [...line.replace(/\p{M}/gu, "")].length;
}

const HOSTILE_TEXT = [ESCAPES, CONTROLS, TROJAN_SOURCE, INVISIBLE, ZALGO, LONG].join("\n");

Deno.test("show renders hostile plain text inertly, with a summary warning", async () => {
  const database = await tempDatabase();
  const [receipt] = await fill(database, [text(HOSTILE_TEXT)]);
  const run = await review(database, ["show", String(receipt.id)]);
  assertStrictEquals(run.code, 0, run.stderr);
  assertRunInert(run);
  // Visible escapes instead of the characters.
  for (const escape of ["\\u001B[31m", "\\u202E", "\\u2066", "\\u200B", "\\uFEFF", "\\u{E0041}"]) {
    assert(run.stdout.includes(escape), `missing ${escape}`);
  }
  assert(run.stdout.includes("\\r"), "a lone CR is shown as \\r");
  assertMatch(
    run.stdout,
    /warning: \d+ escape sequences, \d+ control characters, \d+ bidi controls/,
  );
  assertMatch(run.stdout, /\d+ invisible characters/);
  assertMatch(run.stdout, /stacked combining marks/);
  // The URL inside the OSC 8 sequence is defanged and never a hyperlink.
  assert(run.stdout.includes("https[:]//evil.example/"));
  assert(!run.stdout.includes("https://evil.example"));
  // Long lines are wrapped to the default width of 100 columns.
  for (const line of run.stdout.split("\n")) assert(columns(line) <= 100, `too long: ${line}`);
});

Deno.test("show renders hostile structured fields inertly and labelled", async () => {
  const database = await tempDatabase();
  const [receipt] = await fill(database, [
    message({
      subject: "Invoice \u202Etxt.exe\u200B",
      body: HOSTILE_TEXT,
      sender: {
        name: "Agent \u2066Smith\u2069",
        description: "I am \x1b[1mbold\x1b[0m\nand\u00ADhidden",
        software: "model\u200D",
        operator: "op\uFEFF",
      },
      language: "en",
    }),
  ]);
  const run = await review(database, ["show", String(receipt.id), "--width", "60"]);
  assertStrictEquals(run.code, 0, run.stderr);
  assertRunInert(run);
  assertMatch(run.stdout, /^subject\s+Invoice \\u202Etxt\.exe\\u200B$/m);
  assertMatch(run.stdout, /^ {2}name\s+Agent \\u2066Smith\\u2069$/m);
  assertMatch(run.stdout, /^intent\s+information$/m);
  assertMatch(run.stdout, /^ +\| I am \\u001B\[1mbold\\u001B\[0m$/m);
  for (const line of run.stdout.split("\n")) assert(columns(line) <= 60, `too long: ${line}`);
});

Deno.test("list and list --json keep hostile subjects and first words inert", async () => {
  const database = await tempDatabase();
  await fill(database, [
    text(HOSTILE_TEXT),
    text("\x1b]0;title\x07\u202Eevil first words"),
    message({ subject: "Subject \u202E\u2066\u200B\uFEFF", body: ESCAPES }),
  ]);
  const run = await review(database, ["list"]);
  assertStrictEquals(run.code, 0, run.stderr);
  assertRunInert(run);
  assertStrictEquals(run.stdout.split("\n").filter((line) => / ! /.test(line)).length, 3);
  assertMatch(run.stdout, /! 3 of 3 submissions: [^]*bidi\s+controls/);
  const json = await review(database, ["list", "--json"]);
  assertStrictEquals(json.code, 0, json.stderr);
  assertRunInert(json);
  const items = JSON.parse(json.stdout);
  // The JSON holds the exact text (escaped as JSON), and counts what was hidden in it.
  assertStrictEquals(items[0].preview, "Subject \u202E\u2066\u200B\uFEFF");
  assertStrictEquals(items[0].escaped.bidi, 2);
});

Deno.test("export and stats output stay inert for hostile content, and export is exact", async () => {
  const database = await tempDatabase();
  await fill(database, [text(HOSTILE_TEXT), message({ subject: "s\u202E", body: ESCAPES })]);
  const run = await review(database, ["export"]);
  assertStrictEquals(run.code, 0, run.stderr);
  assertRunInert(run);
  const records = run.stdout.trim().split("\n").map((line) => JSON.parse(line));
  assertStrictEquals(records[0].content, HOSTILE_TEXT);
  for (const line of run.stdout.split("\n")) assertInert(line, "export line");
  const stats = await review(database, ["stats"]);
  assertStrictEquals(stats.code, 0, stats.stderr);
  assertRunInert(stats);
});

Deno.test("error messages echoing arguments stay inert", async () => {
  const database = await tempDatabase();
  await fill(database, [text("hello")]);
  const show = await review(database, ["show", "no\x1b]0;x\x07such\u202E"]);
  assertStrictEquals(show.code, 2);
  assertRunInert(show);
  assertMatch(show.stderr, /Cannot show: no\\u001B\]0;x\\u0007such\\u202E is not a receipt id/);
  const mark = await review(database, ["mark", "\u202Eid", "--status", "reviewed"]);
  assertStrictEquals(mark.code, 2);
  assertRunInert(mark);
  const usage = await review(database, ["list", "--\u202Ebogus"]);
  assertStrictEquals(usage.code, 2);
  assertRunInert(usage);
});
