/**
 * Where a refusal was found (`offset`, in bytes of the UTF-8 body) and the exact text of the
 * numbers of a top-level object (`rootNumberText`), for the refusal bodies and the JSON-RPC id.
 */
import { assertEquals, assertStrictEquals } from "../support/assert.ts";
import { parseStrictJson, parseStrictJsonText } from "../../src/json/strict_json.ts";

const encode = (text: string) => new TextEncoder().encode(text);

function offsetOf(body: string | Uint8Array): number {
  const result = parseStrictJson(typeof body === "string" ? encode(body) : body);
  if (result.ok) throw new Error("expected a refusal");
  return result.offset;
}

Deno.test("offset: the byte where each kind of refusal was found", () => {
  const cases: [string, number][] = [
    ['{"a":1,}', 7], // the closing brace where a member name must be
    ["[1,2", 4], // cut short: the end of the body
    ["[1 2]", 3],
    ['{"a" 1}', 5],
    ["tru", 0],
    ["1e999", 0], // number_range: the number
    ['{"a":1,"a":2}', 7], // duplicate_key: the repeated name
    ['["\\ud800"]', 1], // lone_surrogate: the string
    ['"\\x"', 1], // a bad escape
    ["[" + "[".repeat(40), 32], // too_deep: the first bracket past the cap
    ['{"a":1} x', 8], // trailing data
  ];
  for (const [body, offset] of cases) assertStrictEquals(offsetOf(body), offset, body);
});

Deno.test("offset counts UTF-8 bytes, not characters", () => {
  // "é" is two bytes and "😀" four: the stray comma sits at byte 13.
  assertStrictEquals(offsetOf('["é","😀",,]'), 13);
  assertStrictEquals(offsetOf(new Uint8Array([0xef, 0xbb, 0xbf, 0x31])), 0); // BOM
  // A genuine U+FFFD (EF BF BD) is text; the invalid sequence C3 28 after it is byte 4.
  assertStrictEquals(offsetOf(new Uint8Array([0x22, 0xef, 0xbf, 0xbd, 0xc3, 0x28, 0x22])), 4);
  assertStrictEquals(offsetOf(new Uint8Array([0x5b, 0x31, 0x2c, 0xff, 0x5d])), 3);
});

Deno.test("rootNumberText: the source text of each number member of a top-level object", () => {
  const tiny = "0." + "0".repeat(10_000) + "1";
  const result = parseStrictJsonText(`{"id":${tiny},"n":1e0,"x":[1.5],"o":{"k":2},"s":"3"}`);
  if (!result.ok) throw new Error("parse failed");
  assertEquals([...result.rootNumberText.entries()], [["id", tiny], ["n", "1e0"]]);
  const array = parseStrictJsonText("[1.0]");
  assertStrictEquals(array.ok && array.rootNumberText.size, 0);
});
