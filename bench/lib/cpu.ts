/**
 * CPU accounting around one load run, from Linux `/proc`: how much the server used, and how much
 * went to processes that are neither the server, the harness nor its load generator.
 *
 * On a shared 2-core machine another job (a test suite, a formatter) steals cycles from whichever
 * target happens to be measured; the harness records it per run so a skewed round can be seen
 * instead of silently bending a ratio.
 *
 * @module
 */

import { processTree } from "./rss.ts";

/** Cores used by unrelated processes above which a round counts as disturbed. */
export const NOISE_CORES = 0.15;

/** Clock ticks per second of `/proc` times (USER_HZ; 100 on every Linux the bench targets). */
const TICKS = 100;

/**
 * Ticks the machine spent running processes, plus time the hypervisor stole. Interrupt and
 * softirq time are left out on purpose: on loopback the kernel's network stack runs there for
 * the benchmark's own traffic (about a third of a core at 100k req/s), and no process's own
 * times include it, so counting it would report the load itself as interference.
 */
function machineBusy(): number {
  const line = Deno.readTextFileSync("/proc/stat").split("\n")[0];
  const values = line.trim().split(/\s+/).slice(1).map(Number);
  // user nice system idle iowait irq softirq steal; guest time is already inside user.
  const [user, nice, system, , , , , steal] = values;
  return user + nice + system + (steal ?? 0);
}

/** utime + stime (+ reaped children's when `children`) of one process, in ticks. */
function processTicks(pid: number | "self", children: boolean): number {
  try {
    const text = Deno.readTextFileSync(`/proc/${pid}/stat`);
    // The command name may hold spaces and parentheses: the fields start after the last ")".
    const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
    // Field 14 of the full line (utime) is index 11 here; stime, cutime, cstime follow.
    const [utime, stime, cutime, cstime] = fields.slice(11, 15).map(Number);
    return utime + stime + (children ? cutime + cstime : 0);
  } catch {
    return 0;
  }
}

function treeTicks(root: number): number {
  return processTree(root).reduce((sum, pid) => sum + processTicks(pid, false), 0);
}

/** CPU used during a run, in cores (1.0 = one core busy for the whole run). */
export interface CpuUse {
  server: number;
  /** Neither the server nor the harness and the load generator it ran and reaped (nor the
   * kernel's interrupt work for the traffic), plus hypervisor steal. */
  other: number;
}

/**
 * Starts measuring the server (one process tree, or several: a server and the database server it
 * uses); call the returned function after the run (once the load generator has
 * exited and been reaped, so its time is in the harness's children time).
 *
 * @example
 * ```ts ignore
 * const finish = startCpuWatch(server.pid);
 * await runLoad(...);
 * const { server, other } = finish();
 * ```
 */
export function startCpuWatch(serverPid: number | readonly number[]): () => CpuUse {
  const pids = typeof serverPid === "number" ? [serverPid] : serverPid;
  const serverTicks = () => pids.reduce((sum, pid) => sum + treeTicks(pid), 0);
  const t0 = performance.now();
  const busy0 = machineBusy();
  const server0 = serverTicks();
  const self0 = processTicks("self", true);
  return () => {
    const seconds = (performance.now() - t0) / 1000;
    const server = serverTicks() - server0;
    const self = processTicks("self", true) - self0;
    const busy = machineBusy() - busy0;
    const cores = (ticks: number) => Math.round((ticks / TICKS / seconds) * 100) / 100;
    return { server: Math.max(0, cores(server)), other: Math.max(0, cores(busy - server - self)) };
  };
}

/** Cores used by anything but `ownPids` (trees) and this harness, measured over `ms`. */
export async function otherCores(ownPids: readonly number[], ms: number): Promise<number> {
  const own = () => ownPids.reduce((sum, pid) => sum + treeTicks(pid), 0);
  const t0 = performance.now();
  const busy0 = machineBusy();
  const own0 = own() + processTicks("self", true);
  await new Promise((resolve) => setTimeout(resolve, ms));
  const seconds = (performance.now() - t0) / 1000;
  const used = machineBusy() - busy0 - (own() + processTicks("self", true) - own0);
  return Math.max(0, Math.round((used / TICKS / seconds) * 100) / 100);
}

/**
 * Waits, up to `maxMs`, until other processes use less than `cores` for a one-second window.
 * Returns how long it waited and the last reading, so the report can say a run started busy.
 */
export async function waitForQuiet(
  ownPids: readonly number[],
  cores: number,
  maxMs: number,
): Promise<{ waitedMs: number; otherCores: number }> {
  const t0 = performance.now();
  for (;;) {
    const other = await otherCores(ownPids, 1000);
    const waitedMs = Math.round(performance.now() - t0);
    if (other < cores || waitedMs >= maxMs) return { waitedMs, otherCores: other };
  }
}
