/**
 * Layout of rendered text: one inert run (`safeText`), a one-line excerpt cut to a width
 * (`safeExcerpt`), and wrapped multi-line blocks with prefixes (`safeBlock`), for the terminal;
 * the same blocks as segments (`safeSegments`) for the web console, which shows each segment
 * with `textContent` and styles the escapes.
 *
 * @module
 */
import { Findings } from "./findings.ts";
import { type RenderOptions, type Token, tokenize } from "./tokens.ts";
import { displayWidth } from "./width.ts";

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
 * import { safeText } from "./mod.ts";
 * safeText("evil\u202Etxt.exe"); // "evil\\u202Etxt.exe"
 * safeText("see https://example.com"); // "see https[:]//example.com"
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
 * import { safeExcerpt } from "./mod.ts";
 * safeExcerpt("Hello\n\nworld, and more", 12); // "Hello world…"
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
 * import { Findings, safeBlock } from "./mod.ts";
 * safeBlock("one two three", new Findings(), { width: 20, indent: "> " }); // ["> one two three"]
 * ```
 */
export function safeBlock(text: string, findings: Findings, options: BlockOptions): string[] {
  return safeSegments(text, findings, options).map((line) =>
    line.map((segment) => segment.text).join("")
  );
}

/** A piece of a rendered line: the tool's own prefix, safe text, or an escape. */
export interface Segment {
  /** Safe text to show as it is. */
  readonly text: string;
  /** `prefix` for the tool's own line prefix, `escape` for a shown escape, else absent. */
  readonly kind?: "prefix" | "escape";
}

/**
 * {@linkcode safeBlock} as segments, for a page that shows each with `textContent`.
 *
 * @param text The untrusted text.
 * @param findings Where to count escapes.
 * @param options Width, indentation, line feed handling and defanging.
 * @returns The lines, each a list of segments.
 */
export function safeSegments(
  text: string,
  findings: Findings,
  options: BlockOptions,
): Segment[][] {
  const tokens = tokenize(text, findings, { newlines: "keep", ...options });
  const indent = options.indent ?? "";
  const continuation = options.continuation ?? indent;
  const lines: Segment[][] = [];
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
): Segment[][] {
  const out: Segment[][] = [];
  let prefix = indent;
  let line: Token[] = [];
  let used = 0;
  const room = () => Math.max(10, width - displayWidth(prefix));
  const emit = (tokens: Token[]) => {
    let end = tokens.length;
    while (end > 0 && tokens[end - 1].type === "break") end--; // no trailing spaces
    out.push([
      ...(prefix === "" ? [] : [{ text: prefix, kind: "prefix" as const }]),
      ...segmentsOf(tokens.slice(0, end)),
    ]);
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

/** Adjacent tokens of one sort joined: plain text runs, and each escape on its own. */
function segmentsOf(tokens: readonly Token[]): Segment[] {
  const out: Segment[] = [];
  let run = "";
  for (const token of tokens) {
    if (token.type === "escape") {
      if (run !== "") out.push({ text: run });
      run = "";
      out.push({ text: token.text, kind: "escape" });
    } else run += token.text;
  }
  if (run !== "") out.push({ text: run });
  return out;
}
