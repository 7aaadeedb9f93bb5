/**
 * `review stats` as text: the totals, one section of counts per grouping, and the busiest
 * sources, every stored value through the renderer (a tampered database could hold anything).
 *
 * @module
 */
import type { Stats } from "../data/stats.ts";
import { safeText } from "./mod.ts";

/**
 * The statistics as the terminal shows them.
 *
 * @param stats The counts.
 * @param top How many sources were asked for (the heading names it).
 * @returns The text, already safe.
 */
export function statsText(stats: Stats, top: number): string {
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
  return lines.join("\n");
}
