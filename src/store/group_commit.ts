/**
 * Group commit: concurrent submissions share one durable transaction. The first write after an
 * idle period is committed as soon as the requests already received have queued theirs (a lone
 * submission waits for exactly one commit); writes that arrive while a commit is running queue
 * up and all go into the next one. Each caller's promise settles only after the transaction
 * holding its row has committed, so a receipt is never sent for a row that is not durable.
 *
 * If a shared transaction fails, its writes are retried one per transaction, so one bad row (a
 * broken constraint) cannot fail the submissions it happened to share a commit with.
 *
 * @module
 */

interface Pending<T> {
  readonly item: T;
  readonly resolve: () => void;
  readonly reject: (error: unknown) => void;
}

/** Counters the benchmark prints: how many commits carried how many writes. */
export interface CommitCounters {
  /** Successful commits. */
  commits: number;
  /** Writes committed. */
  writes: number;
}

/** Batches items into shared commits made by `commit` (one durable transaction per call). */
export class GroupCommitter<T> {
  readonly #commit: (items: readonly T[]) => Promise<void>;
  readonly #maxBatch: number;
  #queue: Pending<T>[] = [];
  #running = false;
  /** Commit counters since start. */
  readonly counters: CommitCounters = { commits: 0, writes: 0 };

  /**
   * `commit` writes all items in one transaction; `maxBatch` bounds one transaction's size (and
   * so the time one commit holds the writer).
   */
  constructor(commit: (items: readonly T[]) => Promise<void>, maxBatch = 256) {
    this.#commit = commit;
    this.#maxBatch = maxBatch;
  }

  /** Resolves once `item` is committed durably; rejects if it could not be. */
  write(item: T): Promise<void> {
    return new Promise((resolve, reject) => {
      this.#queue.push({ item, resolve, reject });
      if (!this.#running) {
        this.#running = true;
        // A macrotask, not a microtask: requests already received get to queue their writes
        // before the commit starts, which is what lets concurrent submissions share it.
        this.#schedule();
      }
    });
  }

  #channel: MessageChannel | undefined;

  /**
   * Runs `#drain` after one turn of the event loop. A `MessageChannel` message is a macrotask
   * that costs microseconds; `setTimeout(0)` is clamped to a millisecond or more (HTML timers
   * §8.6 nesting clamp), which would add that much to every commit.
   */
  #schedule(): void {
    if (this.#channel === undefined) {
      this.#channel = new MessageChannel();
      this.#channel.port1.onmessage = () => this.#drain();
    }
    this.#channel.port2.postMessage(0);
  }

  /** Stops the scheduler; call after `idle()` when the store closes. */
  close(): void {
    this.#channel?.port1.close();
    this.#channel = undefined;
  }

  /** Resolves when nothing is queued or being committed. */
  async idle(): Promise<void> {
    while (this.#running) await new Promise((resolve) => setTimeout(resolve, 1));
  }

  async #drain(): Promise<void> {
    try {
      while (this.#queue.length > 0) {
        const batch = this.#queue.splice(0, this.#maxBatch);
        await this.#settle(batch);
      }
    } finally {
      this.#running = false;
    }
  }

  async #settle(batch: Pending<T>[]): Promise<void> {
    try {
      await this.#commit(batch.map((pending) => pending.item));
      this.counters.commits++;
      this.counters.writes += batch.length;
      for (const pending of batch) pending.resolve();
    } catch (error) {
      if (batch.length === 1) {
        batch[0].reject(error);
        return;
      }
      for (const pending of batch) await this.#settle([pending]);
    }
  }
}
