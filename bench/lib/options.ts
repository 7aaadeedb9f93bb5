/**
 * Command line options for the bench scripts, through `node:util`'s `parseArgs` (strict: an
 * unknown flag or a missing value is an error, not a silent default), plus the number checks
 * every script needs.
 *
 * @module
 */

import { parseArgs } from "node:util";

/** What `parseArgs` accepts for one option; every option here is a string or a boolean. */
export type OptionSpec = Record<string, { type: "string" | "boolean"; default?: string | boolean }>;

/**
 * Parses `--name=value`, `--name value` and boolean `--name` arguments against `spec`.
 *
 * @example
 * ```ts
 * const values = parseOptions(["--rounds=3", "--strict"], {
 *   rounds: { type: "string", default: "1" },
 *   strict: { type: "boolean", default: false },
 * });
 * if (values.rounds !== "3" || values.strict !== true) throw new Error("unexpected parse");
 * ```
 */
export function parseOptions<S extends OptionSpec>(
  args: readonly string[],
  spec: S,
): { [K in keyof S]: S[K]["type"] extends "boolean" ? boolean : string | undefined } {
  try {
    const { values } = parseArgs({ args: [...args], options: spec, strict: true });
    return values as never;
  } catch (error) {
    throw new Error(`Cannot parse the arguments: ${(error as Error).message}`);
  }
}

function toNumber(
  raw: string | undefined,
  name: string,
  fallback: number,
  zeroAllowed: boolean,
): number {
  if (raw === undefined) return fallback;
  const value = Number(raw);
  const ok = raw.trim() !== "" && Number.isFinite(value) && (zeroAllowed ? value >= 0 : value > 0);
  if (!ok) {
    const what = zeroAllowed ? "a number of zero or more" : "a positive number";
    throw new Error(`Cannot read --${name}: ${raw} is not ${what}`);
  }
  return value;
}

/** A positive number option, or `fallback` when absent. */
export function positive(raw: string | undefined, name: string, fallback: number): number {
  return toNumber(raw, name, fallback, false);
}

/** A number option that may be zero (a pause, a wait), or `fallback` when absent. */
export function nonNegative(raw: string | undefined, name: string, fallback: number): number {
  return toNumber(raw, name, fallback, true);
}
