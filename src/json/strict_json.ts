/**
 * The strict JSON profile the Beacon applies to every JSON body: RFC 8259 grammar, restricted to
 * I-JSON (RFC 7493), with a nesting cap. `Request.json()` must never be used for a body: it
 * decodes with replacement characters, so invalid UTF-8 would be silently rewritten.
 *
 * Rules, and the refusal each one produces:
 *
 * - `invalid_utf8`: the bytes are not well-formed UTF-8 (including overlong forms, encoded
 *   surrogates and code points above U+10FFFF, RFC 3629 §3). RFC 8259 §8.1 requires UTF-8
 *   between open systems, so UTF-16 and UTF-32 bodies land here too.
 * - `bom`: the text starts with U+FEFF. RFC 8259 §8.1 says implementations MUST NOT add one and
 *   MAY ignore one; we choose to refuse rather than ignore, so a body means one thing only.
 * - `too_deep`: arrays and objects nest deeper than `maxDepth` (default {@link MAX_JSON_DEPTH};
 *   `[]` is depth 1, a scalar depth 0). RFC 8259 §9 lets a parser limit nesting. The parser keeps
 *   its own stack instead of recursing, so no input can exhaust the call stack.
 * - `duplicate_key`: one object names the same member twice, compared after unescaping, so
 *   `"a"` and `"\u0061"` collide (RFC 7493 §2.3 MUST NOT; RFC 8259 §4 leaves it undefined).
 * - `lone_surrogate`: a string value or member name holds an unpaired surrogate once `\u`
 *   escapes are resolved (RFC 7493 §2.1; RFC 8259 §8.2 calls the outcome unpredictable).
 * - `number_range`: a number overflows an IEEE 754 double to ±Infinity (RFC 7493 §2.2).
 * - `syntax`: anything else RFC 8259 does not allow: empty or whitespace-only text, trailing
 *   commas or data, comments, single quotes, leading zeros, `NaN`/`Infinity`, bad escapes, raw
 *   control characters (U+0000 to U+001F) in strings, non-JSON whitespace.
 *
 * Deliberately accepted: top-level scalars (RFC 8259 §2), `-0`, numbers that underflow to zero
 * or lose precision (RFC 7493 §2.2 is a SHOULD about interoperability; the value stays finite),
 * and Unicode noncharacters such as U+FFFF (RFC 7493 §2.1 forbids them too, but the refusal set
 * has no code for them and they are harmless to store; the reviewer tool shows them visibly).
 *
 * When a body breaks several rules, `invalid_utf8` is reported first, then `bom`; after that the
 * first rule broken in reading order wins (`[[[…` past the cap is `too_deep` even if the text
 * is also cut short).
 *
 * Objects are plain objects (prototype Object.prototype). A member named `__proto__` becomes an
 * own data property, as JSON.parse would make it (ECMA-262 §25.5.1); the prototype is never set.
 *
 * Why a parser of our own rather than the engine's JSON.parse plus checks: JSON.parse cannot
 * report duplicate names (it keeps the last), and V8 (13.6, 14.6 and 15.0 in Deno 2.9.6 at
 * least) has an open bug where JSON.parse decodes an escaped member name wrongly once an
 * earlier parse built an object of the same shape with a backslash in that name
 * (nodejs/node#63785, crbug 521080746): after `{"h":[],"\\":0}`, `{"h":1,"\n":2}` and
 * `{"h":1,"\ud800":2}` both come back with the name `\`. One hostile body could rename members,
 * and hide lone surrogates, in every later body. A pre-scan + JSON.parse + walk design was
 * measured too: within about 10% of this single pass over the UTF-16 code units, either way
 * (see `bench/strict_json_bench.ts` for the cost against plain JSON.parse).
 *
 * @module
 */
import { decodeUtf8Strict, firstInvalidUtf8Byte } from "./utf8.ts";
import type { JsonObject, JsonValue } from "./value.ts";

/** Default nesting cap for arrays and objects; a 64 KiB body could otherwise nest 30,000 levels. */
export const MAX_JSON_DEPTH = 32;

/** Why a body was refused; stable codes, see the module documentation for each rule. */
export type JsonRefusal =
  | "invalid_utf8"
  | "bom"
  | "syntax"
  | "too_deep"
  | "duplicate_key"
  | "lone_surrogate"
  | "number_range";

