/**
 * Safe rendering of hostile text for a terminal. Everything a submitter wrote is untrusted: a
 * terminal interprets some characters (ECMA-48 escape and control sequences can recolour, move
 * the cursor, retitle the window, write hyperlinks, or on some terminals answer back with
 * input), and Unicode has characters that change how text reads without being seen (the bidi
 * overrides and isolates of Unicode Standard Annex #9 behind "Trojan Source", CVE-2021-42574;
 * zero-width and other format characters; tag characters; stacked combining marks that spill
 * over neighbouring lines). None of them may reach the reviewer's terminal raw.
 *
 * Rules (the same for every command):
 *
 * - **Escape sequences** (ESC, and the C1 introducers CSI U+009B, OSC U+009D, DCS U+0090, SOS
 *   U+0098, PM U+009E, APC U+009F), parsed per ECMA-48 §5.4 (control sequences) and §5.6
 *   (control strings, ended by BEL or ST): the whole sequence is shown with its control
 *   characters escaped (`\u001B[31m`) and counted once as an escape sequence.
 * - **Control characters**: C0 (U+0000–U+001F), DEL, C1 (U+0080–U+009F), U+2028 and U+2029 are
 *   shown as `\uXXXX`; CR as `\r`. A line feed is a real line break in multi-line text, CRLF
 *   counts as one line break, and a lone CR (which returns the cursor to overwrite the line) is
 *   escaped. TAB is shown as `\t`: expanding it would depend on the column, and it is counted
 *   so its presence is never silent.
 * - **Bidi controls** U+202A–U+202E, U+2066–U+2069, U+200E, U+200F, U+061C.
 * - **Invisible characters**: zero-width (U+200B–U+200D), word joiner and invisible operators
 *   (U+2060–U+2064), BOM/ZWNBSP (U+FEFF), soft hyphen (U+00AD), Mongolian selectors and vowel
 *   separator (U+180B–U+180F), combining grapheme joiner (U+034F), Hangul fillers, Khmer
 *   inherent vowels, braille blank, variation selectors (U+FE00–U+FE0F, U+E0100–U+E01EF), tag
 *   characters (U+E0000–U+E007F), musical format characters, and every other format character
 *   (General Category Cf).
 * - **Lone surrogates**, **unassigned code points and noncharacters** (Cn) and **private-use
 *   characters** (Co) are escaped: what a terminal shows for them depends on its fonts.
 * - **Stacked combining marks**: the first four marks in a row are shown, the rest escaped.
 * - **Links**: nothing is ever emitted as a hyperlink (no OSC 8). A URL scheme's `://` is shown
 *   as `[:]//` ("defanged"), so terminals that turn plain-text URLs into clickable links do not.
 *
 * Escapes use `\uXXXX` (uppercase hex) inside the Basic Multilingual Plane and `\u{XXXXX}`
 * beyond it. A backslash in the text is shown as itself, so a sender can type something that
 * looks like an escape: the summary line ("3 bidi controls, 1 escape sequence shown escaped")
 * is authoritative about what was really there.
 *
 * @module
 */

/** The kinds of characters counted in the warning summary. */
export type FindingKind =
  | "escape"
  | "control"
  | "bidi"
  | "invisible"
  | "surrogate"
  | "unassigned"
  | "combining"
  | "tab"
  | "link";

const FINDING_ORDER: readonly FindingKind[] = [
  "escape",
  "control",
  "bidi",
  "invisible",
  "surrogate",
  "unassigned",
  "combining",
  "tab",
];

const FINDING_NAMES: Record<FindingKind, readonly [string, string]> = {
  escape: ["escape sequence", "escape sequences"],
  control: ["control character", "control characters"],
  bidi: ["bidi control", "bidi controls"],
  invisible: ["invisible character", "invisible characters"],
  surrogate: ["lone surrogate", "lone surrogates"],
  unassigned: ["unassigned or private-use character", "unassigned or private-use characters"],
  combining: ["stacked combining mark", "stacked combining marks"],
  tab: ["tab", "tabs"],
  link: ["link defanged", "links defanged"],
};

/**
 * A tally of what rendering escaped or defanged, for the summary warning line.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Findings, safeText } from "./render.ts";
 *
 * const findings = new Findings();
 * safeText("a\u202Eb\u001B[31m", findings);
 * assert.equal(findings.summary(), "warning: 1 escape sequence, 1 bidi control shown escaped");
 * ```
 */
