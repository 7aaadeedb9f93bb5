/**
 * What a bench run keeps per target, and the medians over its measured rounds.
 *
 * @module
 */

import { type CpuUse, NOISE_CORES } from "./cpu.ts";
import type { LoadResult } from "./load.ts";
import { median } from "./report.ts";
import type { Probe, Role, Target } from "./targets.ts";
import { microsPerRequest, type ThreadCpu, TICKS_PER_SECOND } from "./threads.ts";

/** One load generator pass and the CPU spent around it. */
export type RunRecord = LoadResult & {
  /** Server tree and foreign processes, in cores. */
  cpu: CpuUse;
  /** The serving process's threads over the same window. */
  threads: ThreadCpu;
  /** Server CPU (every thread) per response, in microseconds. */
  cpuUsPerRequest: number | null;
  /** The companion process's threads (a real sqld) over the same window, when there is one. */
  companion?: ThreadCpu;
  /** The companion's CPU per response of the server, in microseconds. */
  companionUsPerRequest?: number | null;
};

/** Builds a run record from a load result and the CPU measured around it. */
export function runRecord(
  loaded: LoadResult,
  cpu: CpuUse,
  threads: ThreadCpu,
  companion?: ThreadCpu,
): RunRecord {
  const record: RunRecord = {
    ...loaded,
    cpu,
    threads,
    cpuUsPerRequest: microsPerRequest(threads.ticks, loaded.requests),
  };
  if (companion !== undefined) {
    record.companion = companion;
    record.companionUsPerRequest = microsPerRequest(companion.ticks, loaded.requests);
  }
  return record;
}

/** What a server stored, from its database file (and the floor's own counters). */
export interface Storage {
  /**
   * Commits and the rows they stored: a Beacon's from its database (`countCommits`,
   * bench/lib/db.ts), the floor's from its own counters; null when they could not be read.
   */
  commits: number | null;
  submissions: number | null;
  /** Rows after the probe, before any load (read while the server runs; WAL allows it). */
  rowsBeforeLoad: number | null;
  /** Rows counted in the database file after the server stopped; null when not countable. */
  rows: number | null;
  table: string;
  note: string;
}

/** One server process's life, as the harness saw it end. */
export interface Lifetime {
  pid: number;
  code: number;
  signal: string | null;
  /** "harness" when the harness stopped it, "outside" when it had exited before. */
  endedBy: "harness" | "outside";
  peakMiB: number;
  sampledPeakMiB: number;
  /** The floor's own counters at its end; null for other servers or when it gave none. */
  commits: number | null;
  submissions: number | null;
}

/** Medians over the measured rounds. */
export interface Medians {
  rps: number;
  p50Ms: number;
  p99Ms: number;
  cpuUsPerRequest: number | null;
  /** The companion's (sqld's) CPU per response, when the target has one. */
  companionUsPerRequest?: number | null;
  mainUtilisation: number;
  /** Cores the whole server process used while loaded. */
  serverCores: number;
  /** Rounds the medians are over: the quiet ones when there are any, else all. */
  rounds: number;
  /** True when only quiet rounds (others below NOISE_CORES) were used. */
  quietOnly: boolean;
}

/** Everything a run learned about one target. */
export interface TargetRecord {
  id: string;
  label: string;
  role: Role;
  probe: Probe | null;
  error: string | null;
  warmup: RunRecord | null;
  rounds: RunRecord[];
  median: Medians | null;
  non2xx: number;
  requests: number;
  socketErrors: number;
  /** Largest share of the machine (in cores) that unrelated processes used in a measured round. */
  maxOtherCpu: number;
  /** Largest peak over the target's server processes (one, unless restarted). */
  rss: { peakMiB: number; sampledPeakMiB: number } | null;
  /** 2xx answers that mean a stored submission, probe included (Beacon targets). */
  accepted: number;
  storage: Storage | null;
  /** Each server process this target had: one, unless something outside stopped it. */
  lifetimes: Lifetime[];
  /** Load runs thrown away because the server died during them (their 2xx still count). */
  discardedRuns: number;
  /** Load generator passes made, warm-up and discarded ones included. */
  loadRuns: number;
}

/** A fresh record for a target about to be started. */
export function emptyRecord(t: Target): TargetRecord {
  return {
    id: t.id,
    label: t.label,
    role: t.role,
    probe: null,
    error: null,
    warmup: null,
    rounds: [],
    median: null,
    non2xx: 0,
    requests: 0,
    socketErrors: 0,
    maxOtherCpu: 0,
    rss: null,
    accepted: 0,
    storage: null,
    lifetimes: [],
    discardedRuns: 0,
    loadRuns: 0,
  };
}

/** Connect, read, write and timeout errors of one pass. */
export function socketErrors(r: LoadResult): number {
  return r.errors.connect + r.errors.read + r.errors.write + r.errors.timeout;
}

/**
 * Fills in the medians and totals of every record that has measured rounds. The medians are over
 * the rounds in which other processes used less than NOISE_CORES when there is at least one such
 * round: on a shared machine one busy neighbour moves a p99 far more than a median of throughput.
 */
export function summarise(records: Iterable<TargetRecord>): void {
  for (const record of records) {
    if (record.rounds.length === 0) continue;
    const quiet = record.rounds.filter((r) => r.cpu.other < NOISE_CORES);
    const rounds = quiet.length > 0 ? quiet : record.rounds;
    const perRequest = rounds.map((r) => r.cpuUsPerRequest).filter((v): v is number => v !== null);
    const companion = rounds.map((r) => r.companionUsPerRequest).filter((v): v is number =>
      typeof v === "number"
    );
    record.median = {
      ...(companion.length > 0 ? { companionUsPerRequest: median(companion) } : {}),
      rps: median(rounds.map((r) => r.rps)),
      p50Ms: median(rounds.map((r) => r.p50Ms)),
      p99Ms: median(rounds.map((r) => r.p99Ms)),
      cpuUsPerRequest: perRequest.length > 0 ? median(perRequest) : null,
      mainUtilisation: median(rounds.map((r) => r.threads.mainUtilisation)),
      serverCores: median(
        rounds.map((r) => r.threads.ticks / TICKS_PER_SECOND / r.threads.wallS),
      ),
      rounds: rounds.length,
      quietOnly: quiet.length > 0,
    };
    // Totals and the noise figure stay over every round: no answer is left out of the checks.
    const all = record.rounds;
    record.requests = all.reduce((sum, r) => sum + r.requests, 0);
    record.non2xx = all.reduce((sum, r) => sum + r.non2xx, 0);
    record.socketErrors = all.reduce((sum, r) => sum + socketErrors(r), 0);
    record.maxOtherCpu = Math.max(...all.map((r) => r.cpu.other));
  }
}