/**
 * Outcome of a strict parse: the value, or the single reason it was refused and where.
 *
 * - `rootNumberText`: for a top-level object, the exact source text of each member whose value
 *   is a number (`{"id": 1e0}` gives `id → "1e0"`). A protocol that must echo a number exactly
 *   (a JSON-RPC id) can tell `1` from `1.0`, `1e0` or `0.000…1`, which parse to equal or
 *   indistinguishable doubles.
 * - `offset`: the byte offset in the UTF-8 body (for parseStrictJsonText, of the text's UTF-8
 *   encoding) where the first error was found: the first byte of an invalid UTF-8 sequence, 0
 *   for a byte-order mark, the first character that breaks the grammar (the end of the text
 *   when it is cut short), the opening bracket past the nesting cap, the repeated member name,
 *   the string holding a lone surrogate, the number that overflows.
 */
export type JsonParseResult =
  | { ok: true; value: JsonValue; rootNumberText: ReadonlyMap<string, string> }
  | { ok: false; refusal: JsonRefusal; offset: number };

// Decoders are shared: decode() without {stream: true} starts from a clean state on every call.
// ignoreBOM keeps a leading U+FEFF in the output so the `bom` rule can see it.
/**
 * Parses a JSON body under the Beacon's strict profile (see the module documentation).
 * Never throws for any input bytes; throws RangeError only for an invalid `maxDepth`.
 *
 * @param bytes the raw body.
 * @param maxDepth deepest nesting of arrays and objects accepted, a non-negative integer.
 */
export function parseStrictJson(
  bytes: Uint8Array,
  maxDepth: number = MAX_JSON_DEPTH,
): JsonParseResult {
  checkMaxDepth(maxDepth);
  const text = decodeUtf8Strict(bytes);
  if (text === undefined) return refusedAt("invalid_utf8", firstInvalidUtf8Byte(bytes));
  // Decoded UTF-8 is well-formed UTF-16, so only \u escapes can produce a lone surrogate.
  return parseDecoded(text, maxDepth, false);
}

/**
 * Same rules, for text already decoded (the decoder step skipped). A JavaScript string can hold
 * raw lone surrogates that no UTF-8 body can; inside a string value they are `lone_surrogate`.
 *
 * @param text the decoded body.
 * @param maxDepth deepest nesting of arrays and objects accepted, a non-negative integer.
 */
export function parseStrictJsonText(
  text: string,
  maxDepth: number = MAX_JSON_DEPTH,
): JsonParseResult {
  checkMaxDepth(maxDepth);
  return parseDecoded(text, maxDepth, !text.isWellFormed());
}

const REFUSAL_TEXT: Readonly<Record<JsonRefusal, string>> = Object.freeze({
  invalid_utf8: "The body is not valid UTF-8.",
  bom: "The body starts with a byte order mark (U+FEFF); send JSON without one.",
  syntax: "The body is not valid JSON (RFC 8259).",
  too_deep: "The JSON nests arrays and objects deeper than this service accepts.",
  duplicate_key: "A JSON object repeats a member name (RFC 7493 section 2.3).",
  lone_surrogate: "A JSON string contains an unpaired UTF-16 surrogate (RFC 7493 section 2.1).",
  number_range: "A JSON number is too large for an IEEE 754 double (RFC 7493 section 2.2).",
});

/** Human sentence for a refusal, fixed text, never containing input. */
export function describeJsonRefusal(refusal: JsonRefusal): string {
  return REFUSAL_TEXT[refusal];
}

function checkMaxDepth(maxDepth: number): void {
  if (!Number.isInteger(maxDepth) || maxDepth < 0) {
    throw new RangeError("maxDepth must be a non-negative integer");
  }
}

function refusedAt(refusal: JsonRefusal, offset: number): JsonParseResult {
  return { ok: false, refusal, offset };
}

const utf8Encoder = new TextEncoder();
/**
 * Thrown inside the parser to unwind to parseDecoded. Not an Error: capturing a stack trace on
 * every refused body would be wasted work.
 */
class Refused {
  readonly refusal: JsonRefusal;
  constructor(refusal: JsonRefusal) {
    this.refusal = refusal;
  }
}

const SYNTAX = new Refused("syntax");
const TOO_DEEP = new Refused("too_deep");
const DUPLICATE_KEY = new Refused("duplicate_key");
const LONE_SURROGATE = new Refused("lone_surrogate");
const NUMBER_RANGE = new Refused("number_range");