export class Findings {
  readonly #counts = new Map<FindingKind, number>();

  /**
   * Counts `count` occurrences of `kind`.
   *
   * @param kind What was found.
   * @param count How many (default 1).
   */
  add(kind: FindingKind, count = 1): void {
    this.#counts.set(kind, (this.#counts.get(kind) ?? 0) + count);
  }

  /**
   * Adds another tally to this one.
   *
   * @param other The tally to add.
   */
  addAll(other: Findings): void {
    for (const [kind, count] of other.#counts) this.add(kind, count);
  }

  /**
   * How many of `kind` were found.
   *
   * @param kind The kind.
   * @returns The count, 0 when none.
   */
  count(kind: FindingKind): number {
    return this.#counts.get(kind) ?? 0;
  }

  /** Whether anything at all was escaped or defanged. */
  get any(): boolean {
    return this.#counts.size > 0;
  }

  /**
   * The counts as a plain object with only the kinds found (for `--json` output).
   *
   * @returns For example `{ bidi: 3, escape: 1 }`.
   */
  toJSON(): Partial<Record<FindingKind, number>> {
    return Object.fromEntries(this.#counts);
  }

  /**
   * The warning line, or undefined when nothing was found: for example
   * `warning: 3 bidi controls, 1 escape sequence shown escaped; 2 links defanged`.
   *
   * @returns The line, without a line feed.
   */
  summary(): string | undefined {
    const escaped = FINDING_ORDER.filter((kind) => this.count(kind) > 0).map((kind) =>
      phrase(kind, this.count(kind))
    );
    const parts: string[] = [];
    if (escaped.length > 0) parts.push(escaped.join(", ") + " shown escaped");
    if (this.count("link") > 0) parts.push(phrase("link", this.count("link")));
    return parts.length === 0 ? undefined : "warning: " + parts.join("; ");
  }
}

function phrase(kind: FindingKind, count: number): string {
  return `${count} ${FINDING_NAMES[kind][count === 1 ? 0 : 1]}`;
}

// ---------------------------------------------------------------------------------------------
// Classification of single code points

const FORMAT = /^\p{Cf}$/u;
const UNASSIGNED_OR_PRIVATE = /^[\p{Cn}\p{Co}]$/u;
const COMBINING = /^[\p{Mn}\p{Me}]$/u;

/** Combining marks shown in a row before the rest are escaped (Zalgo text). */
const MAX_STACKED_MARKS = 4;

function inRanges(cp: number, ranges: readonly (readonly [number, number])[]): boolean {
  for (const [low, high] of ranges) if (cp >= low && cp <= high) return true;
  return false;
}

const BIDI: readonly (readonly [number, number])[] = [
  [0x061c, 0x061c],
  [0x200e, 0x200f],
  [0x202a, 0x202e],
  [0x2066, 0x2069],
];

// Characters that draw nothing (or only blank space where none is expected) but are not all
// format characters (Cf): some are letters (Hangul fillers) or marks (variation selectors).
const INVISIBLE: readonly (readonly [number, number])[] = [
  [0x00ad, 0x00ad],
  [0x034f, 0x034f],
  [0x115f, 0x1160],
  [0x17b4, 0x17b5],
  [0x180b, 0x180f],
  [0x200b, 0x200d],
  [0x2060, 0x2064],
  [0x2800, 0x2800],
  [0x3164, 0x3164],
  [0xfe00, 0xfe0f],
  [0xfeff, 0xfeff],
  [0xffa0, 0xffa0],
  [0x1d173, 0x1d17a],
  [0xe0000, 0xe007f],
  [0xe0100, 0xe01ef],
];

// East Asian Wide and Fullwidth blocks (UAX #11) and the common emoji blocks: two columns in
// a terminal. Approximate on purpose: it only decides where long lines wrap.
const WIDE: readonly (readonly [number, number])[] = [
  [0x1100, 0x115f],
  [0x2e80, 0x303e],
  [0x3041, 0x33ff],
  [0x3400, 0x4dbf],
  [0x4e00, 0x9fff],
  [0xa000, 0xa4cf],
  [0xac00, 0xd7a3],
  [0xf900, 0xfaff],
  [0xfe30, 0xfe4f],
  [0xff00, 0xff60],
  [0xffe0, 0xffe6],
  [0x1f300, 0x1f64f],
  [0x1f900, 0x1f9ff],
  [0x20000, 0x3fffd],
];

type Danger = Exclude<FindingKind, "escape" | "combining" | "link">;

/** What kind of dangerous character `cp` is (line feed excluded), or undefined when it is safe. */
function classify(cp: number): Danger | undefined {
  if (cp >= 0x20 && cp < 0x7f) return undefined;
  if (cp === 0x09) return "tab";
  if (cp < 0x20 || (cp >= 0x7f && cp <= 0x9f) || cp === 0x2028 || cp === 0x2029) {
    return "control";
  }
  if (cp < 0xa0) return undefined;
  if (inRanges(cp, BIDI)) return "bidi";
  if (cp >= 0xd800 && cp <= 0xdfff) return "surrogate";
  if (inRanges(cp, INVISIBLE)) return "invisible";
  const char = String.fromCodePoint(cp);
  if (FORMAT.test(char)) return "invisible";
  if (UNASSIGNED_OR_PRIVATE.test(char)) return "unassigned";
  return undefined;
}

function isCombining(cp: number): boolean {
  return cp >= 0x300 && COMBINING.test(String.fromCodePoint(cp));
}

/**
 * Terminal columns taken by a safe code point: 0 for combining marks, 2 for wide characters.
 *
 * @param cp The code point.
 * @returns 0, 1 or 2.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { codePointWidth } from "./render.ts";
 *
 * assert.equal(codePointWidth("界".codePointAt(0)!), 2);
 * ```
 */
export function codePointWidth(cp: number): number {
  if (cp < 0x300) return 1;
  if (isCombining(cp)) return 0;
  return inRanges(cp, WIDE) ? 2 : 1;
}

/**
 * The visible escape of a code point: `\t`, `\r`, `\uXXXX` or `\u{XXXXX}`.
 *
 * @param cp The code point.
 * @returns Printable ASCII.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { escapeCodePoint } from "./render.ts";
 *
 * assert.equal(escapeCodePoint(0x202e), "\\u202E");
 * ```
 */
export function escapeCodePoint(cp: number): string {
  if (cp === 0x09) return "\\t";
  if (cp === 0x0d) return "\\r";
  const digits = cp.toString(16).toUpperCase();
  return cp > 0xffff ? `\\u{${digits}}` : "\\u" + digits.padStart(4, "0");
}

// ---------------------------------------------------------------------------------------------
// Tokenising

/** One piece of rendered output; escapes are atomic so wrapping never splits them. */
interface Token {
  readonly text: string;
  readonly width: number;
  /** "break" is a space where a line may wrap; "newline" a real line break. */
  readonly type: "text" | "escape" | "break" | "newline";
}

/** How line feeds are shown. */
export type NewlineMode = "keep" | "escape" | "space";

/** Options of the rendering functions. */
export interface RenderOptions {
  /**
   * `keep`: a line feed (or CRLF) is a real line break (multi-line text). `escape`: shown as
   * `\n` (one-line fields). `space`: shown as a space (previews). Default `escape`.
   */
  readonly newlines?: NewlineMode;
  /** Show `scheme://` as `scheme[:]//`. Default true. */
  readonly defang?: boolean;
}

const ST = 0x9c;
const ESC = 0x1b;
const BEL = 0x07;
/** Control strings (ECMA-48 §5.6) after ESC: OSC `]`, DCS `P`, SOS `X`, PM `^`, APC `_`. */
const STRING_INTRODUCERS = new Set([0x5d, 0x50, 0x58, 0x5e, 0x5f]);
/** Their C1 forms, and CSI U+009B. */
const C1_STRING_INTRODUCERS = new Set([0x9d, 0x90, 0x98, 0x9e, 0x9f]);
const C1_CSI = 0x9b;
/** Longest control string scanned as one sequence; beyond that, the rest is plain text. */
const MAX_CONTROL_STRING = 4096;

/**
 * The end (exclusive, in UTF-16 units) of the escape sequence starting at `start`, or undefined
 * when no escape sequence starts there.
 */
function sequenceEnd(text: string, start: number): number | undefined {
  const first = text.charCodeAt(start);
  let i: number;
  let kind: "csi" | "string" | "short";
  if (first === ESC) {
    const next = text.charCodeAt(start + 1);
    if (next === 0x5b) {
      kind = "csi";
      i = start + 2;
    } else if (STRING_INTRODUCERS.has(next)) {
      kind = "string";
      i = start + 2;
    } else {
      kind = "short";
      i = start + 1;
    }
  } else if (first === C1_CSI) {
    kind = "csi";
    i = start + 1;
  } else if (C1_STRING_INTRODUCERS.has(first)) {
    kind = "string";
    i = start + 1;
  } else {
    return undefined;
  }
  const at = (index: number) => index < text.length ? text.charCodeAt(index) : -1;
  if (kind === "csi") {
    // ECMA-48 §5.4: parameter bytes 0x30–0x3F, intermediate bytes 0x20–0x2F, one final byte.
    while (at(i) >= 0x30 && at(i) <= 0x3f) i++;
    while (at(i) >= 0x20 && at(i) <= 0x2f) i++;
    if (at(i) >= 0x40 && at(i) <= 0x7e) i++;
    return i;
  }
  if (kind === "string") {
    const limit = Math.min(text.length, start + MAX_CONTROL_STRING);
    while (i < limit) {
      const c = text.charCodeAt(i);
      if (c === BEL || c === ST) return i + 1;
      if (c === ESC) return at(i + 1) === 0x5c ? i + 2 : i; // ST as ESC \
      i++;
    }
    return i;
  }
  // ESC with intermediates then a final byte (ECMA-35 / ECMA-48 §5.3), or a lone ESC.
  while (at(i) >= 0x20 && at(i) <= 0x2f) i++;
  if (at(i) >= 0x30 && at(i) <= 0x7e) i++;
  return i;
}

const URL_SCHEME = /[A-Za-z][A-Za-z0-9+.-]{0,31}:\/\//g;

function tokenize(text: string, findings: Findings, options: RenderOptions): Token[] {
  const newlines = options.newlines ?? "escape";
  if (options.defang ?? true) {
    text = text.replace(URL_SCHEME, (match) => {
      findings.add("link");
      return match.slice(0, -3) + "[:]//";
    });
  }
  const tokens: Token[] = [];
  let sequenceUntil = -1;
  let marks = 0;
  for (let i = 0; i < text.length;) {
    const cp = text.codePointAt(i)!;
    const units = cp > 0xffff ? 2 : 1;
    if (i >= sequenceUntil) {
      const end = sequenceEnd(text, i);
      if (end !== undefined) {
        sequenceUntil = end;
        findings.add("escape");
      }
    }
    const inSequence = i < sequenceUntil;
    i += units;
    if (cp === 0x0a || (cp === 0x0d && text.charCodeAt(i) === 0x0a && !inSequence)) {
      if (cp === 0x0d) i++; // CRLF is one line break
      marks = 0;
      if (inSequence || newlines === "escape") {
        tokens.push({ text: "\\n", width: 2, type: "escape" });
      } else if (newlines === "space") tokens.push({ text: " ", width: 1, type: "break" });
      else tokens.push({ text: "\n", width: 0, type: "newline" });
      continue;
    }
    const danger = classify(cp);
    if (danger !== undefined) {
      // Inside an escape sequence its own controls (ESC, BEL, ST) are part of the one finding.
      if (!(inSequence && danger === "control")) findings.add(danger);
      const escaped = escapeCodePoint(cp);
      tokens.push({ text: escaped, width: escaped.length, type: "escape" });
      marks = 0;
      continue;
    }
    if (isCombining(cp)) {
      marks++;
      if (marks > MAX_STACKED_MARKS) {
        findings.add("combining");
        const escaped = escapeCodePoint(cp);
        tokens.push({ text: escaped, width: escaped.length, type: "escape" });
        continue;
      }
      tokens.push({ text: String.fromCodePoint(cp), width: 0, type: "text" });
      continue;
    }
    marks = 0;
    if (cp === 0x20) tokens.push({ text: " ", width: 1, type: "break" });
    else tokens.push({ text: String.fromCodePoint(cp), width: codePointWidth(cp), type: "text" });
  }
  return tokens;
}

/**
 * Renders untrusted text as inert, visible text on one logical run (no wrapping). Counts what
 * it escaped into `findings`.
 *
 * @param text The untrusted text.
 * @param findings Where to count escapes (a throwaway tally by default).
 * @param options Line feed handling and defanging.
 * @returns Text holding no character a terminal would interpret or hide (line feeds only with
 *   `newlines: "keep"`).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { safeText } from "./render.ts";
 *
 * assert.equal(safeText("evil\u202Etxt.exe"), "evil\\u202Etxt.exe");
 * assert.equal(safeText("see https://example.com"), "see https[:]//example.com");
 * ```
 */
export function safeText(
  text: string,
  findings: Findings = new Findings(),
  options: RenderOptions = {},
): string {
  return tokenize(text, findings, options).map((token) => token.text).join("");
}

/**
 * Display width in terminal columns of text that is already safe (from {@linkcode safeText}).
 *
 * @param safe Safe text without line feeds.
 * @returns Columns.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { displayWidth } from "./render.ts";
 *
 * assert.equal(displayWidth("ab界"), 4);
 * ```
 */
export function displayWidth(safe: string): number {
  let width = 0;
  for (const char of safe) width += codePointWidth(char.codePointAt(0)!);
  return width;
}

/**
 * Cuts safe one-line text to at most `width` columns, ending with `…` when cut.
 *
 * @param safe Safe text without line feeds.
 * @param width Columns available (at least 1).
 * @returns The text, fitting.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { truncate } from "./render.ts";
 *
 * assert.equal(truncate("abcdef", 4), "abc…");
 * ```
 */
export function truncate(safe: string, width: number): string {
  if (displayWidth(safe) <= width) return safe;
  let out = "";
  let used = 0;
  for (const char of safe) {
    const w = codePointWidth(char.codePointAt(0)!);
    if (used + w > width - 1) break;
    out += char;
    used += w;
  }
  return out + "…";
}

/**
 * Renders untrusted text as one safe line of at most `width` columns: line feeds and runs of
 * spaces become single spaces, and when cut it ends with `…`, never in the middle of an escape.
 *
 * @param text The untrusted text.
 * @param width Columns available (at least 2).
 * @param findings Where to count escapes.
 * @param options Defanging (line feeds are always spaces here).
 * @returns The excerpt.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { safeExcerpt } from "./render.ts";
 *
 * assert.equal(safeExcerpt("Hello\n\nworld, and more", 12), "Hello world…");
 * ```
 */
export function safeExcerpt(
  text: string,
  width: number,
  findings: Findings = new Findings(),
  options: RenderOptions = {},
): string {
  const tokens = tokenize(text, findings, { ...options, newlines: "space" });
  const kept: Token[] = [];
  let used = 0;
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i];
    // Runs of spaces become one, and leading spaces go.
    if (token.type === "break" && (kept.length === 0 || kept.at(-1)!.type === "break")) continue;
    if (used + token.width > width) {
      if (tokens.slice(i).every((t) => t.type === "break")) break;
      // Make room for the ellipsis, dropping whole tokens only.
      while (kept.length > 0 && used + 1 > width) used -= kept.pop()!.width;
      return kept.map((t) => t.text).join("").trimEnd() + "…";
    }
    kept.push(token);
    used += token.width;
  }
  return kept.map((t) => t.text).join("").trimEnd();
}

