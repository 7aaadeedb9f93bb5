/**
 * Group commit: concurrent submissions share one durable transaction. The first write after an
 * idle period is committed as soon as the requests already received have queued theirs (a lone
 * submission waits for exactly one commit); writes that arrive while a commit is running queue
 * up and all go into the next one. Each caller's promise settles only after the transaction
 * holding its row has committed, so a receipt is never sent for a row that is not durable.
 *
 * Every commit runs inside the call of one of the writers it carries (the leader), never in a
 * loop that outlives its caller: when a commit ends, the leader hands the lead to the first
 * queued writer, whose own call commits the next batch. Cloudflare Workers ties asynchronous
 * work to the request that started it and cancels it once that request has answered; a commit
 * loop owned by the first request would stop there, and every later write would wait forever.
 *
 * If a shared transaction fails because of one of its rows (`retryAlone` says so: a broken
 * constraint), its writes are retried one per transaction, so one bad row cannot fail the
 * submissions it happened to share a commit with. A failure of the database itself (busy,
 * stalled, broken) fails the whole batch at once: retrying row by row would only multiply it.
 *
 * @module
 */

interface Pending<T, R> {
  readonly item: T;
  /** What the commit reported for this item. */
  result?: R;
  /** Wakes a queued writer: `done` (its item is committed) or `lead` (commit the next batch). */
  wake?: (outcome: "done" | "lead") => void;
  /** Fails a queued writer whose item could not be committed. */
  fail?: (error: unknown) => void;
  /** Set when the leader's own item could not be committed. */
  failed?: { error: unknown };
}

/** A message port of the runtimes that can keep a process alive (Node, Deno, Bun). */
type Refable = { ref?: () => void; unref?: () => void };

/** Counters the benchmark prints: how many commits carried how many writes. */
export interface CommitCounters {
  /** Successful commits. */
  commits: number;
  /** Writes committed. */
  writes: number;
}

/**
 * Batches items into shared commits made by `commit` (one durable transaction per call), which
 * answers one result per item, in order.
 */
export class GroupCommitter<T, R = void> {
  readonly #commit: (items: readonly T[]) => Promise<readonly R[]>;
  readonly #maxBatch: number;
  readonly #retryAlone: (error: unknown) => boolean;
  #queue: Pending<T, R>[] = [];
  #running = false;
  /** Commit counters since start. */
  readonly counters: CommitCounters = { commits: 0, writes: 0 };

  /**
   * `commit` writes all items in one transaction; `maxBatch` bounds one transaction's size (and
   * so the time one commit holds the writer); `retryAlone` says whether a failed batch should be
   * retried one item per transaction (default: always).
   */
  constructor(
    commit: (items: readonly T[]) => Promise<readonly R[]>,
    options: { maxBatch?: number; retryAlone?: (error: unknown) => boolean } = {},
  ) {
    this.#commit = commit;
    this.#maxBatch = options.maxBatch ?? 256;
    this.#retryAlone = options.retryAlone ?? (() => true);
  }

  /** Resolves with the item's result once it is committed durably; rejects if it could not be. */
  async write(item: T): Promise<R> {
    const own: Pending<T, R> = { item };
    this.#queue.push(own);
    if (this.#running) {
      const outcome = await new Promise<"done" | "lead">((resolve, reject) => {
        own.wake = resolve;
        own.fail = reject;
      });
      if (outcome === "done") return own.result as R;
    } else {
      this.#running = true;
      // A macrotask, not a microtask: requests already received get to queue their writes
      // before the commit starts, which is what lets concurrent submissions share it.
      await this.#nextTurn();
    }
    await this.#lead(own);
    if (own.failed !== undefined) throw own.failed.error;
    return own.result as R;
  }

  #channel: MessageChannel | undefined;
  #turns: (() => void)[] = [];

  /**
   * Resolves after one turn of the event loop. A `MessageChannel` message is a macrotask that
   * costs microseconds; `setTimeout(0)` is clamped to a millisecond or more (HTML timers §8.6
   * nesting clamp), which would add that much to every commit.
   */
  #nextTurn(): Promise<void> {
    if (this.#channel === undefined) {
      const channel = new MessageChannel();
      channel.port1.onmessage = () => {
        this.#turns.shift()?.();
        // Idle, the port must not keep a process alive on its own (Node and Deno ref an open
        // port); while a turn is pending it must, or the process could exit mid-write.
        if (this.#turns.length === 0) (channel.port1 as Refable).unref?.();
      };
      this.#channel = channel;
    }
    const turn = new Promise<void>((resolve) => this.#turns.push(resolve));
    (this.#channel.port1 as Refable).ref?.();
    this.#channel.port2.postMessage(0);
    return turn;
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

  /** Commits the next batch (it starts with `own`), then hands the lead on or goes idle. */
  async #lead(own: Pending<T, R>): Promise<void> {
    const batch = this.#queue.splice(0, this.#maxBatch);
    try {
      await this.#settle(batch, own);
    } finally {
      const next = this.#queue[0];
      if (next === undefined) this.#running = false;
      else next.wake?.("lead");
    }
  }

  async #settle(batch: Pending<T, R>[], own: Pending<T, R>): Promise<void> {
    try {
      const results = await this.#commit(batch.map((pending) => pending.item));
      this.counters.commits++;
      this.counters.writes += batch.length;
      batch.forEach((pending, index) => {
        pending.result = results[index];
        if (pending !== own) pending.wake?.("done");
      });
    } catch (error) {
      if (batch.length === 1 || !this.#retryAlone(error)) {
        for (const pending of batch) {
          if (pending === own) own.failed = { error };
          else pending.fail?.(error);
        }
        return;
      }
      for (const pending of batch) await this.#settle([pending], own);
    }
  }
}
