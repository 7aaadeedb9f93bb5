/**
 * `review stats`: counts by day (UTC), surface, kind, signature and latest review status, and
 * the sources sending most (by salted source hash: raw addresses are never stored), to spot
 * floods. Takes the same filters as `list`. The counting is data/stats.ts's, the text
 * render/stats.ts's.
 *
 * @module
 */
import { databaseConfig, openForReading } from "../data/database.ts";
import { submissionStats } from "../data/stats.ts";
import type { Context } from "../io.ts";
import { FILTER_OPTIONS, filtersFrom, integerOption, type OptionValues } from "./options.ts";
import { safeJson } from "../render/mod.ts";
import { statsText } from "../render/stats.ts";

/** The options of `stats`. */
export const STATS_OPTIONS = {
  ...FILTER_OPTIONS,
  top: { type: "string" },
  json: { type: "boolean" },
} as const;

/**
 * Runs `stats`.
 *
 * @param context Outputs, environment, clock.
 * @param values Parsed options.
 * @returns The exit status.
 */
export async function statsCommand(context: Context, values: OptionValues): Promise<number> {
  const filters = filtersFrom(values, context.now());
  const top = integerOption(values, "top", 10, 1000);
  const database = await openForReading(databaseConfig(values.database as string, context.env));
  try {
    const stats = await submissionStats(database, filters, top);
    await context.stdout.line(values.json === true ? safeJson(stats, 2) : statsText(stats, top));
    return 0;
  } finally {
    await database.close();
  }
}
