/**
 * Minimal command line flags for the bench scripts: `--name=value`, `--name value` and boolean
 * `--name`. Kept local so the benchmark adds no dependency to the project's import map.
 *
 * @module
 */

/** Parsed flags: string values, `true` for bare booleans. */
export type Flags = Record<string, string | true>;

/**
 * Parses `--name=value`, `--name value` and `--flag` arguments.
 *
 * @example
 * ```ts
 * const flags = parseFlags(["--rounds=3", "--only", "echo,sdk", "--strict"]);
 * // { rounds: "3", only: "echo,sdk", strict: true }
 * ```
 */
export function parseFlags(args: readonly string[], booleans: readonly string[] = []): Flags {
  const flags: Flags = {};
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (!arg.startsWith("--")) throw new Error(`Cannot parse argument: ${arg} is not a --flag`);
    const eq = arg.indexOf("=");
    if (eq !== -1) {
      flags[arg.slice(2, eq)] = arg.slice(eq + 1);
      continue;
    }
    const name = arg.slice(2);
    const next = args[i + 1];
    // A known boolean never swallows the next word, so `--strict --only=x` parses as meant.
    if (booleans.includes(name) || next === undefined || next.startsWith("--")) {
      flags[name] = true;
    } else {
      flags[name] = next;
      i++;
    }
  }
  return flags;
}

/** A string flag, or the fallback when absent. */
export function stringFlag(flags: Flags, name: string, fallback: string): string {
  const value = flags[name];
  if (value === undefined) return fallback;
  if (value === true) throw new Error(`Cannot read --${name}: it needs a value`);
  return value;
}

/** A positive number flag, or the fallback when absent. */
export function numberFlag(flags: Flags, name: string, fallback: number): number {
  const raw = stringFlag(flags, name, String(fallback));
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0) {
    throw new Error(`Cannot read --${name}: ${raw} is not a positive number`);
  }
  return value;
}

/** A boolean flag: present (or `=true`) means on. */
export function booleanFlag(flags: Flags, name: string): boolean {
  const value = flags[name];
  return value === true || value === "true" || value === "1";
}

/** A number flag that may be zero (a pause, a wait), or the fallback when absent. */
export function nonNegativeFlag(flags: Flags, name: string, fallback: number): number {
  const raw = stringFlag(flags, name, String(fallback));
  const value = Number(raw);
  if (!Number.isFinite(value) || value < 0) {
    throw new Error(`Cannot read --${name}: ${raw} is not a number of zero or more`);
  }
  return value;
}
