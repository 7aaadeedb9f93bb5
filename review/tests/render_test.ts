/** Safe rendering of hostile text (review/render/mod.ts), unit by unit. */
import {
  codePointWidth,
  displayWidth,
  escapeCodePoint,
  Findings,
  isSafeOutput,
  safeBlock,
  safeExcerpt,
  safeJson,
  safeSegments,
  safeText,
  sanitizeOutput,
} from "../render/mod.ts";
import { assert, assertEquals, assertStrictEquals } from "../../tests/support/assert.ts";
import { assertInert } from "./support.ts";

function render(text: string, options = {}): { text: string; findings: Findings } {
  const findings = new Findings();
  return { text: safeText(text, findings, options), findings };
}

Deno.test("safeText() leaves ordinary text of any script alone", () => {
  const plain = "Hello, wörld! Ünïcödé — 日本語 مرحبا שלום 👋 e\u0301 \\path\\to";
  assertStrictEquals(render(plain).text, plain);
  assertStrictEquals(render(plain).findings.any, false);
});

Deno.test("safeText() shows escape sequences escaped and counts each once", () => {
  const cases: [string, string][] = [
    ["\x1b[31mred\x1b[0m", "\\u001B[31mred\\u001B[0m"],
    ["\x1b]0;title\x07x", "\\u001B]0;title\\u0007x"],
    ["\x1b]8;;http://e.example/\x1b\\link", "\\u001B]8;;http[:]//e.example/\\u001B\\link"],
    ["\x1bP+q544e\x1b\\", "\\u001BP+q544e\\u001B\\"],
    ["\x9b2J", "\\u009B2J"],
    ["\x1bc", "\\u001Bc"],
    ["\x1b", "\\u001B"],
  ];
  for (const [input, expected] of cases) {
    const { text, findings } = render(input);
    assertStrictEquals(text, expected);
    assertStrictEquals(findings.count("escape"), input === cases[0][0] ? 2 : 1, input);
    assertStrictEquals(findings.count("control"), 0, input);
  }
});

Deno.test("safeText() escapes C0, DEL and C1 controls; CRLF is a line break, a lone CR is not", () => {
  const { text, findings } = render("a\x00b\x07c\x08d\x7fe\x85f\rg\u2028h\u2029", {
    newlines: "keep",
  });
  assertStrictEquals(text, "a\\u0000b\\u0007c\\u0008d\\u007Fe\\u0085f\\rg\\u2028h\\u2029");
  assertStrictEquals(findings.count("control"), 8);
  assertStrictEquals(render("one\r\ntwo\nthree", { newlines: "keep" }).text, "one\ntwo\nthree");
  assertStrictEquals(render("one\r\ntwo", { newlines: "escape" }).text, "one\\ntwo");
  assertStrictEquals(render("one\ntwo", { newlines: "space" }).text, "one two");
  const tab = render("a\tb");
  assertStrictEquals(tab.text, "a\\tb");
  assertStrictEquals(tab.findings.count("tab"), 1);
});

Deno.test("safeText() escapes every bidi control (Trojan Source)", () => {
  const bidi = [
    0x202a,
    0x202b,
    0x202c,
    0x202d,
    0x202e,
    0x2066,
    0x2067,
    0x2068,
    0x2069,
    0x200e,
    0x200f,
    0x061c,
  ];
  for (const cp of bidi) {
    const { text, findings } = render(`x${String.fromCodePoint(cp)}y`);
    assertStrictEquals(text, `x${escapeCodePoint(cp)}y`);
    assertStrictEquals(findings.count("bidi"), 1, cp.toString(16));
  }
});

Deno.test("safeText() escapes zero-width, invisible, tag and variation selector characters", () => {
  const invisible = [
    0x200b,
    0x200c,
    0x200d,
    0x2060,
    0x2061,
    0x2062,
    0x2063,
    0x2064,
    0xfeff,
    0x00ad,
    0x180e,
    0x034f,
    0x115f,
    0x1160,
    0x3164,
    0xffa0,
    0x17b4,
    0x2800,
    0xfe00,
    0xfe0f,
    0xe0001,
    0xe0041,
    0xe007f,
    0xe0100,
    0x206a,
    0xfff9,
    0x0600,
    0x1d173,
  ];
  for (const cp of invisible) {
    const { text, findings } = render(`x${String.fromCodePoint(cp)}y`);
    assertStrictEquals(text, `x${escapeCodePoint(cp)}y`, cp.toString(16));
    assertStrictEquals(findings.count("invisible"), 1, cp.toString(16));
  }
  assertStrictEquals(escapeCodePoint(0xe0041), "\\u{E0041}");
});

