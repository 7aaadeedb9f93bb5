/**
 * Commits on a separate thread (a Web Worker) for embedded databases. The embedded libSQL client
 * is synchronous: a commit, fsync included, blocks the thread that calls it. On the request
 * thread that stalls every connection for the length of the fsync; on a worker the request thread
 * keeps receiving and validating submissions while the previous group is made durable, which is
 * what group commit needs to batch well. The request thread keeps its own connection for reads
 * (WAL lets readers run beside the writer).
 *
 * Used where the runtime has Web Workers (Deno, Bun); elsewhere the store commits inline.
 *
 * @module
 */
import type { InValue } from "@libsql/client";

/** Messages to the worker. */
export type WriterRequest =
  | { readonly type: "open"; readonly url: string }
  | { readonly type: "commit"; readonly id: number; readonly sql: string; readonly args: InValue[] }
  | { readonly type: "close" };

/** Messages from the worker. */
export type WriterReply =
  | { readonly type: "opened" }
  | { readonly type: "closed" }
  | {
    readonly type: "done";
    readonly id: number;
    readonly ok: boolean;
    /** The first column of every row the statement returned (its `RETURNING` clause). */
    readonly returned?: unknown[];
    readonly error?: string;
  };

/** A failed commit on the writer thread; `name` is the driver's error name, never its message. */
export class WriterError extends Error {
  /** Wraps the error name reported by the worker. */
  constructor(name: string) {
    super(`Commit failed on the writer thread (${name})`);
    this.name = "WriterError";
  }
}

/** The request-thread side of the writer. */
export class WriterThread {
  readonly #worker: Worker;
  readonly #pending = new Map<
    number,
    { resolve: (returned: unknown[]) => void; reject: (e: unknown) => void }
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
      if (reply.ok) pending?.resolve(reply.returned ?? []);
      else pending?.reject(new WriterError(reply.error ?? "unknown"));
    };
    worker.onerror = (event) => {
      event.preventDefault();
      for (const pending of this.#pending.values()) pending.reject(new WriterError("crashed"));
      this.#pending.clear();
    };
  }

  /** Whether this runtime can run a writer thread. */
  static available(): boolean {
    return typeof Worker === "function";
  }

  /** Starts the worker and opens the database in it. */
  static async start(url: string): Promise<WriterThread> {
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
    worker.postMessage({ type: "open", url } satisfies WriterRequest);
    try {
      await opened;
    } catch (error) {
      worker.terminate();
      throw error;
    }
    return new WriterThread(worker);
  }

  /**
   * Runs one statement (its own transaction) on the writer thread; resolves once committed, with
   * the first column of each row it returned.
   */
  commit(sql: string, args: InValue[]): Promise<unknown[]> {
    const id = this.#next++;
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      this.#worker.postMessage({ type: "commit", id, sql, args } satisfies WriterRequest);
    });
  }

  /** Closes the database on the writer thread and stops it. */
  async close(): Promise<void> {
    const closed = new Promise<void>((resolve) => this.#closed = resolve);
    this.#worker.postMessage({ type: "close" } satisfies WriterRequest);
    await Promise.race([closed, new Promise((resolve) => setTimeout(resolve, 2000))]);
    this.#worker.terminate();
  }
}
