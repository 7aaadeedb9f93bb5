/**
 * `review export` with review history, and its CSV format: formula neutralisation (OWASP CSV
 * injection), RFC 4180 quoting, text shown inert; through the real handler and the real CLI.
 */
import { csvCell } from "../render/export.ts";
import {
  assert,
  assertEquals,
  assertMatch,
  assertStrictEquals,
} from "../../tests/support/assert.ts";
import { assertRunInert, fill, message, review, tempDatabase, text } from "./support.ts";

/** Parses RFC 4180 CSV where every cell is quoted and rows end with LF (what export writes). */
function parseCsv(csv: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let at = 0;
  while (at < csv.length) {
    assertStrictEquals(csv[at], '"', `a cell starts with a quote at ${at}`);
    let cell = "";
    at++;
    while (true) {
      const quote = csv.indexOf('"', at);
      cell += csv.slice(at, quote);
      at = quote + 1;
      if (csv[at] === '"') {
        cell += '"';
        at++;
      } else break;
    }
    row.push(cell);
    if (csv[at] === ",") at++;
    else {
      // Rows end with a line feed: a carriage return never reaches the output (io.ts).
      assertStrictEquals(csv[at], "\n");
      at += 1;
      rows.push(row);
      row = [];
    }
  }
  return rows;
}

Deno.test("csvCell() neutralises formula triggers and doubles quotes", () => {
  for (const trigger of ["=", "+", "-", "@", "\t", "\r"]) {
    assertStrictEquals(csvCell(`${trigger}1+1`), `"'${trigger}1+1"`);
  }
  assertStrictEquals(csvCell('say "hi"'), '"say ""hi"""');
  assertStrictEquals(csvCell("plain, text"), '"plain, text"');
});

Deno.test("export carries each item's history; CSV neutralises formulas and stays inert", async () => {
  const database = await tempDatabase();
  const receipts = await fill(database, [
    text('=HYPERLINK("http://127.0.0.2:9/","click")'),
    text("+cmd|' /C calc'!A0"),
    text("@SUM(1+1)*cmd|' /C calc'!A0"),
    message({ subject: "-2+3", body: "a\u202Eb \x1b[31mred https://example.com" }),
  ]);
  const ids = receipts.map((receipt) => String(receipt.id));
  await review(database, ["mark", ids[0], ids[1], "--status", "dismissed", "--reviewer", "ana"]);
  await review(database, ["mark", ids[0], "--note", "=1+1 spreadsheet bait"]);
  // The note is #2 of this submission's history (event 3 of the store): numbers count within
  // the submission, so 3 names nothing yet, and 1 is a status, not a note.
  for (const number of ["3", "1"]) {
    const refused = await review(database, ["mark", ids[0], "--note", "x", "--corrects", number]);
    assertStrictEquals(refused.code, 1);
    assertMatch(refused.stderr, new RegExp(`event #${number} of ${ids[0]} is not a note`));
  }
  const corrected = await review(database, [
    "mark",
    ids[0],
    "--note",
    "corrected",
    "--corrects",
    "2",
  ]);
  assertStrictEquals(corrected.code, 0, corrected.stderr);

  const ndjson = await review(database, ["export"]);
  assertStrictEquals(ndjson.code, 0, ndjson.stderr);
  const records = ndjson.stdout.trim().split("\n").map((line) => JSON.parse(line));
  assertEquals(
    records[0].history.map((event: Record<string, unknown>) => [
      event.seq,
      event.number,
      event.status,
      event.note,
      event.reviewer,
      event.supersedes,
    ]),
    [
      [1, 1, "dismissed", null, "ana", null],
      [3, 2, null, "=1+1 spreadsheet bait", null, null],
      [4, 3, null, "corrected", null, 3],
    ],
  );
  assertEquals(records[3].history, []);

  const out = `${database.directory}/export.csv`;
  const csv = await review(database, ["export", "--format", "csv", "--out", out]);
  assertStrictEquals(csv.code, 0, csv.stderr);
  const file = await Deno.readTextFile(out);
  assertRunInert({ code: 0, stdout: file, stderr: "" });
  const rows = parseCsv(file);
  assertStrictEquals(rows.length, 5);
  const header = rows[0];
  const column = (name: string) => header.indexOf(name);
  assertEquals(header.slice(0, 3), ["seq", "id", "receivedAt"]);
  // No cell a spreadsheet would run as a formula.
  for (const row of rows) {
    for (const cell of row) assert(!/^[=+\-@\t\r]/.test(cell), `formula cell: ${cell}`);
  }
  assertStrictEquals(rows[1][column("content")], `'=HYPERLINK("http[:]//127.0.0.2:9/","click")`);
  assertStrictEquals(rows[2][column("content")], "'+cmd|' /C calc'!A0");
  assertStrictEquals(rows[3][column("content")], "'@SUM(1+1)*cmd|' /C calc'!A0");
  assertStrictEquals(rows[1][column("status")], "dismissed");
  assertMatch(
    rows[1][column("history")],
    /^#1 \S+ dismissed by ana\n#2 \S+ note: =1\+1 spreadsheet bait\n#3 \S+ note \(corrects the note of #2\): corrected$/,
  );
  // The JSON text as stored (JSON.stringify wrote ESC as \u001b), the bidi control escaped.
  assertMatch(rows[4][column("content")], /a\\u202Eb \\u001b\[31mred https\[:\]\/\/example\.com/);
  const again = await review(database, ["export", "--format", "xml"]);
  assertStrictEquals(again.code, 2);
});
