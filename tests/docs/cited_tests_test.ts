/**
 * Every test the documentation cites as proof exists: wherever README.md or docs/*.md write
 * `` `path_test.ts` › "name", "name" ``, the file exists and one of its tests (or steps) has that
 * name. A name made from a template (`` `${runtime}: …` ``) matches any value in its holes, and a
 * cited name may shorten a long one with "…". A renamed or deleted test would otherwise leave a
 * claim of the threat model resting on nothing.
 */
import { assertEquals } from "../support/assert.ts";

const ROOT = new URL("../../", import.meta.url).pathname;

/** Whitespace and line breaks as one space, so names wrapped across lines compare. */
const flat = (text: string) => text.replace(/\s+/g, " ");

/** The names of the tests and steps a test file declares, as patterns. */
function testNames(source: string): RegExp[] {
  const names: RegExp[] = [];
  const text = flat(source);
  const declared =
    /(?:Deno\.test\(|\.step\(|name: )\s*(?:"((?:[^"\\]|\\.)*)"|`((?:[^`\\]|\\.)*)`|'((?:[^'\\]|\\.)*)')/g;
  for (const match of text.matchAll(declared)) {
    const raw = match[1] ?? match[3] ?? match[2];
    const template = match[2] !== undefined;
    const parts = (template ? raw.split(/\$\{[^}]*\}/) : [raw]).map((part) =>
      part.replace(/\\(.)/g, "$1").replace(/[.*+?^${}()|[\]\\]/g, "\\$&")
    );
    names.push(new RegExp(parts.join(".*")));
  }
  return names;
}

/** Whether a cited name (markdown-escaped, perhaps shortened with "…") names one of `names`. */
function cites(cited: string, names: RegExp[], source: string): boolean {
  const plain = cited.replace(/\\(.)/g, "$1");
  const pieces = plain.split("…").map((piece) => piece.trim()).filter((piece) => piece !== "");
  // A name given whole matches a declared name (a template's holes take any value); a
  // shortened one, every piece of it in order, in the file's declared text.
  if (pieces.length === 1 && !plain.includes("…")) {
    return names.some((name) => name.test(plain)) || flat(source).includes(plain);
  }
  let at = 0;
  const text = flat(source);
  for (const piece of pieces) {
    at = text.indexOf(piece, at);
    if (at < 0) return false;
    at += piece.length;
  }
  return true;
}

Deno.test("every test the docs cite by name exists", async () => {
  const docs = ["README.md"];
  for await (const entry of Deno.readDir(`${ROOT}docs`)) {
    if (entry.name.endsWith(".md")) docs.push(`docs/${entry.name}`);
  }
  const missing: string[] = [];
  let cited = 0;
  for (const doc of docs.sort()) {
    const text = flat(await Deno.readTextFile(`${ROOT}${doc}`));
    const citations =
      /`((?:[\w.-]+\/)*[\w.-]+_test\.ts)` › ((?:"(?:[^"\\]|\\.)+"(?:,? (?:and )?)?)+)/g;
    for (const [, file, list] of text.matchAll(citations)) {
      let source: string;
      try {
        source = await Deno.readTextFile(`${ROOT}${file}`);
      } catch {
        missing.push(`${doc}: ${file} does not exist`);
        continue;
      }
      const names = testNames(source);
      for (const [, name] of list.matchAll(/"((?:[^"\\]|\\.)+)"/g)) {
        cited++;
        if (!cites(name, names, source)) missing.push(`${doc}: ${file} › "${name}"`);
      }
    }
  }
  assertEquals(
    missing,
    [],
    `${missing.length} of ${cited} cited tests do not exist:\n${missing.join("\n")}`,
  );
});