/** Options of {@linkcode safeBlock}. */
export interface BlockOptions extends RenderOptions {
  /** Total columns per output line, indentation included (at least 20). */
  readonly width: number;
  /** Prefix of every output line (default ""). */
  readonly indent?: string;
  /** Prefix of wrapped continuation lines (default: `indent`). */
  readonly continuation?: string;
}

/**
 * Renders untrusted multi-line text safely and wraps it: line feeds stay line breaks (unless
 * `newlines` says otherwise), long lines wrap at spaces when possible and hard otherwise, and
 * escapes are never split.
 *
 * @param text The untrusted text.
 * @param findings Where to count escapes.
 * @param options Width, indentation, line feed handling and defanging.
 * @returns The output lines, without line feeds.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Findings, safeBlock } from "./render.ts";
 *
 * assert.deepEqual(safeBlock("one two three", new Findings(), { width: 20, indent: "> " }), [
 *   "> one two three",
 * ]);
 * ```
 */
export function safeBlock(text: string, findings: Findings, options: BlockOptions): string[] {
  const tokens = tokenize(text, findings, { newlines: "keep", ...options });
  const indent = options.indent ?? "";
  const continuation = options.continuation ?? indent;
  const lines: string[] = [];
  let current: Token[] = [];
  const flush = () => {
    lines.push(...wrapTokens(current, options.width, indent, continuation));
    current = [];
  };
  for (const token of tokens) {
    if (token.type === "newline") flush();
    else current.push(token);
  }
  flush();
  return lines;
}

