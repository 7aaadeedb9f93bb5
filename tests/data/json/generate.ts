/**
 * Source of the strict JSON corpus: every file under `accept/`, `reject/` and `implementation/`,
 * and `manifest.json`, is written from the table below so that each byte is reviewable here,
 * including the ones a text editor would hide or mangle (invalid UTF-8, BOMs, NUL, UTF-16).
 *
 * - `accept/`: JSON texts RFC 8259 allows and our profile raises no question about.
 * - `reject/`: not JSON texts under RFC 8259 (grammar, or not UTF-8 per §8.1).
 * - `implementation/`: RFC 8259 leaves the outcome to the implementation (BOM §8.1, duplicate
 *   names §4, unpaired surrogates §8.2, number range §6, nesting §9); `manifest.json` records
 *   our decision, which follows I-JSON (RFC 7493) and `src/json/strict_json.ts`.
 *
 * Regenerate: `deno run --allow-read --allow-write tests/data/json/generate.ts`.
 * Verify only: add `--check` (exits 1 if a file on disk differs from this table).
 * The test suite runs the same comparison, so the table and the files cannot drift apart.
 *
 * @module
 */

import type { JsonRefusal } from "../../../src/json/strict_json.ts";

/** One corpus file and the outcome our parser must produce for it. */
export interface CorpusCase {
  /** Path relative to `tests/data/json/`, e.g. `reject/trailing_comma_array.json`. */
  file: string;
  /** Exact file content. */
  bytes: Uint8Array;
  /** Whether `parseStrictJson` accepts the file. */
  expect: "accept" | "reject";
  /** The refusal `parseStrictJson` reports; present exactly when `expect` is "reject". */
  reason?: JsonRefusal;
  /** Why this outcome, citing the rule. */
  why: string;
}

/** Entry of `manifest.json`, keyed there by the case's `file`. */
export interface ManifestEntry {
  /** Whether `parseStrictJson` accepts the file. */
  expect: "accept" | "reject";
  /** The refusal reported, for rejected files. */
  reason?: JsonRefusal;
  /** Why this outcome. */
  why: string;
}

const encoder = new TextEncoder();

/** Concatenates UTF-8 text and raw byte values into one file content. */
function bytes(...parts: (string | number[])[]): Uint8Array {
  const chunks = parts.map((part) => typeof part === "string" ? encoder.encode(part) : part);
  const out = new Uint8Array(chunks.reduce((sum, chunk) => sum + chunk.length, 0));
  let offset = 0;
  for (const chunk of chunks) {
    out.set(chunk, offset);
    offset += chunk.length;
  }
  return out;
}

/** UTF-16 code units of ASCII text, little- or big-endian. */
function utf16(text: string, littleEndian: boolean): number[] {
  const out: number[] = [];
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    const high = unit >> 8;
    const low = unit & 0xff;
    out.push(...(littleEndian ? [low, high] : [high, low]));
  }
  return out;
}

/** `depth` nested arrays around `inner`. */
function nestedArrays(depth: number, inner = ""): string {
  return "[".repeat(depth) + inner + "]".repeat(depth);
}

/** Objects `{"a":...}` nested to `depth` levels, the innermost one empty. */
function nestedObjects(depth: number): string {
  return '{"a":'.repeat(depth - 1) + "{}" + "}".repeat(depth - 1);
}

/** Arrays and objects alternating, `depth` levels, innermost empty. */
function nestedMixed(depth: number): string {
  let open = "";
  let close = "";
  for (let level = 1; level < depth; level++) {
    if (level % 2 === 1) {
      open += "[";
      close = "]" + close;
    } else {
      open += '{"k":';
      close = "}" + close;
    }
  }
  return open + "{}" + close;
}

const a2aSendMessage = JSON.stringify(
  {
    jsonrpc: "2.0",
    id: "req-1",
    method: "SendMessage",
    params: {
      message: {
        role: "ROLE_USER",
        messageId: "6f1c0a52-3b7e-4c1d-9a8e-2d5f7b9c1e03",
        parts: [
          { text: "A finding for human review. No reply is expected." },
          {
            data: { subject: "Observation", body: "Details — “quoted”, é, 中文, 😀." },
            mediaType: "application/json",
          },
        ],
        metadata: { agent: "example-agent/1.0" },
      },
      configuration: { acceptedOutputModes: ["text/plain"], blocking: true },
    },
  },
  null,
  2,
) + "\n";

const accept = (file: string, content: Uint8Array, why: string): CorpusCase => ({
  file: `accept/${file}.json`,
  bytes: content,
  expect: "accept",
  why,
});

