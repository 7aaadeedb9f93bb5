/**
 * Untrusted text cut into inert tokens: plain characters, escapes (a dangerous character shown
 * as `\uXXXX`, atomic so wrapping never splits one), spaces where a line may wrap, and line
 * breaks. Every other rendering (layout.ts, the console's segments) is built from these, so
 * there is one place where a character is judged.
 *
 * @module
 */
import {
  classify,
  emojiSequenceAt,
  escapeCodePoint,
  isCombining,
  lookAlikeLetters,
  MAX_STACKED_MARKS,
} from "./classify.ts";
import { sequenceEnd } from "./ecma48.ts";
import type { FindingKind, Findings } from "./findings.ts";
import { codePointWidth } from "./width.ts";

/** One piece of rendered output. */
export interface Token {
  /** Safe text. */
  readonly text: string;
  /** Terminal columns. */
  readonly width: number;
  /** "break" is a space where a line may wrap; "newline" a real line break. */
  readonly type: "text" | "escape" | "break" | "newline";
  /** For an escape: what it escaped. */
  readonly kind?: FindingKind;
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

const URL_SCHEME = /[A-Za-z][A-Za-z0-9+.-]{0,31}:\/\//g;

function escapeToken(cp: number, kind: FindingKind): Token {
  const text = escapeCodePoint(cp);
  return { text, width: text.length, type: "escape", kind };
}

/**
 * Tokenises untrusted text, counting what it escaped into `findings`.
 *
 * @param text The untrusted text.
 * @param findings Where to count.
 * @param options Line feed handling and defanging.
 * @returns The tokens.
 */
export function tokenize(text: string, findings: Findings, options: RenderOptions): Token[] {
  const newlines = options.newlines ?? "escape";
  if (options.defang ?? true) {
    text = text.replace(URL_SCHEME, (match) => {
      findings.add("link");
      return match.slice(0, -3) + "[:]//";
    });
  }
  const tokens: Token[] = [];
  const lookAlike = lookAlikeLetters(text);
  let sequenceUntil = -1;
  let marks = 0;
  for (let i = 0; i < text.length;) {
    if (i >= sequenceUntil) {
      const end = sequenceEnd(text, i);
      if (end !== undefined) {
        sequenceUntil = end;
        findings.add("escape");
      } else {
        const emoji = emojiSequenceAt(text, i);
        if (emoji > 0) {
          tokens.push({ text: text.slice(i, i + emoji), width: 2, type: "text" });
          i += emoji;
          marks = 0;
          continue;
        }
      }
    }
    const cp = text.codePointAt(i)!;
    const inSequence = i < sequenceUntil;
    i += cp > 0xffff ? 2 : 1;
    if (cp === 0x0a || (cp === 0x0d && text.charCodeAt(i) === 0x0a && !inSequence)) {
      if (cp === 0x0d) i++; // CRLF is one line break
      marks = 0;
      if (inSequence || newlines === "escape") {
        tokens.push({ text: "\\n", width: 2, type: "escape", kind: "control" });
      } else if (newlines === "space") tokens.push({ text: " ", width: 1, type: "break" });
      else tokens.push({ text: "\n", width: 0, type: "newline" });
      continue;
    }
    const danger = classify(cp);
    if (danger !== undefined) {
      // Inside an escape sequence its own controls (ESC, BEL, ST) are part of the one finding.
      if (!(inSequence && danger === "control")) findings.add(danger);
      tokens.push(escapeToken(cp, inSequence ? "escape" : danger));
      marks = 0;
      continue;
    }
    if (isCombining(cp)) {
      marks++;
      if (marks > MAX_STACKED_MARKS) {
        findings.add("combining");
        tokens.push(escapeToken(cp, "combining"));
        continue;
      }
      tokens.push({ text: String.fromCodePoint(cp), width: 0, type: "text" });
      continue;
    }
    marks = 0;
    if (lookAlike.has(i - (cp > 0xffff ? 2 : 1))) {
      findings.add("confusable");
      tokens.push(escapeToken(cp, "confusable"));
      continue;
    }
    if (cp === 0x20) tokens.push({ text: " ", width: 1, type: "break" });
    else tokens.push({ text: String.fromCodePoint(cp), width: codePointWidth(cp), type: "text" });
  }
  return tokens;
}

/**
 * The length of the run starting at `index` that {@linkcode tokenize} would leave as it is
 * (one code point, or a whole emoji sequence), or 0 when it would escape the code point there.
 * Line feeds count as safe. For writers that check or escape text without tokenising it.
 *
 * @param text The text.
 * @param index Where to look.
 * @returns UTF-16 units that are safe, or 0.
 */
export function safeRunAt(text: string, index: number): number {
  const emoji = emojiSequenceAt(text, index);
  if (emoji > 0) return emoji;
  const cp = text.codePointAt(index)!;
  if (cp !== 0x0a && classify(cp) !== undefined) return 0;
  return cp > 0xffff ? 2 : 1;
}