function wrapTokens(
  tokens: Token[],
  width: number,
  indent: string,
  continuation: string,
): string[] {
  const out: string[] = [];
  let prefix = indent;
  let line: Token[] = [];
  let used = 0;
  const room = () => Math.max(10, width - displayWidth(prefix));
  const emit = (tokens: Token[]) => {
    let end = tokens.length;
    while (end > 0 && tokens[end - 1].type === "break") end--; // no trailing spaces
    out.push(prefix + tokens.slice(0, end).map((token) => token.text).join(""));
    prefix = continuation;
  };
  for (const token of tokens) {
    if (used + token.width > room() && line.length > 0) {
      if (token.type === "break") {
        emit(line);
        line = [];
        used = 0;
        continue; // the space becomes the line break
      }
      // Break after the last space when it leaves a reasonably full line; otherwise hard.
      let cut = -1;
      for (let i = line.length - 1; i > 0; i--) {
        if (line[i].type === "break") {
          cut = i;
          break;
        }
      }
      const cutWidth = cut < 0 ? 0 : line.slice(0, cut).reduce((sum, t) => sum + t.width, 0);
      if (cut > 0 && cutWidth >= room() / 2) {
        emit(line.slice(0, cut));
        line = line.slice(cut + 1);
      } else {
        emit(line);
        line = [];
      }
      used = line.reduce((sum, t) => sum + t.width, 0);
    }
    line.push(token);
    used += token.width;
  }
  if (line.length > 0 || out.length === 0) emit(line);
  return out;
}

