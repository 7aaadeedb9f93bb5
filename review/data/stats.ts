/**
 * The counts `review stats` prints: by day (UTC), surface, kind, signature and latest review
 * status, and the sources sending most (by salted source hash: raw addresses are never stored).
 * Every value reaches SQL as a bound parameter, with the filters `list` takes (queries.ts).
 *
 * @module
 */
import type { Client, InValue } from "@libsql/client";
import type { ReviewDatabase } from "./database.ts";
import { type Filters, statusExpression, whereClause } from "./queries.ts";

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
 * The statistics of the submissions the filters match.
 *
 * @param database The open database.
 * @param filters The filters.
 * @param top How many of the busiest sources to name.
 * @returns The counts.
 */
export async function submissionStats(
  database: Pick<ReviewDatabase, "client" | "schema">,
  filters: Filters,
  top: number,
): Promise<Stats> {
  const { client, schema } = database;
  const where = whereClause(filters, schema);
  const totals = (await client.execute({
    sql: "SELECT count(*) AS n, coalesce(sum(s.size), 0) AS bytes, min(s.received_at) AS first, " +
      `max(s.received_at) AS last FROM submissions s${where.sql}`,
    args: where.args,
  })).rows[0];
  const sources = (await client.execute({
    sql: "SELECT s.source_hash AS h, count(*) AS n, min(s.received_at) AS first, " +
      `max(s.received_at) AS last FROM submissions s${where.sql} ` +
      "GROUP BY s.source_hash ORDER BY n DESC, h LIMIT ?",
    args: [...where.args, top],
  })).rows;
  return {
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
}
