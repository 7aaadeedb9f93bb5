/**
 * The tally of what rendering escaped or defanged, and its summary warning line: what a
 * reviewer reads to know what was really in a submission (a backslash is shown as itself, so
 * the tally, not the look of the text, is authoritative).
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
  | "confusable"
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
  "confusable",
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
  confusable: [
    "look-alike letter in a mixed-script word",
    "look-alike letters in mixed-script words",
  ],
  link: ["link defanged", "links defanged"],
};

/**
 * A tally of what rendering escaped or defanged, for the summary warning line.
 *
 * @example
 * ```ts
 * import { Findings, safeText } from "./mod.ts";
 * const findings = new Findings();
 * safeText("a\u202Eb\u001B[31m", findings);
 * import { assertStrictEquals } from "../../tests/support/assert.ts";
 * assertStrictEquals(findings.summary(), "warning: 1 escape sequence, 1 bidi control shown escaped");
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
