/**
 * A small metrics registry and its Prometheus text exposition (format 0.0.4,
 * prometheus.io/docs/instrumenting/exposition_formats): counters, histograms with fixed buckets,
 * and gauges read when the page is rendered. No dependency: the Beacon needs a handful of
 * series, and a client library would bring its own timers and globals into every runtime.
 *
 * Label values are the Beacon's own (route names, error codes, cause keys), never submitted
 * content or an address; they are escaped as the format asks all the same.
 *
 * @module
 */

/** Label names and values of one series. */
export type Labels = Readonly<Record<string, string>>;

/** `\`, `"` and newline escaped, as the text format asks of a label value. */
function escapeLabel(value: string): string {
  return value.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n");
}

function labelText(labels: Labels): string {
  const pairs = Object.entries(labels).map(([name, value]) => `${name}="${escapeLabel(value)}"`);
  return pairs.length === 0 ? "" : `{${pairs.join(",")}}`;
}

/** A number as the format writes it (`+Inf`, integers without a point). */
function numberText(value: number): string {
  if (value === Infinity) return "+Inf";
  if (value === -Infinity) return "-Inf";
  return Number.isNaN(value) ? "NaN" : String(value);
}

interface Family {
  readonly name: string;
  readonly help: string;
  readonly type: "counter" | "gauge" | "histogram";
  render(): string[];
}

/** A monotonically increasing count per label set. */
export class Counter {
  /**
   * The series by their labels as JSON, a key that costs one native call on every increment;
   * the escaped label text is written only when the page is rendered.
   */
  readonly #values = new Map<string, { labels: Labels; value: number }>();

  /** `unlabelled`: the series without labels exists (at 0) before the first increment. */
  constructor(unlabelled: boolean) {
    if (unlabelled) this.#values.set(JSON.stringify({}), { labels: {}, value: 0 });
  }

  /** Adds `by` (default 1) to the series of `labels`. */
  inc(labels: Labels = {}, by = 1): void {
    const key = JSON.stringify(labels);
    const series = this.#values.get(key);
    if (series === undefined) this.#values.set(key, { labels, value: by });
    else series.value += by;
  }

  /** The series, for the exposition. */
  lines(name: string): string[] {
    return [...this.#values.values()].map(({ labels, value }) =>
      `${name}${labelText(labels)} ${numberText(value)}`
    );
  }
}

/** Observations counted into fixed, cumulative buckets, with their sum and count. */
export class Histogram {
  readonly #bounds: readonly number[];
  readonly #counts: number[];
  #sum = 0;
  #count = 0;

  /** `bounds`: the buckets' upper bounds, ascending (`+Inf` is added). */
  constructor(bounds: readonly number[]) {
    this.#bounds = bounds;
    this.#counts = bounds.map(() => 0);
  }

  /** Counts one observation. */
  observe(value: number): void {
    this.#sum += value;
    this.#count++;
    for (let i = 0; i < this.#bounds.length; i++) {
      if (value <= this.#bounds[i]) this.#counts[i]++;
    }
  }

  /** The series, for the exposition. */
  lines(name: string): string[] {
    return [
      ...this.#bounds.map((bound, i) =>
        `${name}_bucket{le="${numberText(bound)}"} ${this.#counts[i]}`
      ),
      `${name}_bucket{le="+Inf"} ${this.#count}`,
      `${name}_sum ${numberText(this.#sum)}`,
      `${name}_count ${this.#count}`,
    ];
  }
}

/**
 * The registry: families by name, rendered in the order they were made.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Registry } from "./registry.ts";
 *
 * const registry = new Registry();
 * const sent = registry.counter("demo_sent_total", "Messages sent.", ["surface"]);
 * sent.inc({ surface: "native" });
 * assert.equal(
 *   registry.render(),
 *   '# HELP demo_sent_total Messages sent.\n# TYPE demo_sent_total counter\n' +
 *     'demo_sent_total{surface="native"} 1\n',
 * );
 * ```
 */
export class Registry {
  readonly #families: Family[] = [];

  /** A counter; with no `labelNames`, its one series starts at 0. */
  counter(name: string, help: string, labelNames: readonly string[] = []): Counter {
    const counter = new Counter(labelNames.length === 0);
    this.#families.push({ name, help, type: "counter", render: () => counter.lines(name) });
    return counter;
  }

  /** A histogram with the given bucket bounds. */
  histogram(name: string, help: string, bounds: readonly number[]): Histogram {
    const histogram = new Histogram(bounds);
    this.#families.push({ name, help, type: "histogram", render: () => histogram.lines(name) });
    return histogram;
  }

  /** A gauge whose series are read when the page is rendered. */
  gauge(name: string, help: string, read: () => readonly [Labels, number][]): void {
    this.#families.push({
      name,
      help,
      type: "gauge",
      render: () =>
        read().map(([labels, value]) => `${name}${labelText(labels)} ${numberText(value)}`),
    });
  }

  /** The text exposition of every family. */
  render(): string {
    let text = "";
    for (const family of this.#families) {
      text += `# HELP ${family.name} ${family.help}\n# TYPE ${family.name} ${family.type}\n`;
      for (const line of family.render()) text += `${line}\n`;
    }
    return text;
  }
}