/**
 * `JSON.stringify`, then every character {@linkcode safeText} would escape is written as a
 * JSON `\uXXXX` escape (astral ones as a UTF-16 surrogate pair, RFC 8259 §7). The result parses
 * to exactly the same value, but printing it to a terminal (`cat export.ndjson`) is harmless:
 * raw bidi controls, zero-width characters and the like never appear, only their escapes.
 * (C0 controls are already escaped by `JSON.stringify` itself.)
 *
 * @param value A JSON value.
 * @param space Indentation, as for `JSON.stringify`.
 * @returns JSON text.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { safeJson } from "./render.ts";
 *
 * assert.equal(safeJson({ subject: "a\u202Eb" }), '{"subject":"a\\u202eb"}');
 * ```
 */
export function safeJson(value: unknown, space?: number): string {
  const json = JSON.stringify(value, null, space);
  let out = "";
  let start = 0;
  let marks = 0;
  for (let i = 0; i < json.length;) {
    const cp = json.codePointAt(i)!;
    const units = cp > 0xffff ? 2 : 1;
    let escape = false;
    if (cp >= 0x80 || cp < 0x20 && cp !== 0x0a) {
      escape = classify(cp) !== undefined;
      if (!escape && isCombining(cp)) escape = ++marks > MAX_STACKED_MARKS;
      else if (!isCombining(cp)) marks = 0;
    } else {
      marks = 0;
    }
    if (escape) {
      out += json.slice(start, i);
      for (let unit = 0; unit < units; unit++) {
        out += "\\u" + json.charCodeAt(i + unit).toString(16).padStart(4, "0");
      }
      start = i + units;
    }
    i += units;
  }
  return out + json.slice(start);
}

