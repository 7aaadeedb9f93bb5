/**
 * Command line parsing for the review tool, with `node:util` `parseArgs` (strict: unknown
 * options and missing values are usage errors, exit status 2), and the shared filters.
 *
 * @module
 */
import { parseArgs, type ParseArgsConfig } from "node:util";
import { CliError } from "../io.ts";
import { type Filters, REVIEW_STATUSES, type ReviewStatus } from "../data/queries.ts";

/** Options every command accepts. */
export const COMMON_OPTIONS = {
  database: { type: "string" },
  width: { type: "string" },
  help: { type: "boolean", short: "h" },
} as const satisfies ParseArgsConfig["options"];

/** The filter options of `list`, `export` and `stats`. */
export const FILTER_OPTIONS = {
  since: { type: "string" },
  until: { type: "string" },
  kind: { type: "string" },
  surface: { type: "string" },
  key: { type: "string" },
  unreviewed: { type: "boolean" },
  status: { type: "string" },
  intent: { type: "string" },
  sender: { type: "string" },
  source: { type: "string" },
  signed: { type: "boolean" },
  unsigned: { type: "boolean" },
} as const satisfies ParseArgsConfig["options"];

/** Values as `parseArgs` returns them. */
export type OptionValues = Record<string, string | boolean | string[] | boolean[] | undefined>;

/**
 * Rewrites the command line so that receipt ids and option values may start with `-`: receipt
 * ids are base64url (RFC 4648 §5), and one in 64 begins with `-`, which `parseArgs` would take
 * for an option. A string option's value is joined to it (`--note=-1`), a token with one dash
 * that is not a known short option is a positional, and everything goes after `--`.
 *
 * @param args The command line after the command name.
 * @param options The options the command knows.
 * @returns Equivalent arguments that `parseArgs` reads the intended way.
 * @throws {CliError} Exit status 2 when a string option is last, without its value.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { normaliseArgs } from "./options.ts";
 *
 * assert.deepEqual(
 *   normaliseArgs(["-AbC", "--note", "-x"], { note: { type: "string" } }),
 *   ["--note=-x", "--", "-AbC"],
 * );
 * ```
 */
export function normaliseArgs(
  args: readonly string[],
  options: NonNullable<ParseArgsConfig["options"]>,
): string[] {
  const shorts = new Set(
    Object.values(options).flatMap((option) => option.short === undefined ? [] : [option.short]),
  );
  const flags: string[] = [];
  const positionals: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (arg === "--") {
      positionals.push(...args.slice(i + 1));
      break;
    }
    if (arg.startsWith("--")) {
      const name = arg.slice(2);
      if (!name.includes("=") && options[name]?.type === "string") {
        if (i + 1 >= args.length) throw new CliError(`Cannot parse ${arg}: it needs a value`, 2);
        flags.push(`${arg}=${args[++i]}`);
      } else flags.push(arg);
    } else if (arg.length === 2 && arg[0] === "-" && shorts.has(arg[1])) flags.push(arg);
    else positionals.push(arg);
  }
  return [...flags, "--", ...positionals];
}

/**
 * Parses a command's arguments.
 *
 * @param args The arguments after the command name.
 * @param options The command's own options (the common ones are added).
 * @param positionals How many positional arguments the command takes (`Infinity`: any number).
 * @returns Option values and positionals.
 * @throws {CliError} Exit status 2 for any usage error.
 */
export function parseCommand(
  args: string[],
  options: NonNullable<ParseArgsConfig["options"]>,
  positionals = 0,
): { values: OptionValues; positionals: string[] } {
  const all = { ...COMMON_OPTIONS, ...options };
  let parsed;
  try {
    parsed = parseArgs({
      args: normaliseArgs(args, all),
      options: all,
      allowPositionals: positionals > 0,
      strict: true,
    });
  } catch (error) {
    throw new CliError(`Cannot parse the arguments: ${(error as Error).message}`, 2);
  }
  if (parsed.positionals.length > positionals) {
    throw new CliError("Cannot parse the arguments: too many arguments", 2);
  }
  return { values: parsed.values as OptionValues, positionals: parsed.positionals };
}

function text(values: OptionValues, name: string): string | undefined {
  const value = values[name];
  return typeof value === "string" ? value : undefined;
}

/**
 * A positive integer option.
 *
 * @param values Parsed values.
 * @param name Option name.
 * @param fallback Default.
 * @param max Largest accepted.
 * @returns The integer.
 * @throws {CliError} Exit status 2 when it is not an integer in 1..max.
 */
export function integerOption(
  values: OptionValues,
  name: string,
  fallback: number,
  max: number,
): number {
  const value = text(values, name);
  if (value === undefined) return fallback;
  if (!/^[0-9]{1,9}$/.test(value) || Number(value) < 1 || Number(value) > max) {
    throw new CliError(`Cannot parse --${name}: it must be an integer from 1 to ${max}`, 2);
  }
  return Number(value);
}

const DATE_TIME =
  /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,3}))?)?)?(Z|[+-]\d{2}:\d{2})?$/;
