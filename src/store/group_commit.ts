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
 * Deadlines. Every write has one (`timeoutMs` from its arrival), checked by the shared
 * coarse timer of faults.ts, and its answer says what is known at that moment:
 *
 * - still queued: it is taken out of the queue and will never be sent ({@linkcode DeadlineError});
 * - sent, no answer yet: the outcome is unknown ({@linkcode IndeterminateError}). A later answer
 *   of that commit is not reported to anyone; it is what the status URL then shows.
 *
 * The commit call has a deadline too, the deadline of the writer that leads it (the newest of its
 * batch). Past it, the leader gives up on the call, `onAbandon` drops the call's connection, and
 * the lead passes on: the next batch goes out on a fresh connection at once, so one stuck socket
 * holds at most one batch for at most one deadline.
 *
 * Dropping a connection cannot recall bytes already sent: a proxy or a congested network may
 * still deliver the call after its deadline, when its writes were answered `outcome_unknown`
 * long ago. So `commit` is given the call's deadline (epoch milliseconds, by this process's
 * clock) and must store nothing when it reaches the database after it: remote commits carry it
 * into the transaction, where the database's own clock checks it at execution time
 * (`BEFORE_DEADLINE`, src/store/connection/remote/sql.ts; docs/protocol-0.1.md §9.1). Every write of a call was
 * answered no earlier than the call was sent, and the call's deadline is at most one deadline
 * after any of those answers: a row not stored two deadlines after its answer never will be.
 *
 * @module
 */
import { DeadlineError, IndeterminateError, watchDeadlines } from "./faults.ts";
import { sleep } from "../timers.ts";

/** Where a write is: waiting in the queue, carried by a commit in flight, or answered. */
const QUEUED = 0;
const SENT = 1;
const SETTLED = 2;

/** `lead`: commit the next batch; `settled`: look at the write's state. */
type Signal = "lead" | "settled";

interface Pending<T, R> {
  readonly item: T;
  /** `Date.now()` past which the write is answered with what is known. */
  readonly expiresAt: number;
  state: typeof QUEUED | typeof SENT | typeof SETTLED;
  /** What the commit reported for this item. */
  result?: R;
  /** Set when the item could not be committed (or its outcome is unknown). */
  failed?: { error: unknown };
  /** Wakes the writer's call. */
  wake?: (signal: Signal) => void;
}

/** One commit call and the writes it carries, in arrival (and so deadline) order. */
interface Run<T, R> {
  readonly items: Pending<T, R>[];
  /** The writer whose call runs the commit; its deadline is the call's. */
  readonly leader: Pending<T, R>;
  /** Index of the first item the deadline sweep has not yet looked at. */
  swept: number;
  /** The call returned (or every retry did). */
  ended: boolean;
  /** The leader gave up on the call at its deadline. */
  abandoned: boolean;
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

/** Options of {@linkcode GroupCommitter}. */
export interface GroupCommitOptions {
  /** Most items in one transaction (and so the time one commit holds the writer). Default 256. */
  readonly maxBatch?: number;
  /** Whether a failed batch should be retried one item per transaction (default: always). */
  readonly retryAlone?: (error: unknown) => boolean;
  /** Deadline of each write from its arrival, in milliseconds. Default: none. */
  readonly timeoutMs?: number;
  /** Called when a commit call is given up at its deadline: drop its connection. */
  readonly onAbandon?: () => void;
}

/**
 * Batches items into shared commits made by `commit` (one durable transaction per call), which
 * answers one result per item, in order.
 */
export class GroupCommitter<T, R = void> {
  readonly #commit: (items: readonly T[], deadline: number) => Promise<readonly R[]>;
  readonly #maxBatch: number;
  readonly #retryAlone: (error: unknown) => boolean;
  readonly #timeoutMs: number;
  readonly #onAbandon: (() => void) | undefined;
  #queue: Pending<T, R>[] = [];
  /** Commit calls not yet returned, abandoned ones included. */
  readonly #runs = new Set<Run<T, R>>();
  #running = false;
  readonly #sweep = (now: number) => this.#expire(now);
  /** Commit counters since start. */
  readonly counters: CommitCounters = { commits: 0, writes: 0 };

  /**
   * `commit` writes all items in one transaction, and nothing if it reaches the database at or
   * after `deadline` (`Date.now()` time; `Infinity` without a timeout); see
   * {@linkcode GroupCommitOptions}.
   */
  constructor(
    commit: (items: readonly T[], deadline: number) => Promise<readonly R[]>,
    options: GroupCommitOptions = {},
  ) {
    this.#commit = commit;
    this.#maxBatch = options.maxBatch ?? 256;
    this.#retryAlone = options.retryAlone ?? (() => true);
    this.#timeoutMs = options.timeoutMs ?? Infinity;
    this.#onAbandon = options.onAbandon;
  }