/**
 * Whether output text is safe to write to a terminal: no character {@linkcode safeText} would
 * escape, except line feeds. The writer of the review tool passes everything through
 * {@linkcode sanitizeOutput}, so this holds for all its output; tests check it independently.
 *
 * @param text Output text.
 * @returns True when nothing dangerous is left.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { isSafeOutput } from "./render.ts";
 *
 * assert.ok(isSafeOutput("fine\n"));
 * assert.ok(!isSafeOutput("\u001B[2J"));
 * ```
 */
export function isSafeOutput(text: string): boolean {
  for (let i = 0; i < text.length;) {
    const cp = text.codePointAt(i)!;
    if (cp !== 0x0a && classify(cp) !== undefined) return false;
    i += cp > 0xffff ? 2 : 1;
  }
  return true;
}

/**
 * The last line of defence of the review tool's writer: escapes anything dangerous that is
 * still in `text`, keeping line feeds. The identity on text that is already safe, so rendered
 * output is never escaped twice.
 *
 * @param text Text about to be written.
 * @returns Safe text.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { sanitizeOutput } from "./render.ts";
 *
 * assert.equal(sanitizeOutput("ok\n\u001B]0;title\u0007"), "ok\n\\u001B]0;title\\u0007");
 * ```
 */
export function sanitizeOutput(text: string): string {
  if (isSafeOutput(text)) return text;
  return safeText(text, new Findings(), { newlines: "keep", defang: false });
}