const reject = (
  file: string,
  content: Uint8Array,
  reason: JsonRefusal,
  why: string,
): CorpusCase => ({
  file: `reject/${file}.json`,
  bytes: content,
  expect: "reject",
  reason,
  why,
});

const decideAccept = (file: string, content: Uint8Array, why: string): CorpusCase => ({
  file: `implementation/${file}.json`,
  bytes: content,
  expect: "accept",
  why,
});

const decideReject = (
  file: string,
  content: Uint8Array,
  reason: JsonRefusal,
  why: string,
): CorpusCase => ({
  file: `implementation/${file}.json`,
  bytes: content,
  expect: "reject",
  reason,
  why,
});

const SYNTAX = "syntax";
const UTF8 = "invalid_utf8";

/** Every corpus file, in the order they are listed in `manifest.json`. */
export const corpus: readonly CorpusCase[] = [
  // --- accept: plain RFC 8259 JSON texts ---
  accept("object_simple", bytes('{"a":1,"b":"two","c":[true,false,null]}'), "RFC 8259 §4."),
  accept("object_empty", bytes("{}"), "RFC 8259 §4: an object may have no members."),
  accept("array_empty", bytes("[]"), "RFC 8259 §5: an array may have no elements."),
  accept("array_nested_empty", bytes("[[],{},[{}]]"), "RFC 8259 §5."),
  accept("top_level_string", bytes('"beacon"'), "RFC 8259 §2: any value is a JSON text."),
  accept("top_level_number", bytes("42"), "RFC 8259 §2: any value is a JSON text."),
  accept("top_level_true", bytes("true"), "RFC 8259 §2: any value is a JSON text."),
  accept("top_level_false", bytes("false"), "RFC 8259 §2: any value is a JSON text."),
  accept("top_level_null", bytes("null"), "RFC 8259 §2: any value is a JSON text."),
  accept("top_level_padded", bytes(' \t\r\n"x"\n'), "RFC 8259 §2: ws may surround the value."),
  accept(
    "whitespace_all_kinds",
    bytes('\t\n\r {\t"a"\r\n:\n[ 1 ,\t2 ]\r} \n'),
    "RFC 8259 §2: space, tab, LF and CR are the four insignificant whitespace characters.",
  ),
  accept("number_integers", bytes("[0,-0,7,-7,123456789]"), "RFC 8259 §6."),
  accept(
    "number_fraction_exponent",
    bytes("[-12.5e-3,0.5E+2,3e0,1E2,1e-2,0.000001]"),
    "RFC 8259 §6: fraction and exponent forms.",
  ),
  accept("number_1e308", bytes("[1e308]"), "Within IEEE 754 double range (RFC 7493 §2.2)."),
  accept(
    "number_max_double",
    bytes("[1.7976931348623157e308]"),
    "The largest finite double; RFC 7493 §2.2.",
  ),
  accept("number_min_subnormal", bytes("[5e-324]"), "The smallest positive double."),
  accept(
    "number_max_safe_integer",
    bytes("[9007199254740991,-9007199254740991]"),
    "RFC 7493 §2.2: integers within ±(2^53-1) are exact.",
  ),
  accept(
    "string_escapes_all",
    bytes('["\\" \\\\ \\/ \\b \\f \\n \\r \\t"]'),
    "RFC 8259 §7: the eight two-character escapes.",
  ),
  accept(
    "string_unicode_escapes",
    bytes('["\\u0041\\u00e9\\u4E2D\\uFFFD"]'),
    "RFC 8259 §7: \\u escapes, hex digits in either case.",
  ),
  accept(
    "string_escaped_nul",
    bytes('["a\\u0000b"]'),
    "RFC 8259 §7: U+0000 is allowed when escaped.",
  ),
  accept("key_escaped_nul", bytes('{"\\u0000":1}'), "RFC 8259 §7 applies to member names too."),
  accept(
    "string_surrogate_pair_escaped",
    bytes('["\\uD83D\\uDE00"]'),
    "RFC 8259 §7: a pair of escapes encodes a supplementary-plane character.",
  ),
  accept(
    "string_surrogate_pair_lowercase",
    bytes('["\\ud834\\udd1e"]'),
    "RFC 8259 §7: hex digits are case-insensitive.",
  ),
  accept(
    "string_utf8_multibyte",
    bytes('["é 中 😀"]'),
    "RFC 8259 §8.1: two-, three- and four-byte UTF-8 sequences.",
  ),
  accept(
    "string_raw_line_separators",
    bytes('["a\u2028b\u2029c"]'),
    "RFC 8259 §7: only U+0000 to U+001F must be escaped.",
  ),
  accept("string_raw_del", bytes('["a', [0x7f], 'b"]'), "RFC 8259 §7: U+007F is unescaped."),
  accept(
    "string_raw_replacement_char",
    bytes('["a', [0xef, 0xbf, 0xbd], 'b"]'),
    "U+FFFD sent as valid UTF-8 is ordinary text, not a decoding error.",
  ),
  accept("string_escaped_bom", bytes('["\\uFEFF"]'), "U+FEFF inside a string is text."),
  accept(
    "string_raw_bom_inside",
    bytes('["', [0xef, 0xbb, 0xbf], '"]'),
    "Only a leading U+FEFF is a byte order mark (RFC 8259 §8.1).",
  ),
  accept(
    "string_structural_characters",
    bytes('["{[:,]}","\\"{:}\\"",":"]'),
    "Brackets, colons and commas inside strings are text.",
  ),
  accept(
    "string_escaped_backslash_then_quote",
    bytes('{"a":"\\\\","b":"\\\\\\"","c":2}'),
    'RFC 8259 §7: "\\\\" ends with an escaped backslash, so the next quote closes the string.',
  ),
  accept("key_empty", bytes('{"":0}'), "RFC 8259 §4: a member name is any string."),
  accept(
    "keys_case_distinct",
    bytes('{"a":1,"A":2,"a ":3," a":4}'),
    "Names compare code unit by code unit; these are all different.",
  ),
  accept(
    "keys_escaped_but_distinct",
    bytes('{"\\u0061":1,"b":2}'),
    "After unescaping the names are a and b.",
  ),
  accept("key_with_colon", bytes('{"a:b":"c:d","e":":"}'), "Colons inside names are text."),
  accept(
    "keys_equal_in_sibling_objects",
    bytes('[{"id":1},{"id":2}]'),
    "Uniqueness is per object (RFC 7493 §2.3).",
  ),
  accept(
    "keys_equal_at_different_levels",
    bytes('{"a":{"a":{"a":null}}}'),
    "Uniqueness is per object (RFC 7493 §2.3).",
  ),
  accept(
    "key_proto",
    bytes('{"__proto__":{"polluted":true}}'),
    "Valid JSON; becomes an inert own data property, the prototype is never set.",
  ),
  accept(
    "keys_constructor_prototype",
    bytes('{"constructor":{"prototype":{"polluted":true}},"prototype":1,"toString":"x"}'),
    "Valid JSON; plain own data properties with no effect on any prototype.",
  ),
  accept("a2a_send_message", bytes(a2aSendMessage), "A typical A2A 1.0 SendMessage request."),

  // --- reject: not JSON under RFC 8259 ---
  reject("empty", bytes(""), SYNTAX, "RFC 8259 §2: a JSON text is a value; there is none."),
  reject("whitespace_only", bytes(" \t\r\n "), SYNTAX, "RFC 8259 §2: whitespace is not a value."),
  reject("truncated_object", bytes('{"a":1'), SYNTAX, "RFC 8259 §4: the object is not closed."),
  reject("truncated_array", bytes("[1,2"), SYNTAX, "RFC 8259 §5: the array is not closed."),
  reject("truncated_string", bytes('["abc'), SYNTAX, "RFC 8259 §7: the string is not closed."),
  reject("truncated_literal", bytes("[tru"), SYNTAX, "RFC 8259 §3: incomplete literal."),
  reject("truncated_escape", bytes('["\\u00'), SYNTAX, "RFC 8259 §7: incomplete \\u escape."),
  reject("truncated_after_colon", bytes('{"a":'), SYNTAX, "RFC 8259 §4: member without value."),
  reject("truncated_after_comma", bytes("[1,"), SYNTAX, "RFC 8259 §5: value expected."),
  reject("truncated_exponent", bytes("[1e"), SYNTAX, "RFC 8259 §6: exponent without digits."),
  reject("truncated_minus", bytes("-"), SYNTAX, "RFC 8259 §6: minus without digits."),
  reject("trailing_comma_array", bytes("[1,2,]"), SYNTAX, "RFC 8259 §5: no trailing comma."),
  reject("trailing_comma_object", bytes('{"a":1,}'), SYNTAX, "RFC 8259 §4: no trailing comma."),
  reject("leading_comma_array", bytes("[,1]"), SYNTAX, "RFC 8259 §5: value expected."),
  reject("double_comma_array", bytes("[1,,2]"), SYNTAX, "RFC 8259 §5: no empty elements."),
  reject("missing_colon", bytes('{"a" 1}'), SYNTAX, "RFC 8259 §4: name-separator required."),
  reject("missing_comma", bytes("[1 2]"), SYNTAX, "RFC 8259 §5: value-separator required."),
  reject("missing_value", bytes('{"a":}'), SYNTAX, "RFC 8259 §4: member without value."),
  reject("key_unquoted", bytes("{a:1}"), SYNTAX, "RFC 8259 §4: a name is a string."),
  reject("key_number", bytes("{1:1}"), SYNTAX, "RFC 8259 §4: a name is a string."),
  reject("key_array", bytes("{[]:1}"), SYNTAX, "RFC 8259 §4: a name is a string."),
  reject(
    "single_quotes_string",
    bytes("['a']"),
    SYNTAX,
    "RFC 8259 §7: strings use quotation marks.",
  ),
  reject(
    "single_quotes_key",
    bytes("{'a':1}"),
    SYNTAX,
    "RFC 8259 §7: strings use quotation marks.",
  ),
  reject("bad_escape_x", bytes('["\\x41"]'), SYNTAX, "RFC 8259 §7: \\x is not an escape."),
  reject(
    "bad_escape_single_quote",
    bytes('["\\\'"]'),
    SYNTAX,
    "RFC 8259 §7: \\' is not an escape.",
  ),
  reject("bad_escape_uppercase_u", bytes('["\\U0041"]'), SYNTAX, "RFC 8259 §7: \\U is not \\u."),
  reject("bad_escape_short_u", bytes('["\\u12"]'), SYNTAX, "RFC 8259 §7: \\u takes 4 hex digits."),
  reject("bad_escape_non_hex", bytes('["\\u12G4"]'), SYNTAX, "RFC 8259 §7: G is not a hex digit."),
  reject("bad_escape_octal", bytes('["\\0"]'), SYNTAX, "RFC 8259 §7: no octal escapes."),
  reject("bad_escape_space", bytes('["\\ "]'), SYNTAX, "RFC 8259 §7: \\ must start an escape."),
  reject("leading_zero", bytes("[01]"), SYNTAX, "RFC 8259 §6: leading zeros are not allowed."),
  reject(
    "leading_zero_negative",
    bytes("[-01]"),
    SYNTAX,
    "RFC 8259 §6: leading zeros are not allowed.",
  ),
  reject("number_plus_sign", bytes("[+1]"), SYNTAX, "RFC 8259 §6: no plus sign before a number."),
  reject("number_leading_dot", bytes("[.5]"), SYNTAX, "RFC 8259 §6: int part required."),
  reject("number_trailing_dot", bytes("[1.]"), SYNTAX, "RFC 8259 §6: digits after the point."),
  reject("number_empty_exponent", bytes("[1e+]"), SYNTAX, "RFC 8259 §6: exponent digits needed."),
  reject("number_hex", bytes("[0x10]"), SYNTAX, "RFC 8259 §6: decimal only."),
  reject("number_nan", bytes("[NaN]"), SYNTAX, "RFC 8259 §6: NaN is not permitted."),
  reject("number_infinity", bytes("[Infinity]"), SYNTAX, "RFC 8259 §6: Infinity is not permitted."),
  reject(
    "number_negative_infinity",
    bytes("[-Infinity]"),
    SYNTAX,
    "RFC 8259 §6: Infinity is not permitted.",
  ),
  reject("comment_line", bytes("[1] // note"), SYNTAX, "RFC 8259 has no comments."),
  reject("comment_block", bytes("/* note */ [1]"), SYNTAX, "RFC 8259 has no comments."),
  reject("comment_inside", bytes("[1, /* x */ 2]"), SYNTAX, "RFC 8259 has no comments."),
  reject("trailing_garbage", bytes('{"a":1}x'), SYNTAX, "RFC 8259 §2: one value only."),
  reject("two_values", bytes("[1][2]"), SYNTAX, "RFC 8259 §2: one value only."),
  reject("two_top_level_scalars", bytes("1 2"), SYNTAX, "RFC 8259 §2: one value only."),
  reject("trailing_nul", bytes("[1]", [0x00]), SYNTAX, "RFC 8259 §2: NUL is not whitespace."),
  reject(
    "string_raw_nul",
    bytes('["a', [0x00], 'b"]'),
    SYNTAX,
    "RFC 8259 §7: control characters must be escaped.",
  ),
  reject(
    "string_raw_tab",
    bytes('["a\tb"]'),
    SYNTAX,
    "RFC 8259 §7: control characters must be escaped.",
  ),
  reject(
    "string_raw_newline",
    bytes('["a\nb"]'),
    SYNTAX,
    "RFC 8259 §7: control characters must be escaped.",
  ),
  reject(
    "string_raw_escape_char",
    bytes('["a', [0x1b], '[31mb"]'),
    SYNTAX,
    "RFC 8259 §7: control characters (here ESC, a terminal escape) must be escaped.",
  ),
  reject(
    "string_raw_unit_separator",
    bytes('["a', [0x1f], 'b"]'),
    SYNTAX,
    "RFC 8259 §7: U+001F is the last control character that must be escaped.",
  ),
  reject(
    "key_raw_control",
    bytes('{"a', [0x01], '":1}'),
    SYNTAX,
    "RFC 8259 §7 applies to member names too.",
  ),
  reject("literal_capitalized", bytes("[True]"), SYNTAX, "RFC 8259 §3: literals are lowercase."),
  reject("literal_null_uppercase", bytes("[NULL]"), SYNTAX, "RFC 8259 §3: literals are lowercase."),
  reject("literal_undefined", bytes("[undefined]"), SYNTAX, "RFC 8259 §3: no undefined."),
  reject("unquoted_string", bytes("[abc]"), SYNTAX, "RFC 8259 §7: strings are quoted."),
  reject("bracket_mismatch", bytes("[1}"), SYNTAX, "RFC 8259 §5: ] closes an array."),
  reject("brace_mismatch", bytes('{"a":1]'), SYNTAX, "RFC 8259 §4: } closes an object."),
  reject("lone_comma", bytes(","), SYNTAX, "RFC 8259 §2: not a value."),
  reject("lone_colon", bytes(":"), SYNTAX, "RFC 8259 §2: not a value."),
  reject(
    "escape_outside_string",
    bytes("[\\u0031]"),
    SYNTAX,
    "RFC 8259 §7: escapes only in strings.",
  ),
  reject("whitespace_form_feed", bytes("\f[]"), SYNTAX, "RFC 8259 §2: form feed is not ws."),
  reject("whitespace_vertical_tab", bytes("[\v1]"), SYNTAX, "RFC 8259 §2: VT is not ws."),
  reject(
    "whitespace_no_break_space",
    bytes("[\u00a01]"),
    SYNTAX,
    "RFC 8259 §2: U+00A0 is not JSON whitespace.",
  ),
  reject(
    "whitespace_ideographic_space",
    bytes("[\u30001]"),
    SYNTAX,
    "RFC 8259 §2: U+3000 is not JSON whitespace.",
  ),
  reject(
    "utf16le_without_bom",
    bytes(utf16("[1]", true)),
    SYNTAX,
    "Without a BOM these bytes are valid UTF-8 holding NULs, which are not JSON (RFC 8259 §2).",
  ),
  reject(
    "utf8_lone_continuation",
    bytes('["', [0x80], '"]'),
    UTF8,
    "RFC 3629 §3: a continuation byte cannot start a character.",
  ),
  reject("utf8_byte_ff", bytes('["', [0xff], '"]'), UTF8, "RFC 3629 §3: 0xFF never appears."),
  reject(
    "utf8_truncated_sequence",
    bytes('["', [0xe2, 0x82], '"]'),
    UTF8,
    "RFC 3629 §3: three-byte sequence cut after two bytes.",
  ),
  reject(
    "utf8_truncated_at_end",
    bytes('["x"]', [0xe2, 0x82]),
    UTF8,
    "RFC 3629 §3: incomplete sequence at the end of the body.",
  ),
  reject(
    "utf8_overlong_solidus",
    bytes('["', [0xc0, 0xaf], '"]'),
    UTF8,
    "RFC 3629 §3/§10: overlong form of '/' is invalid.",
  ),
  reject(
    "utf8_overlong_nul",
    bytes('["', [0xc0, 0x80], '"]'),
    UTF8,
    "RFC 3629 §3: overlong form of U+0000 (modified UTF-8) is invalid.",
  ),
  reject(
    "utf8_overlong_quote",
    bytes('["', [0xc0, 0xa2], '"]'),
    UTF8,
    "RFC 3629 §10: an overlong quotation mark must not sneak past string parsing.",
  ),
  reject(
    "utf8_overlong_three_byte",
    bytes('["', [0xe0, 0x80, 0xaf], '"]'),
    UTF8,
    "RFC 3629 §3: overlong three-byte form.",
  ),
  reject(
    "utf8_overlong_four_byte",
    bytes('["', [0xf0, 0x80, 0x80, 0xaf], '"]'),
    UTF8,
    "RFC 3629 §3: overlong four-byte form.",
  ),
  reject(
    "utf8_encoded_surrogate",
    bytes('["', [0xed, 0xa0, 0x80], '"]'),
    UTF8,
    "RFC 3629 §3: surrogate code points must not be encoded.",
  ),
  reject(
    "utf8_encoded_surrogate_pair",
    bytes('["', [0xed, 0xa0, 0xbd, 0xed, 0xb8, 0x80], '"]'),
    UTF8,
    "RFC 3629 §3: CESU-8 style encoded surrogate pair is not UTF-8.",
  ),
  reject(
    "utf8_above_max",
    bytes('["', [0xf4, 0x90, 0x80, 0x80], '"]'),
    UTF8,
    "RFC 3629 §3: code points stop at U+10FFFF.",
  ),
  reject(
    "utf8_five_byte",
    bytes('["', [0xf8, 0x88, 0x80, 0x80, 0x80], '"]'),
    UTF8,
    "RFC 3629 §3: five-byte forms do not exist.",
  ),
  reject(
    "utf8_invalid_outside_string",
    bytes("[1]", [0xff]),
    UTF8,
    "Decoding comes first, so invalid UTF-8 wins over the syntax error it also is.",
  ),
  reject(
    "utf8_invalid_in_key",
    bytes('{"', [0xc3], '":1}'),
    UTF8,
    "RFC 3629 §3: lead byte followed by a quote, not a continuation byte.",
  ),
  reject(
    "latin1_text",
    bytes('["caf', [0xe9], '"]'),
    UTF8,
    "ISO-8859-1 is not UTF-8 (RFC 8259 §8.1).",
  ),

  // --- implementation-defined under RFC 8259: our decisions ---
  decideReject(
    "bom_utf8_object",
    bytes([0xef, 0xbb, 0xbf], "{}"),
    "bom",
    "RFC 8259 §8.1: senders MUST NOT add a BOM, parsers MAY ignore one; we refuse it.",
  ),
  decideReject(
    "bom_utf8_only",
    bytes([0xef, 0xbb, 0xbf]),
    "bom",
    "The BOM check comes before syntax.",
  ),
  decideReject(
    "bom_utf8_then_invalid_utf8",
    bytes([0xef, 0xbb, 0xbf], "[", [0xff], "]"),
    UTF8,
    "Decoding comes before the BOM check.",
  ),
  decideReject(
    "bom_utf16le",
    bytes([0xff, 0xfe], utf16("[1]", true)),
    UTF8,
    "RFC 8259 §8.1: UTF-8 only between open systems; 0xFF is never valid UTF-8.",
  ),
  decideReject(
    "bom_utf16be",
    bytes([0xfe, 0xff], utf16("[1]", false)),
    UTF8,
    "RFC 8259 §8.1: UTF-8 only between open systems; 0xFE is never valid UTF-8.",
  ),
  decideReject(
    "bom_utf32le",
    bytes([0xff, 0xfe, 0x00, 0x00, 0x5b, 0, 0, 0, 0x5d, 0, 0, 0]),
    UTF8,
    "RFC 8259 §8.1: UTF-8 only between open systems.",
  ),
  decideReject(
    "duplicate_key",
    bytes('{"a":1,"a":2}'),
    "duplicate_key",
    "RFC 8259 §4 leaves duplicates undefined; RFC 7493 §2.3 MUST NOT.",
  ),
  decideReject(
    "duplicate_key_same_value",
    bytes('{"a":1,"a":1}'),
    "duplicate_key",
    "RFC 7493 §2.3: even an identical value is a duplicate name.",
  ),
  decideReject(
    "duplicate_key_nested",
    bytes('{"outer":{"b":1,"c":2,"b":3}}'),
    "duplicate_key",
    "RFC 7493 §2.3 applies to every object, at any depth.",
  ),
  decideReject(
    "duplicate_key_in_array_element",
    bytes('[[{"k":1},{"k":2,"k":3}]]'),
    "duplicate_key",
    "RFC 7493 §2.3 applies to objects inside arrays.",
  ),
  decideReject(
    "duplicate_key_after_unescape",
    bytes('{"a":1,"\\u0061":2}'),
    "duplicate_key",
    "RFC 8259 §8.3: names compare after escapes are resolved.",
  ),
  decideReject(
    "duplicate_key_escaped_pair_vs_raw",
    bytes('{"😀":1,"\\uD83D\\uDE00":2}'),
    "duplicate_key",
    "RFC 8259 §8.3: the raw and escaped forms are the same name.",
  ),
  decideReject(
    "duplicate_key_proto",
    bytes('{"__proto__":1,"__proto__":2}'),
    "duplicate_key",
    "RFC 7493 §2.3; __proto__ is an ordinary name.",
  ),
  decideReject(
    "duplicate_key_empty",
    bytes('{"":1,"":2}'),
    "duplicate_key",
    "RFC 7493 §2.3; the empty name is a name.",
  ),
  decideReject(
    "duplicate_key_object_values",
    bytes('{"a":{"x":1},"a":{"y":2}}'),
    "duplicate_key",
    "RFC 7493 §2.3: a later member must not silently replace an earlier subtree.",
  ),
  decideReject(
    "lone_surrogate_high",
    bytes('["\\uD800"]'),
    "lone_surrogate",
    "RFC 8259 §8.2 calls this unpredictable; RFC 7493 §2.1 MUST NOT.",
  ),
  decideReject(
    "lone_surrogate_low",
    bytes('["\\uDC00"]'),
    "lone_surrogate",
    "RFC 7493 §2.1: a low surrogate without a high one.",
  ),
  decideReject(
    "lone_surrogate_reversed_pair",
    bytes('["\\uDC00\\uD800"]'),
    "lone_surrogate",
    "RFC 7493 §2.1: low then high is two lone surrogates, not a pair.",
  ),
  decideReject(
    "lone_surrogate_two_high",
    bytes('["\\uD800\\uD800"]'),
    "lone_surrogate",
    "RFC 7493 §2.1: two high surrogates do not pair.",
  ),
  decideReject(
    "lone_surrogate_high_then_escape",
    bytes('["\\uD800\\u0041"]'),
    "lone_surrogate",
    "RFC 7493 §2.1: a high surrogate followed by a non-surrogate escape.",
  ),
  decideReject(
    "lone_surrogate_high_then_char",
    bytes('["\\uD83Dx"]'),
    "lone_surrogate",
    "RFC 7493 §2.1: a high surrogate followed by plain text.",
  ),
  decideReject(
    "lone_surrogate_after_pair",
    bytes('["\\uD83D\\uDE00\\uD83D"]'),
    "lone_surrogate",
    "RFC 7493 §2.1: a valid pair then an unpaired high surrogate.",
  ),
  decideReject(
    "lone_surrogate_lowercase",
    bytes('["\\udbff"]'),
    "lone_surrogate",
    "RFC 7493 §2.1; hex digits in lowercase.",
  ),
  decideReject(
    "lone_surrogate_in_key",
    bytes('{"\\uDFFF":1}'),
    "lone_surrogate",
    "RFC 7493 §2.1 covers member names.",
  ),
  decideReject(
    "number_1e400",
    bytes("[1e400]"),
    "number_range",
    "RFC 8259 §6 lets implementations limit range; RFC 7493 §2.2: beyond IEEE 754 double.",
  ),
  decideReject(
    "number_negative_1e400",
    bytes("[-1e400]"),
    "number_range",
    "RFC 7493 §2.2: overflows to -Infinity.",
  ),
  decideReject(
    "number_just_above_max",
    bytes("[1.7976931348623159e308]"),
    "number_range",
    "RFC 7493 §2.2: rounds to Infinity, just past the largest double.",
  ),
  decideReject(
    "number_huge_integer",
    bytes("[1" + "0".repeat(400) + "]"),
    "number_range",
    "RFC 7493 §2.2: a 401-digit integer overflows a double.",
  ),
  decideReject(
    "number_huge_in_object",
    bytes('{"n":1e999}'),
    "number_range",
    "RFC 7493 §2.2 applies inside objects.",
  ),
  decideAccept(
    "number_underflow",
    bytes("[1e-400]"),
    "Rounds to 0: still a finite double; RFC 7493 §2.2 concerns magnitude, so we accept.",
  ),
  decideAccept(
    "number_zero_huge_exponent",
    bytes("[0e999999]"),
    "Exactly zero whatever the exponent; finite, accepted.",
  ),
  decideAccept(
    "number_beyond_2_53",
    bytes("[9007199254740993]"),
    "RFC 7493 §2.2 SHOULD NOT rely on more precision than a double; accepted and rounded.",
  ),
  decideAccept(
    "number_many_fraction_digits",
    bytes("[3.141592653589793238462643383279]"),
    "Precision beyond a double is rounded (RFC 8259 §6 allows it); accepted.",
  ),
  decideAccept("number_negative_zero", bytes("[-0.0]"), "RFC 8259 §6 allows it; kept as -0."),
  decideAccept(
    "nesting_at_cap_arrays",
    bytes(nestedArrays(32)),
    "RFC 8259 §9 allows a nesting limit; ours is 32 and this is exactly 32.",
  ),
  decideAccept(
    "nesting_at_cap_objects",
    bytes(nestedObjects(32)),
    "Exactly 32 levels of objects.",
  ),
  decideAccept(
    "nesting_at_cap_mixed",
    bytes(nestedMixed(32)),
    "Exactly 32 levels, arrays and objects alternating.",
  ),
  decideAccept(
    "nesting_at_cap_with_strings",
    bytes(nestedArrays(31, '"[[[[{{{{"')),
    "31 levels plus brackets inside a string, which do not count.",
  ),
  decideAccept(
    "nesting_wide",
    bytes("[" + Array(1000).fill("[{}]").join(",") + "]"),
    "Depth 3 however many siblings: the cap is on depth, not on size.",
  ),
  decideReject(
    "nesting_over_cap_arrays",
    bytes(nestedArrays(33)),
    "too_deep",
    "RFC 8259 §9: 33 levels, one past our limit.",
  ),
  decideReject(
    "nesting_over_cap_objects",
    bytes(nestedObjects(33)),
    "too_deep",
    "33 levels of objects.",
  ),
  decideReject(
    "nesting_over_cap_mixed",
    bytes(nestedMixed(33)),
    "too_deep",
    "33 levels, arrays and objects alternating.",
  ),
  decideReject(
    "nesting_deep_unclosed",
    bytes("[".repeat(1000)),
    "too_deep",
    "Refusals follow reading order: bracket 33 comes before the missing end, so too_deep.",
  ),
  decideAccept(
    "noncharacter_escaped",
    bytes('["\\uFFFF"]'),
    "RFC 7493 §2.1 also forbids noncharacters; we accept them: no refusal code exists and " +
      "they are harmless to store (the reviewer tool shows them visibly).",
  ),
  decideAccept(
    "noncharacter_raw_fdd0",
    bytes('["', [0xef, 0xb7, 0x90], '"]'),
    "U+FDD0 is a noncharacter in valid UTF-8; accepted, as above.",
  ),
  decideAccept(
    "noncharacter_raw_10ffff",
    bytes('["', [0xf4, 0x8f, 0xbf, 0xbf], '"]'),
    "U+10FFFF is a noncharacter in valid UTF-8; accepted, as above.",
  ),
];