const TAB = 0x09;
const LINE_FEED = 0x0a;
const CARRIAGE_RETURN = 0x0d;
const SPACE = 0x20;
const QUOTE = 0x22;
const PLUS = 0x2b;
const COMMA = 0x2c;
const MINUS = 0x2d;
const DOT = 0x2e;
const SLASH = 0x2f;
const DIGIT_0 = 0x30;
const DIGIT_1 = 0x31;
const DIGIT_9 = 0x39;
const COLON = 0x3a;
const UPPER_E = 0x45;
const OPEN_BRACKET = 0x5b;
const BACKSLASH = 0x5c;
const CLOSE_BRACKET = 0x5d;
const LOWER_B = 0x62;
const LOWER_E = 0x65;
const LOWER_F = 0x66;
const LOWER_N = 0x6e;
const LOWER_R = 0x72;
const LOWER_T = 0x74;
const LOWER_U = 0x75;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const BOM = 0xfeff;

/** The escapes of RFC 8259 §7 other than \u, by the character after the backslash. */
const SIMPLE_ESCAPES: ReadonlyMap<number, string> = new Map([
  [QUOTE, '"'],
  [BACKSLASH, "\\"],
  [SLASH, "/"],
  [LOWER_B, "\b"],
  [LOWER_F, "\f"],
  [LOWER_N, "\n"],
  [LOWER_R, "\r"],
  [LOWER_T, "\t"],
]);

function parseDecoded(text: string, maxDepth: number, rawSurrogates: boolean): JsonParseResult {
  if (text.charCodeAt(0) === BOM) return refusedAt("bom", 0);
  const parser = new Parser(text, maxDepth, rawSurrogates);
  try {
    const value = parser.document();
    return { ok: true, value, rootNumberText: parser.rootNumberText };
  } catch (thrown) {
    if (thrown instanceof Refused) {
      // Only a refusal pays for the offset: the UTF-8 length of the text before the error.
      const at = Math.min(parser.errorAt, text.length);
      return refusedAt(thrown.refusal, utf8Encoder.encode(text.slice(0, at)).length);
    }
    throw thrown;
  }
}

/**
 * One pass over the text's UTF-16 code units. Containers being filled live on an explicit stack
 * (at most maxDepth entries), so nesting costs heap, never call stack.
 */
class Parser {
  #pos = 0;
  /** Where the error was found, in code units; set by every throw site that knows better. */
  #errorAt = -1;
  readonly rootNumberText = new Map<string, string>();
  readonly #text: string;
  readonly #maxDepth: number;
  /** Whether the text itself may hold lone surrogates (only for text not from the decoder). */
  readonly #rawSurrogates: boolean;

  constructor(text: string, maxDepth: number, rawSurrogates: boolean) {
    this.#text = text;
    this.#maxDepth = maxDepth;
    this.#rawSurrogates = rawSurrogates;
  }

  /** The code-unit position of the first error: the marked one, else where reading stopped. */
  get errorAt(): number {
    return this.#errorAt >= 0 ? this.#errorAt : this.#pos;
  }

