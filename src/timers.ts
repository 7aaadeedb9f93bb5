/**
 * The Beacon's two timer utilities, one home each:
 *
 * - {@linkcode CoarseTimer}: one shared interval for many deadlines instead of a timer per
 *   request or per database call (a per-request `setTimeout` was a measurable share of a small
 *   request's cost). It runs only while something is watched, so an idle process holds no timer.
 * - {@linkcode unref}: a timer that never keeps the process alive, on every runtime.
 *
 * @module
 */

/**
 * Calls each watcher every `periodMs` until it returns false; runs only while there are watchers.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { CoarseTimer } from "./timers.ts";
 *
 * const timer = new CoarseTimer(5);
 * const seen = await new Promise<number>((resolve) => {
 *   let ticks = 0;
 *   timer.watch(() => (++ticks < 3) || (resolve(ticks), false));
 * });
 * assert.equal(seen, 3);
 * assert.equal(timer.watching, 0); // the interval stopped with its last watcher
 * ```
 */
export class CoarseTimer {
  readonly #periodMs: number;
  readonly #watchers = new Set<(now: number) => boolean>();
  #interval: ReturnType<typeof setInterval> | undefined;
  #lastTick = 0;

  constructor(periodMs: number) {
    this.#periodMs = periodMs;
  }

  /** How many watchers are registered. */
  get watching(): number {
    return this.#watchers.size;
  }

  /**
   * Registers `check` (once, however often it is passed) and starts the interval, or starts it
   * again when it has not run for five periods: Cloudflare Workers stops the timers of a request
   * that has answered, and the interval may have been started by one. So every caller that sets a
   * deadline calls this, and a live request restarts the timer.
   */
  watch(check: (now: number) => boolean, now: number = Date.now()): void {
    this.#watchers.add(check);
    if (this.#interval !== undefined && now - this.#lastTick < this.#periodMs * 5) return;
    clearInterval(this.#interval);
    this.#interval = setInterval(() => this.#tick(), this.#periodMs);
    this.#lastTick = now;
  }

  /** Removes `check`; the interval stops with the last watcher. */
  unwatch(check: (now: number) => boolean): void {
    this.#watchers.delete(check);
    if (this.#watchers.size === 0) this.#stop();
  }

  #tick(): void {
    const now = Date.now();
    this.#lastTick = now;
    for (const check of this.#watchers) if (!check(now)) this.#watchers.delete(check);
    if (this.#watchers.size === 0) this.#stop();
  }

  #stop(): void {
    clearInterval(this.#interval);
    this.#interval = undefined;
  }
}

/** Keeps a timer from holding the process open (Node and Bun timers, and Deno's numbers). */
export function unref(timer: ReturnType<typeof setInterval>): void {
  if (typeof timer === "object" && timer !== null && "unref" in timer) {
    (timer as { unref(): void }).unref();
    return;
  }
  const deno = (globalThis as { Deno?: { unrefTimer?(id: number): void } }).Deno;
  deno?.unrefTimer?.(timer as unknown as number);
}

/** Resolves after `ms` milliseconds (a back-off, a second look): a plain timer, held open. */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
