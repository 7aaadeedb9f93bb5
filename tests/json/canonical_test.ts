import { assertStrictEquals, assertThrows } from "../support/assert.ts";
import { canonicalJson } from "../../src/json/canonical.ts";

Deno.test("canonicalJson: sorts members by UTF-16 code units (RFC 8785 §3.2.3 example)", () => {
  const input = JSON.parse(String.raw`{
    "\u20ac": "Euro Sign",
    "\r": "Carriage Return",
    "\ufb33": "Hebrew Letter Dalet With Dagesh",
    "1": "One",
    "\ud83d\ude00": "Emoji: Grinning Face",
    "\u0080": "Control",
    "\u00f6": "Latin Small Letter O With Diaeresis"
  }`);
  // The emoji (U+1F600, code units D83D DE00) sorts before U+FB33: code units, not code points.
  // Compared as text: JSON.parse would move the integer-like name "1" to the front again.
  assertStrictEquals(
    canonicalJson(input),
    '{"\\r":"Carriage Return","1":"One","\u0080":"Control",' +
      '"\u00f6":"Latin Small Letter O With Diaeresis","\u20ac":"Euro Sign",' +
      '"\ud83d\ude00":"Emoji: Grinning Face","\ufb33":"Hebrew Letter Dalet With Dagesh"}',
  );
});

Deno.test("canonicalJson: serialises the RFC 8785 §3.2.2 sample exactly", () => {
  const input = JSON.parse(String.raw`{
    "numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],
    "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/",
    "literals": [null, true, false]
  }`);
  assertStrictEquals(
    canonicalJson(input),
    String
      .raw`{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\u000f\nA'B\"\\\\\"/"}`,
  );
});

Deno.test("canonicalJson: escapes only what JSON.stringify escapes", () => {
  assertStrictEquals(
    canonicalJson('\b\t\n\f\r\u0000\u001f\u007f\u2028\u2029"\\/é😀'),
    '"\\b\\t\\n\\f\\r\\u0000\\u001f\u007f\u2028\u2029\\"\\\\/é😀"',
  );
});

Deno.test("canonicalJson: nests objects and arrays without whitespace", () => {
  assertStrictEquals(
    canonicalJson({ b: [{ d: 1, c: [] }, {}], a: { z: null, y: false } }),
    '{"a":{"y":false,"z":null},"b":[{"c":[],"d":1},{}]}',
  );
});

Deno.test("canonicalJson: writes numbers as ECMAScript does, -0 as 0", () => {
  assertStrictEquals(
    canonicalJson([-0, 1e21, 1e-7, 0.1, 100, -1.5]),
    "[0,1e+21,1e-7,0.1,100,-1.5]",
  );
});

Deno.test("canonicalJson: refuses values outside the I-JSON data model", () => {
  const refused: unknown[] = [
    undefined,
    NaN,
    Infinity,
    -Infinity,
    10n,
    Symbol("s"),
    () => 1,
    "\ud800",
    "a\udc00",
    ["ok", undefined],
    { ok: 1, bad: undefined },
    { "\udfff": 1 },
  ];
  for (const value of refused) assertThrows(() => canonicalJson(value), TypeError);
});
