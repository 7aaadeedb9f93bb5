/**
 * `review stats`: counts by day (UTC), surface, kind, signature and latest review status, and
 * the sources sending most (by salted source hash: raw addresses are never stored), to spot
 * floods. Takes the same filters as `list`.
 *
 * @module
 */
import type { Client, InValue } from "@libsql/client";
import { databaseConfig, openForReading } from "../data/database.ts";
import type { Context } from "../io.ts";
import { FILTER_OPTIONS, filtersFrom, integerOption, type OptionValues } from "./options.ts";
import { statusExpression, whereClause } from "../data/queries.ts";
import { safeJson, safeText } from "../render/mod.ts";

/** The options of `stats`. */
export const STATS_OPTIONS = {
  ...FILTER_OPTIONS,
  top: { type: "string" },
  json: { type: "boolean" },
} as const;

/** The computed statistics. */
export interface Stats {
  /** Matching submissions. */
  readonly total: number;
  /** Their stored bytes. */
  readonly bytes: number;
  /** Earliest receipt time, null when none. */
  readonly first: string | null;
  /** Latest receipt time, null when none. */
  readonly last: string | null;
  /** Counts per UTC day (`YYYY-MM-DD`). */
  readonly byDay: Record<string, number>;
  /** Counts per surface. */
  readonly bySurface: Record<string, number>;
  /** Counts per kind. */
  readonly byKind: Record<string, number>;
  /** Counts of `unsigned`, `verified` and `not verified`. */
  readonly bySignature: Record<string, number>;
  /** Counts per latest status, `new` when unreviewed. */
  readonly byStatus: Record<string, number>;
  /** The busiest sources, busiest first. */
  readonly topSources: { sourceHash: string; count: number; first: string; last: string }[];
}

async function grouped(
  client: Client,
  expression: string,
  where: { sql: string; args: InValue[] },
): Promise<Record<string, number>> {
  const rows = (await client.execute({
    sql: `SELECT ${expression} AS k, count(*) AS n FROM submissions s${where.sql} ` +
      "GROUP BY k ORDER BY k",
    args: where.args,
  })).rows;
  return Object.fromEntries(rows.map((row) => [String(row.k), Number(row.n)]));
}

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
    const { client, schema } = database;
    const where = whereClause(filters, schema);
    const totals = (await client.execute({
      sql:
        "SELECT count(*) AS n, coalesce(sum(s.size), 0) AS bytes, min(s.received_at) AS first, " +
        `max(s.received_at) AS last FROM submissions s${where.sql}`,
      args: where.args,
    })).rows[0];
    const sources = (await client.execute({
      sql: "SELECT s.source_hash AS h, count(*) AS n, min(s.received_at) AS first, " +
        `max(s.received_at) AS last FROM submissions s${where.sql} ` +
        "GROUP BY s.source_hash ORDER BY n DESC, h LIMIT ?",
      args: [...where.args, top],
    })).rows;
    const stats: Stats = {
      total: Number(totals.n),
      bytes: Number(totals.bytes),
      first: totals.first === null ? null : String(totals.first),
      last: totals.last === null ? null : String(totals.last),
      byDay: await grouped(client, "substr(s.received_at, 1, 10)", where),
      bySurface: await grouped(client, "s.surface", where),
      byKind: await grouped(client, "s.kind", where),
      bySignature: await grouped(
        client,
        "CASE WHEN s.identity_fingerprint IS NULL THEN 'unsigned' " +
          "WHEN s.identity_verified = 1 THEN 'verified' ELSE 'not verified' END",
        where,
      ),
      byStatus: await grouped(client, `coalesce(${statusExpression(schema)}, 'new')`, where),
      topSources: sources.map((row) => ({
        sourceHash: String(row.h),
        count: Number(row.n),
        first: String(row.first),
        last: String(row.last),
      })),
    };
    if (values.json === true) {
      await context.stdout.line(safeJson(stats, 2));
      return 0;
    }
    const lines = [
      `submissions  ${stats.total} (${stats.bytes} bytes)` +
      (stats.first === null ? "" : `, ${safeText(stats.first)} to ${safeText(stats.last ?? "")}`),
    ];
    const section = (title: string, counts: Record<string, number>) => {
      lines.push("", title);
      const entries = Object.entries(counts);
      if (entries.length === 0) lines.push("  (none)");
      for (const [key, count] of entries) {
        lines.push(`  ${safeText(key).padEnd(14)} ${String(count).padStart(8)}`);
      }
    };
    section("by day (UTC)", stats.byDay);
    section("by surface", stats.bySurface);
    section("by kind", stats.byKind);
    section("by signature", stats.bySignature);
    section("by status", stats.byStatus);
    lines.push("", `top ${top} sources (salted hash of the address)`);
    if (stats.topSources.length === 0) lines.push("  (none)");
    for (const source of stats.topSources) {
      lines.push(
        `  ${safeText(source.sourceHash).padEnd(32)} ${String(source.count).padStart(8)}  ` +
          `${safeText(source.first)} to ${safeText(source.last)}`,
      );
    }
    await context.stdout.line(lines.join("\n"));
    return 0;
  } finally {
    await database.close();
  }
}
