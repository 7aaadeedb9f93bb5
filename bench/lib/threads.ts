/**
 * The serving process's CPU per thread, from Linux `/proc/<pid>/task/<tid>/stat` and `comm`.
 *
 * Throughput alone hides where a server's time goes: a server can be slow because it waits (for
 * an fsync, say) or because it is busy. Ticks per thread answer that. The main thread is the task
 * whose tid equals the pid: under `deno run` and `node` it runs the JavaScript (checked by
 * bench/tests/instruments_test.ts; `deno test` runs tests on another thread), so its utilisation
 * over wall time says how close the process is to its single-thread ceiling. A V8 CPU profile cannot tell
 * this: it counts the main thread's time outside JavaScript (the runtime's Rust or C++ HTTP stack,
 * op dispatch, native calls) as "(idle)".
 *
 * @module
 */

/** Clock ticks per second of `/proc` times (USER_HZ; 100 on every Linux the bench targets). */
export const TICKS_PER_SECOND = 100;

/** One thread's name and its user + system time so far, in ticks. */
export interface ThreadTicks {
  tid: number;
  /** `comm`: at most 15 bytes, set by the runtime (`deno`, `tokio-runtime-w`, `V8 DefaultWorke`). */
  name: string;
  ticks: number;
}

/** utime + stime from one `stat` file's text (see proc(5): fields 14 and 15). */
export function statTicks(text: string): number {
  // The command name may hold spaces and parentheses: the fields start after the last ")".
  const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
  // Field 3 (state) is index 0 here, so utime (field 14) is index 11 and stime index 12.
  return Number(fields[11]) + Number(fields[12]);
}

/** Every live thread of `pid` now; empty when the process is gone. */
export function readThreads(pid: number): ThreadTicks[] {
  const threads: ThreadTicks[] = [];
  let tasks: Iterable<Deno.DirEntry>;
  try {
    tasks = Deno.readDirSync(`/proc/${pid}/task`);
  } catch {
    return threads;
  }
  for (const task of tasks) {
    try {
      const stat = Deno.readTextFileSync(`/proc/${pid}/task/${task.name}/stat`);
      const name = Deno.readTextFileSync(`/proc/${pid}/task/${task.name}/comm`).trim();
      threads.push({ tid: Number(task.name), name, ticks: statTicks(stat) });
    } catch {
      // The thread ended between listing and reading: its time is in the process's total.
    }
  }
  return threads;
}

/** utime + stime of the whole process: every thread, including those that already ended. */
export function processTicks(pid: number): number {
  try {
    return statTicks(Deno.readTextFileSync(`/proc/${pid}/stat`));
  } catch {
    return 0;
  }
}

/** The serving process's CPU over one measured window. */
export interface ThreadCpu {
  wallS: number;
  /** Sum over the threads alive at the end of their ticks in the window (new threads count whole). */
  threadTicks: number;
  /** The process's own total over the window: also counts threads that ended inside it. */
  processTicks: number;
  /**
   * Every thread's ticks: the live threads' sum plus those of threads that ended in the window
   * (tokio's blocking pool starts and ends threads under load; their time stays only in the
   * process's total). This is what CPU per request divides.
   */
  ticks: number;
  /** Ticks of the thread whose tid is the pid. */
  mainTicks: number;
  /** `mainTicks` over the window's wall time: 1.0 is the main thread busy all the time. */
  mainUtilisation: number;
  /** Ticks per thread name (threads of one name summed), the main thread as `main (<comm>)`. */
  byName: Record<string, number>;
  /** Threads alive at the end of the window. */
  threadCount: number;
}

/**
 * Starts measuring `pid`'s threads; the returned function ends the window and reports it.
 *
 * @example
 * ```ts
 * const finish = startThreadWatch(Deno.pid);
 * let x = 0;
 * for (let i = 0; i < 1e6; i++) x += i;
 * const cpu = finish();
 * if (!(cpu.processTicks >= cpu.mainTicks)) throw new Error("the process includes its threads");
 * ```
 */
export function startThreadWatch(pid: number): () => ThreadCpu {
  const t0 = performance.now();
  // The process total first at the start and last at the end, so its window holds the threads'
  // (a tick between two reads would otherwise count for a thread and not for the process).
  const process0 = processTicks(pid);
  const before = new Map(readThreads(pid).map((t) => [t.tid, t.ticks]));
  return () => {
    const wallS = (performance.now() - t0) / 1000;
    const after = readThreads(pid);
    const processNow = processTicks(pid);
    const byName: Record<string, number> = {};
    let threadTicks = 0;
    let mainTicks = 0;
    for (const t of after) {
      const used = Math.max(0, t.ticks - (before.get(t.tid) ?? 0));
      threadTicks += used;
      const key = t.tid === pid ? `main (${t.name})` : t.name;
      byName[key] = (byName[key] ?? 0) + used;
      if (t.tid === pid) mainTicks = used;
    }
    return {
      wallS,
      threadTicks,
      processTicks: Math.max(0, processNow - process0),
      ticks: Math.max(threadTicks, processNow - process0),
      mainTicks,
      mainUtilisation: wallS > 0 ? mainTicks / TICKS_PER_SECOND / wallS : 0,
      byName,
      threadCount: after.length,
    };
  };
}

/** CPU microseconds per request from ticks spent over `requests` answered. */
export function microsPerRequest(ticks: number, requests: number): number | null {
  if (requests <= 0) return null;
  return (ticks / TICKS_PER_SECOND) * 1e6 / requests;
}
