/**
 * The server modules the review package may import are written down once as code
 * (review/tests/boundary_test.ts, `SERVER_FACES`) and once for people (review/README.md, "What it
 * imports from the server"); the two name the same modules, so neither drifts from the other.
 */
import { assertEquals } from "../support/assert.ts";

const ROOT = new URL("../../", import.meta.url).pathname;

Deno.test("review/README.md names exactly the server faces the boundary test allows", async () => {
  const test = await Deno.readTextFile(`${ROOT}review/tests/boundary_test.ts`);
  const list = /const SERVER_FACES = \[([\s\S]*?)\];/.exec(test)?.[1] ?? "";
  const allowed = [...list.matchAll(/"(src\/[^"]+)"/g)].map((match) => match[1]).sort();
  const readme = await Deno.readTextFile(`${ROOT}review/README.md`);
  const start = readme.indexOf("## What it imports from the server");
  const section = readme.slice(start, readme.indexOf("\n## ", start + 1));
  const named = [...new Set([...section.matchAll(/`(src\/[^`]+\.ts)`/g)].map((m) => m[1]))].sort();
  assertEquals(named, allowed);
  assertEquals(allowed.length > 0, true);
});