  /**
   * Resolves with the item's result once it is committed durably. Rejects with
   * {@linkcode DeadlineError} when it was never sent, with {@linkcode IndeterminateError} when it
   * was sent and the outcome is unknown, or with the commit's own error.
   */
  async write(item: T): Promise<R> {
    const now = Date.now();
    const own: Pending<T, R> = { item, expiresAt: now + this.#timeoutMs, state: QUEUED };
    this.#queue.push(own);
    if (this.#timeoutMs !== Infinity) {
      // Registers once; every write also keeps the shared timer alive (see faults.ts).
      watchDeadlines(this.#sweep, now);
    }
    let signal: Signal = "lead";
    if (this.#running) {
      signal = await new Promise<Signal>((resolve) => own.wake = resolve);
    } else {
      this.#running = true;
      // A macrotask, not a microtask: requests already received get to queue their writes
      // before the commit starts, which is what lets concurrent submissions share it.
      await this.#nextTurn();
    }
    if (signal === "lead") await this.#lead(own);
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

  /** Resolves when nothing is queued or being committed (calls abandoned at their deadline aside). */
  async idle(): Promise<void> {
    // A call given up on at its deadline is not waited for: it may never answer.
    while (this.#running || [...this.#runs].some((run) => !run.abandoned)) {
      await sleep(1);
    }
  }

  /**
   * Commits the next batch (it holds `own`), waits for the call or for `own`'s deadline, then
   * hands the lead on or goes idle. The hand-over happens in every case, or the queue would stall.
   */
  async #lead(own: Pending<T, R>): Promise<void> {
    try {
      // The deadline timer may not have run (a thread blocked by a synchronous commit): nothing
      // past its deadline may be sent, so the queue is swept here too.
      this.#expire(Date.now());
      if (own.state !== QUEUED) return; // answered at its deadline before it could lead
      const batch = this.#queue.splice(0, this.#maxBatch);
      for (const pending of batch) pending.state = SENT;
      const run: Run<T, R> = {
        items: batch,
        leader: own,
        swept: 0,
        ended: false,
        abandoned: false,
      };
      this.#runs.add(run);
      void this.#execute(run);
      while (!run.ended && !run.abandoned) {
        await new Promise<Signal>((resolve) => own.wake = resolve);
      }
    } finally {
      // The newest write of the next batch leads it: its deadline, the latest, is the call's.
      const next = this.#queue[Math.min(this.#queue.length, this.#maxBatch) - 1];
      if (next === undefined) this.#running = false;
      else next.wake?.("lead");
    }
  }

  /** Runs the commit call of `run` and answers each write it carries that is still waiting. */
  async #execute(run: Run<T, R>): Promise<void> {
    try {
      const results = await this.#commit(
        run.items.map((pending) => pending.item),
        run.leader.expiresAt,
      );
      this.counters.commits++;
      this.counters.writes += run.items.length;
      run.items.forEach((pending, index) => this.#settle(pending, undefined, results[index]));
    } catch (error) {
      if (run.items.length === 1 || !this.#retryAlone(error)) {
        const failure = run.abandoned ? new IndeterminateError(error) : error;
        for (const pending of run.items) this.#settle(pending, { error: failure });
        return;
      }
      // The batch failed as a whole, so nothing of it was stored: each write is tried alone.
      for (const pending of run.items) {
        if (pending.state !== SENT) continue;
        if (run.abandoned) {
          this.#settle(pending, { error: new DeadlineError(this.#timeoutMs) });
          continue;
        }
        try {
          const [result] = await this.#commit([pending.item], run.leader.expiresAt);
          this.counters.commits++;
          this.counters.writes++;
          this.#settle(pending, undefined, result);
        } catch (alone) {
          this.#settle(pending, { error: run.abandoned ? new IndeterminateError(alone) : alone });
        }
      }
    } finally {
      run.ended = true;
      this.#runs.delete(run);
      run.leader.wake?.("settled");
    }
  }

  #settle(pending: Pending<T, R>, failed: { error: unknown } | undefined, result?: R): void {
    if (pending.state === SETTLED) return; // answered at its deadline already
    pending.state = SETTLED;
    if (failed !== undefined) pending.failed = failed;
    else pending.result = result;
    pending.wake?.("settled");
  }

  /** The deadline sweep (shared timer): answers every write past its deadline. */
  #expire(now: number): boolean {
    // Same timeout for every write, so the queue is in deadline order: expired ones are in front.
    while (this.#queue.length > 0 && this.#queue[0].expiresAt <= now) {
      this.#settle(this.#queue.shift()!, { error: new DeadlineError(this.#timeoutMs) });
    }
    for (const run of this.#runs) {
      while (run.swept < run.items.length && run.items[run.swept].expiresAt <= now) {
        this.#settle(run.items[run.swept++], { error: new IndeterminateError() });
      }
      if (!run.abandoned && run.leader.expiresAt <= now) {
        run.abandoned = true;
        this.#settle(run.leader, { error: new IndeterminateError() });
        this.#onAbandon?.();
        run.leader.wake?.("settled");
      }
    }
    // An abandoned call whose writes are all answered needs no more sweeping.
    if (this.#queue.length > 0) return true;
    for (const run of this.#runs) {
      if (!run.abandoned || run.swept < run.items.length) return true;
    }
    return false;
  }
}
