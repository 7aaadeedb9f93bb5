/**
 * One bench run: start every target's server, probe it, warm it up, load it in measured rounds
 * whose order rotates, and stop it, keeping what each step measured in the target's record.
 *
 * A server that something outside the harness stopped (a broad `pkill` on a shared machine:
 * exit code 0 after its own SIGTERM handler, or death by a signal) is restarted on the same
 * database and the spoiled run is measured again; one that failed by itself fails its target.
 *
 * @module
 */

import { NOISE_CORES, startCpuWatch, waitForQuiet } from "./cpu.ts";
import { countCommits, countRows } from "./db.ts";
import { type LoadGenerator, runLoad } from "./load.ts";
import { findEvent, type RunningServer, startServer } from "./process.ts";
import {
  emptyRecord,
  type Lifetime,
  type RunRecord,
  runRecord,
  socketErrors,
  type TargetRecord,
} from "./records.ts";
import { num, rotate } from "./report.ts";
import type { Target } from "./targets.ts";
import { startThreadWatch } from "./threads.ts";

/**
 * How long after a load the server's CPU still counts toward its requests: longer than the
 * Beacon's tree-head interval (2 s), so the head over a round's last rows is in that round.
 */
export const TAIL_MS = 2_500;
import { type Sqld, startSqld } from "../../tests/support/sqld.ts";

/** How a run loads its targets. */
export interface HarnessSettings {
  gen: LoadGenerator;
  rounds: number;
  durationS: number;
  warmupS: number;
  connections: number;
  threads: number;
  pauseS: number;
  settleS: number;
  timeoutS: number;
  /** Table whose rows are counted in each Beacon's database. */
  tableName: string;
  /** Distinguishes this run's request ids from every other run's. */
  runId: string;
  /** Folder of the Beacons' database files. */
  dir: string;
}

/** Times a server killed from outside is replaced before its target counts as failed. */
const MAX_RESTARTS = 10;
/** Load passes of one target in one phase before the target counts as failed. */
const MAX_ATTEMPTS = 3;

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Runs every target; returns the records (in target order) and each round's order. */
export async function runTargets(
  targets: readonly Target[],
  settings: HarnessSettings,
  log: (line: string) => void,
): Promise<{ records: Map<string, TargetRecord>; order: string[][] }> {
  const harness = new Harness(targets, settings, log);
  // Ctrl-C must not leave servers listening behind the harness.
  const onInterrupt = () => {
    harness.killAll();
    Deno.exit(130);
  };
  Deno.addSignalListener("SIGINT", onInterrupt);
  try {
    await harness.startAll();
    const order = await harness.measure();
    return { records: harness.records, order };
  } finally {
    Deno.removeSignalListener("SIGINT", onInterrupt);
    await harness.stopAll();
  }
}

class Harness {
  readonly records = new Map<string, TargetRecord>();
  readonly #servers = new Map<string, RunningServer>();
  /** Each target's companion process (a real sqld), kept across restarts of its server. */
  readonly #companions = new Map<string, Sqld>();
  readonly #live: Target[] = [];

  constructor(
    readonly targets: readonly Target[],
    readonly settings: HarnessSettings,
    readonly log: (line: string) => void,
  ) {
    for (const t of targets) this.records.set(t.id, emptyRecord(t));
  }