/** The manifest as written to `manifest.json`: file → expected outcome and reason. */
export function manifest(): Record<string, ManifestEntry> {
  const out: Record<string, ManifestEntry> = {};
  for (const item of corpus) {
    out[item.file] = item.reason === undefined
      ? { expect: item.expect, why: item.why }
      : { expect: item.expect, reason: item.reason, why: item.why };
  }
  return out;
}

/** The text of `manifest.json`. */
export function manifestText(): string {
  return JSON.stringify(manifest(), null, 2) + "\n";
}

/** Directories the table owns; stale `.json` files in them are removed on regeneration. */
export const CORPUS_DIRECTORIES = ["accept", "reject", "implementation"] as const;

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((byte, i) => byte === b[i]);
}

async function main(check: boolean): Promise<number> {
  const root = new URL("./", import.meta.url);
  const wanted = new Map<string, Uint8Array>(corpus.map((item) => [item.file, item.bytes]));
  wanted.set("manifest.json", encoder.encode(manifestText()));
  let problems = 0;
  for (const directory of CORPUS_DIRECTORIES) {
    if (!check) await Deno.mkdir(new URL(`${directory}/`, root), { recursive: true });
    for await (const entry of Deno.readDir(new URL(`${directory}/`, root))) {
      const file = `${directory}/${entry.name}`;
      if (!entry.name.endsWith(".json") || wanted.has(file)) continue;
      problems++;
      if (check) console.error(`stale: ${file}`);
      else await Deno.remove(new URL(file, root));
    }
  }
  for (const [file, content] of wanted) {
    let current: Uint8Array | undefined;
    try {
      current = await Deno.readFile(new URL(file, root));
    } catch {
      current = undefined;
    }
    if (current !== undefined && sameBytes(current, content)) continue;
    problems++;
    if (check) console.error(`differs: ${file}`);
    else await Deno.writeFile(new URL(file, root), content);
  }
  return check ? problems : 0;
}

if (import.meta.main) {
  const problems = await main(Deno.args.includes("--check"));
  if (problems > 0) Deno.exit(1);
}
