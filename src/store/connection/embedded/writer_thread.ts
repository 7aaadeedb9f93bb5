/**
 * Commits on a separate thread (a Web Worker) for embedded databases. The embedded driver is
 * synchronous: a commit, fsync included, blocks the thread that calls it. On the request thread
 * that stalls every connection for the length of the fsync; on a worker the request thread keeps
 * receiving and validating submissions while the previous group is made durable. The request
 * thread keeps its own connection for reads (WAL lets readers run beside the writer).
 *
 * The worker runs the same {@linkcode EmbeddedConnection.commit} as the inline path, so the
 * transaction rules (explicit, checked, rolled back on error) are the same on both.
 *
 * Used where the runtime has Web Workers (Deno, Bun); elsewhere the store commits inline.
 *
 * @module
 */
import { IndeterminateError } from "../../faults.ts";
import type { BatchSignature, PendingRow } from "../../rows.ts";

/** Messages to the worker. */
export type WriterRequest =
  | { readonly type: "open"; readonly url: string; readonly walLimitBytes?: number }
  | {
    readonly type: "commit";
    readonly id: number;
    readonly rows: readonly PendingRow[];
    readonly batch?: BatchSignature;
  }
  | { readonly type: "close" };

/** Messages from the worker. */
export type WriterReply =
  | { readonly type: "opened" }
  | { readonly type: "closed" }
  | {
    readonly type: "done";
    readonly id: number;
    /** Per row, the `seq` it was stored under (0: not inserted); absent when the commit failed. */
    readonly seqs?: number[];
    /** The driver's error code or name when it failed, never its message. */
    readonly error?: string;
  };

/** A failed commit on the writer thread; `code` is the driver's error code or name. */
export class WriterError extends Error {
  /** The driver's error code (`SQLITE_BUSY`, …) or error name. */
  readonly code: string;
  /** Wraps the error code reported by the worker. */
  constructor(code: string) {
    super(`Commit failed on the writer thread (${code})`);
    this.name = "WriterError";
    this.code = code;
  }
}

/** The request-thread side of the writer. */
export class WriterThread {
  readonly #worker: Worker;
  readonly #pending = new Map<
    number,
    { resolve: (seqs: number[]) => void; reject: (e: unknown) => void }
  >();
  #next = 0;
  #closed: (() => void) | undefined;

  private constructor(worker: Worker) {
    this.#worker = worker;
    worker.onmessage = (event: MessageEvent<WriterReply>) => {
      const reply = event.data;
      if (reply.type === "closed") this.#closed?.();
      if (reply.type !== "done") return;
      const pending = this.#pending.get(reply.id);
      this.#pending.delete(reply.id);
      if (reply.seqs !== undefined) pending?.resolve(reply.seqs);
      else pending?.reject(new WriterError(reply.error ?? "unknown"));
    };
    worker.onerror = (event) => {
      event.preventDefault();
      // A crash may come after a COMMIT that reached the disk: the outcome is unknown.
      for (const pending of this.#pending.values()) {
        pending.reject(new IndeterminateError(new WriterError("crashed")));
      }
      this.#pending.clear();
    };
  }

  /** Whether this runtime can run a writer thread. */
  static available(): boolean {
    return typeof Worker === "function";
  }

  /** Starts the worker and opens the database in it (`walLimitBytes`: `DatabaseConfig`'s). */
  static async start(url: string, walLimitBytes?: number): Promise<WriterThread> {
    const worker = new Worker(new URL("./writer_worker.ts", import.meta.url), { type: "module" });
    const opened = new Promise<void>((resolve, reject) => {
      worker.onmessage = (event: MessageEvent<WriterReply>) => {
        if (event.data.type === "opened") resolve();
        else reject(new WriterError("open"));
      };
      worker.onerror = (event) => {
        event.preventDefault();
        reject(new WriterError("open"));
      };
    });
    worker.postMessage({ type: "open", url, walLimitBytes } satisfies WriterRequest);
    try {
      await opened;
    } catch (error) {
      worker.terminate();
      throw error;
    }
    return new WriterThread(worker);
  }

  /**
   * Commits `rows` and their batch's signature in one transaction on the writer thread; resolves
   * once it is durable.
   */
  commit(rows: readonly PendingRow[], batch?: BatchSignature): Promise<number[]> {
    const id = this.#next++;
    // Only what the commit stores crosses the thread (not the receipts' proofs).
    const stored = batch && { leaves: batch.leaves, signature: batch.signature };
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      this.#worker.postMessage(
        { type: "commit", id, rows, batch: stored } satisfies WriterRequest,
      );
    });
  }

  /** Closes the database on the writer thread and stops it. */
  async close(): Promise<void> {
    const closed = new Promise<void>((resolve) => this.#closed = resolve);
    this.#worker.postMessage({ type: "close" } satisfies WriterRequest);
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([closed, new Promise((resolve) => timer = setTimeout(resolve, 2000))]);
    clearTimeout(timer);
    this.#worker.terminate();
  }
}