  /** Marks `pos` as the error position and returns the refusal to throw. */
  #at(pos: number, refusal: Refused): Refused {
    this.#errorAt = pos;
    return refusal;
  }

  /** RFC 8259 §2: JSON-text = ws value ws. */
  document(): JsonValue {
    const text = this.#text;
    const containers: (JsonValue[] | JsonObject)[] = [];
    // Per open object, the name whose value is being read; unused slots for arrays.
    const names: string[] = [];
    let value: JsonValue;
    for (;;) {
      // Read one value; a non-empty container is opened and the loop restarts inside it.
      let c = this.#skipWhitespace();
      if (c === OPEN_BRACE || c === OPEN_BRACKET) {
        if (containers.length >= this.#maxDepth) throw TOO_DEEP;
        this.#pos++;
        const next = this.#skipWhitespace();
        if (c === OPEN_BRACE) {
          const object: JsonObject = {};
          if (next === CLOSE_BRACE) {
            this.#pos++;
            value = object;
          } else {
            containers.push(object);
            names.push(this.#memberName(object));
            continue;
          }
        } else {
          const array: JsonValue[] = [];
          if (next === CLOSE_BRACKET) {
            this.#pos++;
            value = array;
          } else {
            containers.push(array);
            names.push("");
            continue;
          }
        }
      } else if (c === QUOTE) {
        value = this.#string();
      } else if (c === MINUS || (c >= DIGIT_0 && c <= DIGIT_9)) {
        const start = this.#pos;
        value = this.#number();
        if (containers.length === 1 && !Array.isArray(containers[0])) {
          this.rootNumberText.set(names[0], text.slice(start, this.#pos));
        }
      } else if (c === LOWER_T && text.startsWith("true", this.#pos)) {
        this.#pos += 4;
        value = true;
      } else if (c === LOWER_F && text.startsWith("false", this.#pos)) {
        this.#pos += 5;
        value = false;
      } else if (c === LOWER_N && text.startsWith("null", this.#pos)) {
        this.#pos += 4;
        value = null;
      } else {
        throw SYNTAX;
      }

      // Store the value in its container; each container this completes is in turn stored.
      for (;;) {
        const depth = containers.length;
        if (depth === 0) {
          this.#skipWhitespace();
          if (this.#pos !== text.length) throw SYNTAX;
          return value;
        }
        const container = containers[depth - 1];
        c = this.#skipWhitespace();
        this.#pos++;
        if (Array.isArray(container)) {
          container.push(value);
          if (c === COMMA) break;
          if (c !== CLOSE_BRACKET) throw this.#at(this.#pos - 1, SYNTAX);
        } else {
          defineMember(container, names[depth - 1], value);
          if (c === COMMA) {
            this.#skipWhitespace();
            names[depth - 1] = this.#memberName(container);
            break;
          }
          if (c !== CLOSE_BRACE) throw this.#at(this.#pos - 1, SYNTAX);
        }
        containers.pop();
        names.pop();
        value = container;
      }
    }
  }

  /** Skips RFC 8259 §2 whitespace (space, tab, LF, CR only); returns the next code unit. */
  #skipWhitespace(): number {
    const text = this.#text;
    let pos = this.#pos;
    let c = text.charCodeAt(pos);
    while (c === SPACE || c === LINE_FEED || c === CARRIAGE_RETURN || c === TAB) {
      c = text.charCodeAt(++pos);
    }
    this.#pos = pos;
    return c;
  }

  /** RFC 8259 §4: member = string name-separator value; reads up to and past the colon. */
  #memberName(object: JsonObject): string {
    if (this.#text.charCodeAt(this.#pos) !== QUOTE) throw SYNTAX;
    const start = this.#pos;
    const name = this.#string();
    // RFC 7493 §2.3. Object.hasOwn, not `in`: inherited names such as "toString" are not
    // members. The earlier value is already stored, so the check is complete.
    if (Object.hasOwn(object, name)) throw this.#at(start, DUPLICATE_KEY);
    if (this.#skipWhitespace() !== COLON) throw SYNTAX;
    this.#pos++;
    return name;
  }

  /** RFC 8259 §7, starting at the opening quote; returns the unescaped string. */
  #string(): string {
    const text = this.#text;
    const start = this.#pos + 1;
    let pos = start;
    // Fast path: no escapes, so the result is a slice of the input.
    for (;;) {
      const c = text.charCodeAt(pos);
      if (c === QUOTE) {
        this.#pos = pos + 1;
        const value = text.slice(start, pos);
        if (this.#rawSurrogates && !value.isWellFormed()) throw this.#at(start - 1, LONE_SURROGATE);
        return value;
      }
      if (c === BACKSLASH) break;
      // Also true for NaN, which charCodeAt returns past the end: an unterminated string.
      if (!(c >= SPACE)) throw this.#at(pos, SYNTAX);
      pos++;
    }
    let value = "";
    let chunk = start;
    let surrogateEscape = false;
    for (;;) {
      const c = text.charCodeAt(pos);
      if (c === QUOTE) break;
      if (c === BACKSLASH) {
        value += text.slice(chunk, pos);
        const kind = text.charCodeAt(pos + 1);
        if (kind === LOWER_U) {
          const unit = hexQuad(text, pos + 2);
          if (unit < 0) throw this.#at(pos, SYNTAX);
          if (unit >= 0xd800 && unit <= 0xdfff) surrogateEscape = true;
          value += String.fromCharCode(unit);
          pos += 6;
        } else {
          const escaped = SIMPLE_ESCAPES.get(kind);
          if (escaped === undefined) throw this.#at(pos, SYNTAX);
          value += escaped;
          pos += 2;
        }
        chunk = pos;
        continue;
      }
      if (!(c >= SPACE)) throw this.#at(pos, SYNTAX);
      pos++;
    }
    value += text.slice(chunk, pos);
    this.#pos = pos + 1;
    // A surrogate escape may pair with its neighbour (RFC 8259 §7's 😀 example), so the check
    // runs on the whole result rather than on each escape.
    if ((surrogateEscape || this.#rawSurrogates) && !value.isWellFormed()) {
      throw this.#at(start - 1, LONE_SURROGATE);
    }
    return value;
  }

  /**
   * RFC 8259 §6: number = [ minus ] int [ frac ] [ exp ], int = zero / ( digit1-9 *DIGIT ).
   * The grammar is checked here; the conversion is the engine's (round to nearest, ECMA-262
   * §7.1.4.1.1), which also turns an overflow into ±Infinity.
   */
  #number(): number {
    const text = this.#text;
    const start = this.#pos;
    let pos = start;
    let c = text.charCodeAt(pos);
    const negative = c === MINUS;
    if (negative) c = text.charCodeAt(++pos);
    let integer = 0;
    if (c === DIGIT_0) {
      c = text.charCodeAt(++pos);
    } else if (c >= DIGIT_1 && c <= DIGIT_9) {
      do {
        integer = integer * 10 + (c - DIGIT_0);
        c = text.charCodeAt(++pos);
      } while (c >= DIGIT_0 && c <= DIGIT_9);
    } else {
      throw this.#at(pos, SYNTAX);
    }
    // Fast path for the common small integer: below 2^53 the digit sum above is exact, so it
    // equals the correctly rounded conversion. -0 stays -0.
    if (c !== DOT && c !== LOWER_E && c !== UPPER_E && integer <= Number.MAX_SAFE_INTEGER) {
      this.#pos = pos;
      return negative ? -integer : integer;
    }
    if (c === DOT) {
      c = text.charCodeAt(++pos);
      if (!(c >= DIGIT_0 && c <= DIGIT_9)) throw this.#at(pos, SYNTAX);
      do c = text.charCodeAt(++pos); while (c >= DIGIT_0 && c <= DIGIT_9);
    }
    if (c === LOWER_E || c === UPPER_E) {
      c = text.charCodeAt(++pos);
      if (c === PLUS || c === MINUS) c = text.charCodeAt(++pos);
      if (!(c >= DIGIT_0 && c <= DIGIT_9)) throw this.#at(pos, SYNTAX);
      do c = text.charCodeAt(++pos); while (c >= DIGIT_0 && c <= DIGIT_9);
    }
    this.#pos = pos;
    const value = Number(text.slice(start, pos));
    if (value === Infinity || value === -Infinity) throw this.#at(start, NUMBER_RANGE);
    return value;
  }
}

/** The four hex digits at `pos` as a code unit, or -1 if any is not a hex digit. */
function hexQuad(text: string, pos: number): number {
  let unit = 0;
  for (let i = pos; i < pos + 4; i++) {
    const c = text.charCodeAt(i);
    let digit: number;
    if (c >= DIGIT_0 && c <= DIGIT_9) digit = c - DIGIT_0;
    else if (c >= 0x41 && c <= 0x46) digit = c - 0x37; // A-F
    else if (c >= 0x61 && c <= 0x66) digit = c - 0x57; // a-f
    else return -1;
    unit = unit * 16 + digit;
  }
  return unit;
}

/** Names Object.prototype itself defines, `__proto__` among them. */
const INHERITED_NAMES: ReadonlySet<string> = new Set(Object.getOwnPropertyNames(Object.prototype));

/**
 * Adds a member as an own data property, which is what JSON.parse does (CreateDataProperty,
 * ECMA-262 §25.5.1). Plain assignment, faster than defineProperty (bench/README.md), does the
 * same for any name Object.prototype lacks. For the names it has, assignment would run the
 * `__proto__` setter (replacing the prototype), or throw if Object.prototype is frozen (a
 * hardened runtime). An accessor some other code adds to Object.prototype later is not guarded
 * against; the Beacon adds none.
 */
function defineMember(object: JsonObject, name: string, value: JsonValue): void {
  if (INHERITED_NAMES.has(name)) {
    Object.defineProperty(object, name, {
      value,
      writable: true,
      enumerable: true,
      configurable: true,
    });
  } else {
    object[name] = value;
  }
}
