/**
 * The commits of one process that no published head covers yet, for the operator's lag metric
 * (`beacon_log_uncovered_seconds`): per commit the last `seq` it stored and when it was
 * acknowledged, oldest first. A head of size N covers every row with `seq` ≤ N.
 *
 * The metric exists to catch a log that stopped, so it may overstate a lag, never hide one:
 *
 * - covered commits are forgotten whenever a head is published, not only when the metric is
 *   read, so the memory holds the uncovered commits alone, however rarely anyone scrapes;
 * - past {@linkcode UncoveredCommits}'s limit (that many commits in a row left uncovered: a log
 *   that has stopped), a new commit joins the newest one kept, which then stays uncovered until
 *   this one is covered too, with the older time. Dropping it instead would let the metric read 0
 *   once the kept ones were covered, while it was still waiting.
 *
 * @module
 */

/** Commits kept by default: a log that fell this many commits behind has stopped. */
const DEFAULT_LIMIT = 65_536;

/**
 * Forgotten entries at the front before they are cut off the arrays, and only once they are at
 * least as many as the entries kept: each cut then moves no more entries than it drops, so
 * forgetting costs amortised O(1) a commit.
 */
const COMPACT_AFTER = 1024;

/** The commits no head covers yet, oldest first; see the module documentation. */
export class UncoveredCommits {
  readonly #limit: number;
  /** Each kept commit's last `seq`, ascending (commits of one writer get ascending `seq`s). */
  readonly #lastSeqs: number[] = [];
  /** When each was acknowledged (epoch milliseconds). */
  readonly #times: number[] = [];
  /** The first entry still uncovered: the ones before it are forgotten. */
  #front = 0;

  constructor(limit = DEFAULT_LIMIT) {
    if (!Number.isSafeInteger(limit) || limit < 1) {
      throw new RangeError("Cannot keep uncovered commits: the limit must be a positive integer");
    }
    this.#limit = limit;
  }

  /** How many commits are kept. */
  get size(): number {
    return this.#lastSeqs.length - this.#front;
  }

  /** A commit acknowledged at `at` whose rows end at `lastSeq`. */
  add(lastSeq: number, at: number): void {
    if (this.size < this.#limit) {
      this.#lastSeqs.push(lastSeq);
      this.#times.push(at);
      return;
    }
    const newest = this.#lastSeqs.length - 1;
    this.#lastSeqs[newest] = Math.max(this.#lastSeqs[newest], lastSeq);
  }

  /** Forgets the commits a head of `treeSize` leaves covers. */
  cover(treeSize: number): void {
    while (this.#front < this.#lastSeqs.length && this.#lastSeqs[this.#front] <= treeSize) {
      this.#front++;
    }
    if (this.size === 0 || (this.#front >= COMPACT_AFTER && this.#front >= this.size)) {
      this.#lastSeqs.splice(0, this.#front);
      this.#times.splice(0, this.#front);
      this.#front = 0;
    }
  }

  /** When the oldest commit still uncovered was acknowledged; undefined when there is none. */
  oldest(): number | undefined {
    return this.size > 0 ? this.#times[this.#front] : undefined;
  }
}
