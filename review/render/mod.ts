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
 * - **Look-alike letters**: in a word mixing Latin with Cyrillic, Greek or Armenian letters
 *   (`pаypal` with a Cyrillic а; UTS #39 mixed-script confusables), the non-Latin letters are
 *   escaped; a word in one script is shown as it is.
 * - **Emoji sequences**: a standard emoji sequence (UTS #51 `RGI_Emoji`: ZWJ families, flags,
 *   skin tones, keycaps, presentation selectors, subdivision flags) is shown as it is; the same
 *   joiners and selectors alone or misplaced are still escaped (render/classify.ts).
 *
 * Escapes use `\uXXXX` (uppercase hex) inside the Basic Multilingual Plane and `\u{XXXXX}`
 * beyond it. A backslash in the text is shown as itself, so a sender can type something that
 * looks like an escape: the summary line ("3 bidi controls, 1 escape sequence shown escaped")
 * is authoritative about what was really there.
 *
 * The parts, one idea each, under render/: `findings.ts` (the tally), `classify.ts` (code
 * points and emoji sequences), `width.ts` (terminal columns, UAX #11), `ecma48.ts` (the escape
 * sequence scanner), `tokens.ts` (text to inert tokens), `layout.ts` (runs, excerpts, wrapped
 * blocks, console segments) and `json_output.ts` (JSON and output safety). This module is
 * their one way in.
 *
 * @module
 */

export { type FindingKind, Findings } from "./findings.ts";
export { classify, escapeCodePoint } from "./classify.ts";
export { codePointWidth, displayWidth } from "./width.ts";
export type { NewlineMode, RenderOptions } from "./tokens.ts";
export {
  type BlockOptions,
  safeBlock,
  safeExcerpt,
  safeSegments,
  safeText,
  type Segment,
} from "./layout.ts";
export { isSafeOutput, safeJson, sanitizeOutput } from "./json_output.ts";