  /**
   * Starts every server first: each then idles (no CPU) while the others are measured, and its
   * peak RSS covers everything it served in this run.
   */
  async startAll(): Promise<void> {
    for (const t of this.targets) {
      const record = this.records.get(t.id)!;
      try {
        if (t.companion === "sqld") {
          const sqld = await startSqld({ directory: `${this.settings.dir}/${t.id}-data` });
          this.#companions.set(t.id, sqld);
          this.log(`${t.id}: sqld pid ${sqld.pid()} on ${sqld.url}`);
        }
        const server = await startServer(this.#spec(t));
        this.#servers.set(t.id, server);
        record.probe = await t.probe(server.origin);
        record.accepted += t.twoXxStores ? record.probe.twoXx : 0;
        this.log(`${t.id}: pid ${server.pid} on ${server.origin}; probe ${record.probe.detail}`);
        if (!record.probe.ok) record.error = `probe failed: ${record.probe.detail}`;
        else this.#live.push(t);
        if (t.beacon) await this.#countBeforeLoad(t, record);
      } catch (error) {
        record.error = message(error);
        this.log(`${t.id}: ${record.error.split("\n")[0]}`);
      }
    }
  }

  /** Rows after the probe: a refusal target must end with exactly these. */
  async #countBeforeLoad(t: Target, record: TargetRecord): Promise<void> {
    const [rows] = await countRows(this.#dbPath(t), this.settings.tableName).catch(() => [null]);
    record.storage = {
      commits: null,
      submissions: null,
      rowsBeforeLoad: rows,
      rows: null,
      table: this.settings.tableName,
      note: "",
    };
  }

  #dbPath(t: Target): string {
    return t.databaseFile?.(this.settings.dir) ?? `${this.settings.dir}/${t.id}.db`;
  }

  #spec(t: Target) {
    return t.spec(this.settings.dir, this.#companions.get(t.id)?.url);
  }

  /** Warm-up in the first round's order, then the measured rounds; returns the orders. */
  async measure(): Promise<string[][]> {
    const { rounds, warmupS, durationS, pauseS } = this.settings;
    const live = this.#live;
    const step = Math.max(1, Math.round(live.length / rounds));
    const orders = Array.from({ length: rounds }, (_, r) => rotate(live, r * step));
    for (const t of orders[0] ?? []) {
      const record = this.records.get(t.id)!;
      try {
        record.warmup = await this.#load(t, warmupS, "warmup");
      } catch (error) {
        record.error = message(error);
      }
      await sleep(pauseS * 1000);
    }
    for (let r = 0; r < rounds; r++) {
      const order = orders[r].filter((t) => this.records.get(t.id)!.error === null);
      this.log(`round ${r + 1}/${rounds}: ${order.map((t) => t.id).join(" > ")}`);
      for (const t of order) {
        const record = this.records.get(t.id)!;
        try {
          record.rounds.push(await this.#load(t, durationS, `round${r + 1}`));
        } catch (error) {
          record.error = message(error);
        }
        await sleep(pauseS * 1000);
      }
    }
    return orders.map((order) => order.map((t) => t.id));
  }

  /** One load pass that counts: passes spoiled by a server dying are discarded and redone. */
  async #load(t: Target, seconds: number, phase: string): Promise<RunRecord> {
    for (let attempt = 1;; attempt++) {
      let server = this.#servers.get(t.id)!;
      if (server.exitStatus()) server = await this.#restart(t, phase);
      let result: RunRecord | undefined;
      try {
        result = await this.#loadOnce(t, server, seconds, phase);
      } catch (error) {
        // The load generator fails outright when the server vanished before it connected.
        if (!server.exitStatus()) throw error;
      }
      if (result && !server.exitStatus()) return result;
      // Died before or under load: these numbers are not the server's; measure again.
      this.records.get(t.id)!.discardedRuns++;
      if (attempt >= MAX_ATTEMPTS) {
        throw new Error(`Cannot load ${t.id}: its server died in ${attempt} tries at ${phase}`);
      }
    }
  }