Deno.test("safeText() escapes lone surrogates, unassigned and private-use code points", () => {
  assertStrictEquals(render("a\uD800b\uDC00").text, "a\\uD800b\\uDC00");
  assertStrictEquals(render("a\uD800b").findings.count("surrogate"), 1);
  assertStrictEquals(render("\u{1F600}").text, "\u{1F600}", "a well-formed pair is fine");
  const odd = render("\uE000\uFFFF\u{F0000}\u0378");
  assertStrictEquals(odd.text, "\\uE000\\uFFFF\\u{F0000}\\u0378");
  assertStrictEquals(odd.findings.count("unassigned"), 4);
});

Deno.test("safeText() keeps four stacked combining marks and escapes the rest", () => {
  const { text, findings } = render("Z" + "\u0301".repeat(6) + "a");
  assertStrictEquals(text, "Z" + "\u0301".repeat(4) + "\\u0301\\u0301a");
  assertStrictEquals(findings.count("combining"), 2);
  assertStrictEquals(render("Vie\u0323\u0302t").findings.any, false);
});

Deno.test("safeText() defangs URL schemes, never emitting a clickable link", () => {
  const { text, findings } = render("see https://evil.example/a and ftp://x, mailto:a@b");
  assertStrictEquals(text, "see https[:]//evil.example/a and ftp[:]//x, mailto:a@b");
  assertStrictEquals(findings.count("link"), 2);
  assertStrictEquals(render("https://x", { defang: false }).text, "https://x");
});

Deno.test("Findings.summary() names what was escaped", () => {
  const findings = new Findings();
  safeText("\u202E\u2066\u202A\x1b[1m https://x", findings);
  assertStrictEquals(
    findings.summary(),
    "warning: 1 escape sequence, 3 bidi controls shown escaped; 1 link defanged",
  );
  assertEquals(findings.toJSON(), { link: 1, escape: 1, bidi: 3 });
  assertStrictEquals(new Findings().summary(), undefined);
});

Deno.test("safeBlock() wraps at the width, at spaces when it can, never inside an escape", () => {
  const findings = new Findings();
  const lines = safeBlock("alpha beta gamma delta epsilon zeta eta theta", findings, {
    width: 20,
    indent: "| ",
  });
  assertEquals(lines, ["| alpha beta gamma", "| delta epsilon zeta", "| eta theta"]);
  const escapes = safeBlock("\u202E".repeat(30), findings, { width: 22, indent: "" });
  for (const line of escapes) {
    assert(displayWidth(line) <= 22);
    assert(/^(\\u202E)+$/.test(line), `an escape was split: ${line}`);
  }
  const long = safeBlock("x".repeat(50), findings, { width: 20, indent: "> ", continuation: ": " });
  assertEquals(long, ["> " + "x".repeat(18), ": " + "x".repeat(18), ": " + "x".repeat(14)]);
  assertEquals(safeBlock("a\nb\r\n\nc", findings, { width: 20 }), ["a", "b", "", "c"]);
});

Deno.test("safeExcerpt() makes one line, collapses spaces and cuts between tokens", () => {
  assertStrictEquals(safeExcerpt("  Hello\n\n  world  ", 40), "Hello world");
  assertStrictEquals(safeExcerpt("Hello world, and more", 12), "Hello world…");
  assertStrictEquals(safeExcerpt("ab\u202Ecd", 7), "ab…");
  assertStrictEquals(safeExcerpt("日本語です", 5), "日本…");
});

Deno.test("codePointWidth() counts wide characters twice and marks as zero", () => {
  assertStrictEquals(codePointWidth(0x41), 1);
  assertStrictEquals(codePointWidth(0x65e5), 2);
  assertStrictEquals(codePointWidth(0x1f600), 2);
  assertStrictEquals(codePointWidth(0x0301), 0);
  assertStrictEquals(displayWidth("a日e\u0301"), 4);
});

Deno.test("safeJson() escapes what the renderer would, and round-trips exactly", () => {
  const value = {
    text: "a\u202Eb\u200B\x1b[1m\u{E0041}\uFEFF\u2028 日本 👋 \\u202E",
    nested: ["\u2066", { k: "\x85" }],
  };
  const json = safeJson(value);
  assertInert(json, "safeJson output");
  assertEquals(JSON.parse(json), value);
  assert(json.includes("\\u202e") && json.includes("\\udb40\\udc41"));
  assert(json.includes("日本 👋"), "ordinary non-ASCII stays readable");
  const pretty = safeJson(value, 2);
  assertEquals(JSON.parse(pretty), value);
  assertInert(pretty, "pretty safeJson output");
});

Deno.test("sanitizeOutput() is the identity on safe text and fixes anything else", () => {
  const safe = "fine\nlines \\u202E here";
  assertStrictEquals(sanitizeOutput(safe), safe);
  assertStrictEquals(isSafeOutput(safe), true);
  assertStrictEquals(isSafeOutput("\u202E"), false);
  assertStrictEquals(sanitizeOutput("a\u202Eb\nc\x1b[2J"), "a\\u202Eb\nc\\u001B[2J");
  assertStrictEquals(sanitizeOutput("a https://x \u200B"), "a https://x \\u200B");
});

