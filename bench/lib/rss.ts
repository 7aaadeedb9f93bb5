/**
 * Peak resident memory of a server's whole process tree, read from Linux `/proc`.
 *
 * The kernel keeps each process's own peak (`VmHWM`), which catches spikes shorter than any
 * sampling interval; it is read on every tick because the entry disappears when the process
 * exits. Children are found through `/proc/<pid>/task/<tid>/children`, so a wrapper (npm, a
 * runtime that forks helpers) does not hide the process that actually holds the memory.
 *
 * @module
 */

const KIB = 1024;

/** Memory figures of one process, in KiB, or `undefined` when it is gone. */
function readStatus(pid: number): { rssKiB: number; hwmKiB: number } | undefined {
  let text: string;
  try {
    text = Deno.readTextFileSync(`/proc/${pid}/status`);
  } catch {
    return undefined;
  }
  const field = (name: string): number => {
    const match = text.match(new RegExp(`^${name}:\\s+(\\d+) kB`, "m"));
    return match ? Number(match[1]) : 0;
  };
  return { rssKiB: field("VmRSS"), hwmKiB: field("VmHWM") };
}

/** Direct children of a process, across all its threads (a child belongs to the forking thread). */
function childrenOf(pid: number): number[] {
  const children: number[] = [];
  let tasks: Iterable<Deno.DirEntry>;
  try {
    tasks = Deno.readDirSync(`/proc/${pid}/task`);
  } catch {
    return children;
  }
  for (const task of tasks) {
    try {
      const text = Deno.readTextFileSync(`/proc/${pid}/task/${task.name}/children`);
      for (const word of text.split(" ")) {
        const child = Number(word);
        if (word.trim() !== "" && Number.isInteger(child)) children.push(child);
      }
    } catch {
      // The thread ended between listing and reading: it has no children to report.
    }
  }
  return children;
}

/** The root pid and all its descendants that are alive now. */
export function processTree(root: number): number[] {
  const seen = new Set<number>();
  const queue = [root];
  while (queue.length > 0) {
    const pid = queue.shift()!;
    if (seen.has(pid)) continue;
    seen.add(pid);
    queue.push(...childrenOf(pid));
  }
  return [...seen];
}

/** A snapshot of what the sampler has seen so far, in MiB. */
export interface RssReport {
  /** Sum over the tree of each process's kernel-recorded peak (exact for one process). */
  peakMiB: number;
  /** Largest sum of VmRSS over the tree seen at one sampling instant. */
  sampledPeakMiB: number;
  /** Tree RSS at the latest sample. */
  currentMiB: number;
  /** Distinct processes seen in the tree. */
  processes: number;
  samples: number;
}

/**
 * Samples the memory of a process tree until stopped.
 *
 * @example
 * ```ts ignore
 * const sampler = new RssSampler(child.pid);
 * sampler.start();
 * // ... load the server ...
 * sampler.sample(); // last look before the process exits
 * console.log(sampler.report().peakMiB);
 * sampler.stop();
 * ```
 */
export class RssSampler {
  readonly #root: number;
  readonly #intervalMs: number;
  readonly #hwmByPid = new Map<number, number>();
  #sampledPeakKiB = 0;
  #currentKiB = 0;
  #samples = 0;
  #timer: ReturnType<typeof setInterval> | undefined;

  constructor(root: number, intervalMs = 100) {
    this.#root = root;
    this.#intervalMs = intervalMs;
  }

  /** Takes one sample now; safe to call at any time, including after `stop()`. */
  sample(): void {
    let total = 0;
    for (const pid of processTree(this.#root)) {
      const status = readStatus(pid);
      if (!status) continue;
      total += status.rssKiB;
      const before = this.#hwmByPid.get(pid) ?? 0;
      this.#hwmByPid.set(pid, Math.max(before, status.hwmKiB));
    }
    this.#currentKiB = total;
    this.#sampledPeakKiB = Math.max(this.#sampledPeakKiB, total);
    this.#samples++;
  }

  start(): void {
    this.sample();
    this.#timer = setInterval(() => this.sample(), this.#intervalMs);
  }

  stop(): void {
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
  }

  report(): RssReport {
    let hwm = 0;
    for (const value of this.#hwmByPid.values()) hwm += value;
    return {
      peakMiB: round1(Math.max(hwm, this.#sampledPeakKiB) / KIB),
      sampledPeakMiB: round1(this.#sampledPeakKiB / KIB),
      currentMiB: round1(this.#currentKiB / KIB),
      processes: this.#hwmByPid.size,
      samples: this.#samples,
    };
  }
}

function round1(value: number): number {
  return Math.round(value * 10) / 10;
}
