/**
 * What one process committed and its log signer has not covered yet: per row its `seq` and its
 * receipt's five signed members, as committed. A head covers a row this process committed when it
 * still reads as committed (src/transparency/signer.ts); that costs one string comparison, where
 * any other row has its stored intake signature checked (log_audit.ts), and a row that reads
 * otherwise is checked that way too, so the verdicts are the plain path's.
 *
 * A second path kept for speed, and it earns its place: with every row checked by its stored
 * signature instead, a durable `SendMessage` cost 1.29x the CPU per request (bench/README.md,
 * "The committed-rows fast path").
 *
 * Each commit is told once ({@linkcode CommittedReceipts.add}), and is kept as one string and one
 * array for the whole batch, in runs of consecutive `seq`s: remembering a batch until a head
 * covers it leaves nothing per row for the garbage collector to trace.
 *
 * @module
 */
import type { SignedReceiptFields } from "./receipt.ts";

/** Most rows held; past it, rows are left to their stored signatures. */
const COMMITTED_LIMIT = 65_536;

/**
 * A batch's members, {@linkcode membersText} of each row end to end, and where each row's
 * begin: row `i`'s are `text.slice(starts[i], starts[i + 1])`.
 */
interface CommittedBatch {
  readonly text: string;
  readonly starts: Uint32Array;
}

/** Rows with consecutive `seq`s, `first` to `first + count - 1`, from row `position` of `batch`. */
interface Run {
  readonly first: number;
  readonly count: number;
  readonly batch: CommittedBatch;
  readonly position: number;
}

/**
 * The five signed members in one unambiguous string (a JSON array). JSON, not the signed bytes:
 * no hash is needed to compare.
 */
function membersText(members: SignedReceiptFields): string {
  return JSON.stringify([
    members.id,
    members.receivedAt,
    members.digest,
    members.kind,
    members.size,
  ]);
}

/**
 * The rows a process committed, until they are covered.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { CommittedReceipts } from "./committed.ts";
 *
 * const receipt = (id: string) => ({
 *   id,
 *   receivedAt: "2025-06-01T12:00:03.123Z",
 *   digest: "sha256:" + "0".repeat(64),
 *   size: 16,
 *   kind: "unstructured",
 * });
 * const committed = new CommittedReceipts();
 * // Rows 7 and 8 were inserted; the key check skipped the one between them.
 * committed.add([7, 0, 8], [receipt("a"), receipt("b"), receipt("c")]);
 * assert.equal(committed.check(7, receipt("a")), true);
 * assert.equal(committed.check(8, receipt("b")), false); // row 8 holds c's members
 * assert.equal(committed.check(9, receipt("d")), undefined); // not committed here
 * ```
 */
export class CommittedReceipts {
  readonly #limit: number;
  /** In `seq` order. */
  #runs: Run[] = [];
  #rows = 0;
  /** Where the last {@linkcode check} found its run: lookups go up in `seq`. */
  #cursor = 0;

  /** Holds at most `limit` rows (65,536 unless given). */
  constructor(limit: number = COMMITTED_LIMIT) {
    this.#limit = limit;
  }

  /** How many rows are held. */
  get size(): number {
    return this.#rows;
  }

  /**
   * Records one commit: per row the `seq` it was stored under (0: not inserted) and its
   * receipt's signed members, in the same order. Past the limit, nothing more is recorded.
   */
  add(seqs: readonly number[], receipts: readonly SignedReceiptFields[]): void {
    if (this.#rows >= this.#limit) return;
    const parts = new Array<string>(receipts.length);
    const starts = new Uint32Array(receipts.length + 1);
    for (let i = 0; i < receipts.length; i++) {
      parts[i] = membersText(receipts[i]);
      starts[i + 1] = starts[i] + parts[i].length;
    }
    // `join` makes one flat string: the parts are garbage at once.
    const batch = { text: parts.join(""), starts };
    let start = 0;
    for (let at = 1; at <= seqs.length; at++) {
      // A run ends where the next row was not inserted or was numbered apart from it.
      if (at < seqs.length && seqs[at - 1] !== 0 && seqs[at] === seqs[at - 1] + 1) continue;
      const first = seqs[start];
      const count = at - start;
      if (first > 0 && this.#rows + count <= this.#limit) {
        this.#insert({ first, count, batch, position: start });
      }
      start = at;
    }
  }

  /**
   * Whether row `seq` still reads as committed (its members as they read now, as a stored
   * signature's check reads them); undefined when it is not held. Within one pass, look rows up
   * in growing `seq` order.
   */
  check(seq: number, members: SignedReceiptFields): boolean | undefined {
    const runs = this.#runs;
    if (this.#cursor >= runs.length || runs[this.#cursor].first > seq) this.#cursor = 0;
    for (let at = this.#cursor; at < runs.length && runs[at].first <= seq; at++) {
      const run = runs[at];
      if (seq >= run.first + run.count) continue;
      this.#cursor = at;
      const { text, starts } = run.batch;
      const row = run.position + seq - run.first;
      return text.slice(starts[row], starts[row + 1]) === membersText(members);
    }
    return undefined;
  }

  /** Forgets the runs wholly before `seq` (a head covers them); a run it reaches into stays. */
  forgetBefore(seq: number): void {
    let passed = 0;
    while (passed < this.#runs.length) {
      const run = this.#runs[passed];
      if (run.first + run.count > seq) break;
      this.#rows -= run.count;
      passed++;
    }
    if (passed > 0) this.#runs = this.#runs.slice(passed);
    this.#cursor = 0;
  }

  /** Adds a run in `seq` order (commits running side by side may report out of order). */
  #insert(run: Run): void {
    let at = this.#runs.length;
    while (at > 0 && this.#runs[at - 1].first > run.first) at--;
    this.#runs.splice(at, 0, run);
    this.#rows += run.count;
  }
}
