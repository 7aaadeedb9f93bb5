/**
 * Small helpers for summarising rounds and printing aligned tables.
 *
 * @module
 */

/** Median of a non-empty list (mean of the middle two for an even count). */
export function median(values: readonly number[]): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** `a / b`, or `null` when either side is missing or b is zero (a ratio must never lie). */
export function ratio(a: number | null | undefined, b: number | null | undefined): number | null {
  if (a == null || b == null || !Number.isFinite(a) || !Number.isFinite(b) || b === 0) return null;
  return a / b;
}

/** A number with a fixed count of decimals and thousands separators; `n/a` for null. */
export function num(value: number | null | undefined, decimals = 0): string {
  if (value == null || !Number.isFinite(value)) return "n/a";
  return value.toLocaleString("en-US", {
    minimumFractionDigits: decimals,
    maximumFractionDigits: decimals,
  });
}

/** A ratio as `0.52x`; `n/a` for null. */
export function times(value: number | null): string {
  return value == null ? "n/a" : `${value.toFixed(2)}x`;
}

/** Renders rows as a table: the first `left` columns left aligned, the others right aligned. */
export function table(
  header: readonly string[],
  rows: readonly (readonly string[])[],
  left = 1,
): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells: readonly string[]) =>
    cells.map((c, i) => (i < left ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join("  ");
  const rule = widths.map((w) => "-".repeat(w)).join("  ");
  return [line(header), rule, ...rows.map(line)].join("\n");
}

/** Rotates a list left by `by` places (the round order of the benchmark). */
export function rotate<T>(items: readonly T[], by: number): T[] {
  if (items.length === 0) return [];
  const k = ((by % items.length) + items.length) % items.length;
  return [...items.slice(k), ...items.slice(0, k)];
}