Deno.test("every code point below U+10000 renders to inert output", () => {
  // Exhaustive over the BMP, a chunk at a time: nothing the renderer emits may be dangerous.
  for (let start = 0; start < 0x10000; start += 0x400) {
    let chunk = "";
    for (let cp = start; cp < start + 0x400; cp++) chunk += String.fromCharCode(cp) + " ";
    const output = safeText(chunk, new Findings(), { newlines: "keep" });
    assertInert(output.replaceAll("\n", ""), `chunk U+${start.toString(16)}`);
  }
});

Deno.test("standard emoji sequences are shown as they are; lone or misplaced joiners are not", () => {
  const sequences = [
    "👩‍👩‍👧‍👦", // ZWJ family
    "🧑🏽‍💻", // skin tone and ZWJ
    "🇫🇷🇯🇵", // flags: regional indicator pairs
    "👍🏿", // skin tone modifier
    "1️⃣ #️⃣", // keycaps
    "❤️ ☺️", // emoji presentation selector
    "🏴󠁧󠁢󠁳󠁣󠁴󠁿", // subdivision flag (tag sequence)
  ];
  for (const sequence of sequences) {
    const { text, findings } = render(`before ${sequence} after`);
    assertStrictEquals(text, `before ${sequence} after`, sequence);
    assertStrictEquals(findings.any, false, sequence);
    assertStrictEquals(isSafeOutput(sequence), true, sequence);
    assertStrictEquals(safeJson(sequence), JSON.stringify(sequence), sequence);
  }
  const misplaced: [string, string][] = [
    ["a\u200Db", "a\\u200Db"], // a joiner between letters
    ["\u200D👍", "\\u200D👍"], // a joiner before an emoji
    ["👍\u200D", "👍\\u200D"], // a dangling joiner
    ["x\uFE0F", "x\\uFE0F"], // a selector after a letter
    ["\u{E0041}\u{E007F}", "\\u{E0041}\\u{E007F}"], // tags without a flag
    ["🇫", "🇫"], // a lone regional indicator is a visible letter-like symbol
  ];
  for (const [input, shown] of misplaced) {
    const { text, findings } = render(input);
    assertStrictEquals(text, shown, input);
    if (input !== "🇫") assertStrictEquals(findings.count("invisible") > 0, true, input);
  }
  assertStrictEquals(isSafeOutput("a\u200Db"), false);
  assertStrictEquals(safeJson("a\u200Db"), '"a\\u200db"');
});

Deno.test("width follows Unicode East Asian Width (UAX #11), emoji sequences two columns", () => {
  assertStrictEquals(codePointWidth("Ａ".codePointAt(0)!), 2); // fullwidth
  assertStrictEquals(codePointWidth("ｱ".codePointAt(0)!), 1); // halfwidth
  assertStrictEquals(codePointWidth("한".codePointAt(0)!), 2);
  assertStrictEquals(codePointWidth("😀".codePointAt(0)!), 2);
  assertStrictEquals(codePointWidth("·".codePointAt(0)!), 1); // ambiguous: narrow
  assertStrictEquals(codePointWidth("\u0301".codePointAt(0)!), 0);
  // An excerpt never cuts an emoji sequence and counts it as two columns.
  assertStrictEquals(safeExcerpt("ab 👩‍👩‍👧 cd", 6), "ab 👩‍👩‍👧…");
});

Deno.test("safeSegments() marks each escape, for the console's textContent rendering", () => {
  const lines = safeSegments("a\u202Eb\nc", new Findings(), { width: 80, indent: "| " });
  assertEquals(lines, [
    [{ text: "| ", kind: "prefix" }, { text: "a" }, { text: "\\u202E", kind: "escape" }, {
      text: "b",
    }],
    [{ text: "| ", kind: "prefix" }, { text: "c" }],
  ]);
});

Deno.test("look-alike letters in mixed-script words are shown escaped; one-script words are not", () => {
  const spoof = render("log in at p\u0430yp\u0430l.com");
  assertStrictEquals(spoof.text, "log in at p\\u0430yp\\u0430l.com");
  assertStrictEquals(spoof.findings.count("confusable"), 2);
  assertStrictEquals(
    spoof.findings.summary(),
    "warning: 2 look-alike letters in mixed-script words shown escaped",
  );
  assertStrictEquals(render("\u0391\u03A1\u03A1LE").text, "\\u0391\\u03A1\\u03A1LE");
  for (const plain of ["привет мир", "καλημέρα κόσμε", "Ελλάδα and England", "Straße, café"]) {
    const { text, findings } = render(plain);
    assertStrictEquals(text, plain);
    assertStrictEquals(findings.any, false, plain);
  }
});