const RELATIVE = /^(\d{1,6})([mhd])$/;
const UNIT_MS = { m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/**
 * Parses `--since`: an ISO 8601 date (`2025-06-01`, midnight UTC), date and time
 * (`2025-06-01T08:30`, `2025-06-01 08:30:00Z`, `2025-06-01T08:30+02:00`; UTC when no offset is
 * given), or a duration back from now (`90m`, `24h`, `7d`).
 *
 * @param value The option text.
 * @param now Current time in epoch milliseconds.
 * @returns The instant as `toISOString()` text, comparable with stored times.
 * @throws {CliError} Exit status 2 when it is none of these.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseSince } from "./options.ts";
 *
 * assert.equal(parseSince("2025-06-01", Date.now()), "2025-06-01T00:00:00.000Z");
 * ```
 */
export function parseSince(value: string, now: number): string {
  const relative = RELATIVE.exec(value);
  if (relative !== null) {
    return new Date(now - Number(relative[1]) * UNIT_MS[relative[2] as "m" | "h" | "d"])
      .toISOString();
  }
  const match = DATE_TIME.exec(value);
  const fail = () =>
    new CliError(
      "Cannot parse --since: use a date (2025-06-01), a date and time (2025-06-01T08:30Z) " +
        "or a duration (24h, 7d)",
      2,
    );
  if (match === null) throw fail();
  const [, year, month, day, hour = "00", minute = "00", second = "00", fraction = "0"] = match;
  const offset = match[8] ?? "Z";
  // Date.UTC rolls 31 February over into March; a date that does not round-trip is refused.
  const check = new Date(Date.UTC(Number(year), Number(month) - 1, Number(day)));
  if (
    check.getUTCMonth() !== Number(month) - 1 || check.getUTCDate() !== Number(day) ||
    Number(hour) > 23 || Number(minute) > 59 || Number(second) > 59
  ) {
    throw fail();
  }
  const iso = `${year}-${month}-${day}T${hour}:${minute}:${second}.${fraction.padEnd(3, "0")}` +
    offset;
  const time = Date.parse(iso);
  if (Number.isNaN(time)) throw fail();
  return new Date(time).toISOString();
}

function oneOf<T extends string>(
  values: OptionValues,
  name: string,
  allowed: readonly T[],
): T | undefined {
  const value = text(values, name);
  if (value === undefined) return undefined;
  if (!(allowed as readonly string[]).includes(value)) {
    throw new CliError(`Cannot parse --${name}: it must be one of ${allowed.join(", ")}`, 2);
  }
  return value as T;
}

/**
 * A review status option.
 *
 * @param values Parsed values.
 * @param name Option name.
 * @returns The status, or undefined when absent.
 * @throws {CliError} Exit status 2 for another value.
 */
export function statusOption(values: OptionValues, name: string): ReviewStatus | undefined {
  return oneOf(values, name, REVIEW_STATUSES);
}

/**
 * A signer key fingerprint prefix: hex digits, with or without `sha256:`.
 *
 * @param value The option text.
 * @returns Lowercase hex digits.
 * @throws {CliError} Exit status 2 for anything else.
 */
export function parseKeyPrefix(value: string): string {
  const hexDigits = value.toLowerCase().replace(/^sha256:/, "");
  if (!/^[0-9a-f]{1,64}$/.test(hexDigits)) {
    throw new CliError(
      "Cannot parse --key: give hex digits of the key fingerprint (sha256:… or a prefix)",
      2,
    );
  }
  return hexDigits;
}

/**
 * The filters from parsed options.
 *
 * @param values Parsed values.
 * @param now Current time, for relative `--since`.
 * @returns The filters.
 * @throws {CliError} Exit status 2 for invalid values.
 */
export function filtersFrom(values: OptionValues, now: number): Filters {
  const since = text(values, "since");
  const until = text(values, "until");
  const key = text(values, "key");
  const source = text(values, "source");
  if (values.signed === true && values.unsigned === true) {
    throw new CliError("Cannot combine --signed with --unsigned", 2);
  }
  if (source !== undefined && !/^[A-Za-z0-9_=+/:-]{1,128}$/.test(source)) {
    throw new CliError("Cannot parse --source: give a source hash as list --json shows it", 2);
  }
  const filters: Filters = {
    since: since === undefined ? undefined : parseSince(since, now),
    until: until === undefined ? undefined : parseSince(until, now),
    intent: boundedText(values, "intent"),
    sender: boundedText(values, "sender"),
    source,
    signed: values.signed === true ? true : values.unsigned === true ? false : undefined,
    kind: oneOf(values, "kind", ["structured", "unstructured"] as const),
    surface: oneOf(values, "surface", ["native", "a2a"] as const),
    key: key === undefined ? undefined : parseKeyPrefix(key),
    unreviewed: values.unreviewed === true,
    status: statusOption(values, "status"),
  };
  if (filters.unreviewed && filters.status !== undefined) {
    throw new CliError("Cannot combine --unreviewed with --status", 2);
  }
  return filters;
}

function boundedText(values: OptionValues, name: string): string | undefined {
  const value = text(values, name);
  if (value !== undefined && (value === "" || value.length > 200 || !value.isWellFormed())) {
    throw new CliError(`Cannot parse --${name}: give 1 to 200 characters`, 2);
  }
  return value;
}

/**
 * The output width: `--width`, else the terminal's width when stdout is one, else 100 (`list`
 * uses 80 instead, list.ts).
 *
 * @param values Parsed values.
 * @param terminalColumns The terminal width, when stdout is a terminal.
 * @returns Columns, 40 to 1000.
 */
export function widthFrom(values: OptionValues, terminalColumns: number | undefined): number {
  if (values.width !== undefined) return Math.max(40, integerOption(values, "width", 100, 1000));
  return Math.max(40, Math.min(1000, terminalColumns ?? 100));
}