  async #loadOnce(
    t: Target,
    server: RunningServer,
    seconds: number,
    phase: string,
  ): Promise<RunRecord> {
    const s = this.settings;
    // On a shared machine, let someone else's burst (a test suite, a formatter) pass first.
    const companion = this.#companions.get(t.id);
    const pids = [
      ...[...this.#servers.values()].map((each) => each.pid),
      ...[...this.#companions.values()].map((each) => each.pid()),
    ];
    const quiet = await waitForQuiet(pids, NOISE_CORES, s.settleS * 1000);
    if (quiet.waitedMs >= 1500) {
      this.log(
        `waited ${num(quiet.waitedMs / 1000, 1)}s for a quiet machine ` +
          `(other processes at ${quiet.otherCores} cores)`,
      );
    }
    const finishCpu = startCpuWatch(companion ? [server.pid, companion.pid()] : [server.pid]);
    const finishThreads = startThreadWatch(server.pid);
    const finishCompanion = companion ? startThreadWatch(companion.pid()) : undefined;
    const loaded = await runLoad(s.gen, {
      url: server.origin + t.path,
      headers: t.headers,
      kind: t.kind,
      size: t.size,
      nonce: `${s.runId}-${t.id}-${phase}-${crypto.randomUUID().slice(0, 4)}`,
      connections: s.connections,
      threads: s.threads,
      durationS: seconds,
      timeoutS: s.timeoutS,
    });
    const threads = finishThreads();
    const companionThreads = finishCompanion?.();
    // CPU per request also counts the server's own work left after the load (the next tree head
    // over the rows just written, a WAL checkpoint): otherwise it would fall outside every round.
    // Thread utilisation stays over the load alone.
    await new Promise((resolve) => setTimeout(resolve, TAIL_MS));
    const result = runRecord(loaded, finishCpu(), threads, companionThreads);
    const record = this.records.get(t.id)!;
    record.accepted += t.twoXxStores ? result.requests - result.non2xx : 0;
    record.loadRuns++;
    this.log(
      `${phase.padEnd(7)} ${t.id.padEnd(13)} ${num(result.rps).padStart(8)} req/s  ` +
        `p50 ${num(result.p50Ms, 2)} ms  p99 ${num(result.p99Ms, 2)} ms  ` +
        `cpu/req ${num(result.cpuUsPerRequest, 1)} µs  ` +
        `main ${num(threads.mainUtilisation * 100)} %  ` +
        `non-2xx ${result.non2xx}  sock err ${socketErrors(result)}  ` +
        `other ${result.cpu.other} cores`,
    );
    return result;
  }

  /**
   * Replaces a server that exited while it should have been serving. The database file is kept,
   * so rows and 2xx still add up; commits and submissions are summed over the lifetimes.
   */
  async #restart(t: Target, phase: string): Promise<RunningServer> {
    const old = this.#servers.get(t.id)!;
    const gone = old.exitStatus()!;
    const record = this.records.get(t.id)!;
    const why = `its server (pid ${old.pid}) exited during or before ${phase} with code ` +
      `${gone.code}${gone.signal ? `, signal ${gone.signal}` : ""}; ` +
      `last stdout: ${old.stdoutTail().join(" | ") || "none"}; ` +
      `stderr: ${old.stderrTail().slice(-500) || "none"}`;
    record.lifetimes.push(await retire(t, old, "outside"));
    // Code 0 (its own SIGTERM handler ran) or death by a signal: stopped from outside. Any
    // other code is the server failing by itself, which a restart must not hide.
    const outside = gone.code === 0 || gone.signal !== null;
    if (!outside || record.lifetimes.length > MAX_RESTARTS) {
      throw new Error(`Cannot load ${t.id}: ${why}`);
    }
    this.log(`${t.id}: ${why}; restarting it${t.beacon ? " on the same database" : ""}`);
    const server = await startServer(this.#spec(t));
    this.#servers.set(t.id, server);
    return server;
  }

  killAll(): void {
    for (const sqld of this.#companions.values()) sqld.stop().catch(() => {});
    for (const server of this.#servers.values()) {
      try {
        Deno.kill(server.pid, "SIGTERM");
      } catch {
        // Already stopped.
      }
    }
  }

  /** Stops every server, then reads what each Beacon reported and stored. */
  async stopAll(): Promise<void> {
    for (const t of this.targets) {
      const server = this.#servers.get(t.id);
      if (!server) continue;
      const record = this.records.get(t.id)!;
      record.lifetimes.push(await retire(t, server, server.exitStatus() ? "outside" : "harness"));
      const lives = record.lifetimes;
      record.rss = {
        peakMiB: Math.max(...lives.map((l) => l.peakMiB)),
        sampledPeakMiB: Math.max(...lives.map((l) => l.sampledPeakMiB)),
      };
      if (t.beacon) await this.#account(t, record);
    }
    for (const sqld of this.#companions.values()) await sqld.stop().catch(() => {});
  }

  async #account(t: Target, record: TargetRecord): Promise<void> {
    const notes: string[] = [];
    let rows: number | null = null;
    let counts: { commits: number; submissions: number } | null = null;
    try {
      const [counted, why] = await countRows(this.#dbPath(t), this.settings.tableName);
      rows = counted;
      if (why) notes.push(why);
    } catch (error) {
      notes.push(`cannot count rows: ${message(error)}`);
    }
    if (t.role === "floor") {
      const lives = record.lifetimes;
      if (lives.every((l) => l.commits !== null && l.submissions !== null)) {
        counts = {
          commits: lives.reduce((sum, l) => sum + l.commits!, 0),
          submissions: lives.reduce((sum, l) => sum + l.submissions!, 0),
        };
      } else notes.push("no shutdown line on stdout");
    } else {
      try {
        counts = await countCommits(this.#dbPath(t));
        if (counts === null) notes.push("no receipt_batches table");
      } catch (error) {
        notes.push(`cannot count commits: ${message(error)}`);
      }
    }
    record.storage = {
      commits: counts?.commits ?? null,
      submissions: counts?.submissions ?? null,
      rowsBeforeLoad: record.storage?.rowsBeforeLoad ?? null,
      rows,
      table: this.settings.tableName,
      note: notes.join("; "),
    };
  }
}

/**
 * The reference floor's commits and stored rows: it answers every GET with its own two counters
 * (a Beacon's are read from its database instead, `countCommits` in ./db.ts). Undefined for a
 * server that does not answer so.
 */
export async function floorCommitCounts(
  server: RunningServer,
): Promise<{ commits: number; submissions: number } | null> {
  try {
    const response = await fetch(server.origin + "/counts", {
      signal: AbortSignal.timeout(10_000),
    });
    const text = await response.text();
    if (response.status !== 200) return null;
    if (!response.headers.get("content-type")?.startsWith("application/json")) return null;
    const { commits, writes } = JSON.parse(text);
    return typeof commits === "number" && typeof writes === "number"
      ? { commits, submissions: writes }
      : null;
  } catch {
    return null;
  }
}

/** Stops a server (or collects one that already exited) and keeps what its life showed. */
async function retire(
  t: Target,
  server: RunningServer,
  endedBy: Lifetime["endedBy"],
): Promise<Lifetime> {
  // The floor counts its commits and rows itself (and prints them when it stops); a Beacon's are
  // read from its database afterwards (`#account`).
  const floor = t.role === "floor";
  const counted = floor && server.exitStatus() === undefined
    ? await floorCommitCounts(server)
    : null;
  const stopped = await server.stop();
  const rss = server.rss.report();
  const event: Record<string, unknown> | null = floor
    ? counted ?? findEvent(stopped.stdout, "shutdown")
    : null;
  return {
    pid: server.pid,
    code: stopped.code,
    signal: stopped.signal,
    endedBy,
    peakMiB: rss.peakMiB,
    sampledPeakMiB: rss.sampledPeakMiB,
    commits: typeof event?.commits === "number" ? event.commits : null,
    // The reference floor names its stored rows `writes`.
    submissions: typeof event?.submissions === "number"
      ? event.submissions
      : typeof event?.writes === "number"
      ? event.writes
      : null,
  };
}
