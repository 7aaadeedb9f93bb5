/**
 * The performance targets (issue 22's bounds for the durable paths, issue 13's for the refusals,
 * latency and memory), each a ratio measured in the same run, and the
 * integrity checks that make the numbers mean what they say (every 2xx stored, refusals stored
 * nothing, the group commit groups).
 *
 * @module
 */

import type { TargetRecord } from "./records.ts";
import { num, ratio, times } from "./report.ts";
import type { Target } from "./targets.ts";

/** One target of the issue, measured. `pass` is null when a side of the ratio is missing. */
export interface Goal {
  name: string;
  measured: string;
  bound: string;
  pass: boolean | null;
}

/** One integrity check. */
export interface Check {
  name: string;
  pass: boolean;
  detail: string;
}

/** The ratios of one target against the echo and the SDK server. */
export interface Ratios {
  rpsVsEcho: number | null;
  rpsVsSdk: number | null;
  cpuVsEcho: number | null;
  p99VsEcho: number | null;
  rssVsEcho: number | null;
  /** CPU per request over the reference floor's (`floor-ref`, the SendMessage job alone). */
  cpuVsReference: number | null;
  /** req/s over the reference floor's. */
  rpsVsReference: number | null;
}

/** The reference floor's target id (../shared/floor/server.ts, the full job). */
export const REFERENCE_FLOOR = "floor-ref";

/** Every target's ratios against the echo and the SDK measured in the same run. */
export function ratios(records: Map<string, TargetRecord>): Record<string, Ratios> {
  const echo = records.get("echo");
  const sdk = records.get("sdk");
  const reference = records.get(REFERENCE_FLOOR);
  return Object.fromEntries(
    [...records.values()].map((r) => [r.id, {
      rpsVsEcho: ratio(r.median?.rps, echo?.median?.rps),
      rpsVsSdk: ratio(r.median?.rps, sdk?.median?.rps),
      cpuVsEcho: ratio(r.median?.cpuUsPerRequest, echo?.median?.cpuUsPerRequest),
      p99VsEcho: ratio(r.median?.p99Ms, echo?.median?.p99Ms),
      rssVsEcho: ratio(r.rss?.peakMiB, echo?.rss?.peakMiB),
      cpuVsReference: ratio(r.median?.cpuUsPerRequest, reference?.median?.cpuUsPerRequest),
      rpsVsReference: ratio(r.median?.rps, reference?.median?.rps),
    }]),
  );
}

/**
 * Database writes a refusal target made under load: rows added since the probe (counted in its
 * database file before the warm-up and after the server stopped), and its commits beyond the rows
 * the probe left (each of those rows took one commit). Reads are not
 * counted: the Beacon exposes no read counter, and the bench does not change the server.
 */
export function refusalWrites(r: TargetRecord): { rows: number; commits: number } | null {
  const s = r.storage;
  if (!s || s.rows === null || s.rowsBeforeLoad === null || s.commits === null) return null;
  return { rows: s.rows - s.rowsBeforeLoad, commits: Math.max(0, s.commits - s.rowsBeforeLoad) };
}

/** The targets, in its order; `uploads` reads the last `bench:uploads` result. */
export function goals(records: Map<string, TargetRecord>): Goal[] {
  const rt = ratios(records);
  const out: Goal[] = [];
  const has = (id: string) => records.get(id)?.median != null;
  const atMost = (id: string, what: string, value: number | null, bound: number) => {
    if (!records.has(id)) return;
    out.push({
      name: `${id} ${what}`,
      measured: times(value),
      bound: `<= ${bound}x`,
      pass: value === null || !has(id) ? null : value <= bound,
    });
  };
  const atLeast = (id: string, what: string, value: number | null, bound: number) => {
    if (!records.has(id)) return;
    out.push({
      name: `${id} ${what}`,
      measured: times(value),
      bound: `>= ${bound}x`,
      pass: value === null || !has(id) ? null : value >= bound,
    });
  };
  // Durable SendMessage against the reference floor doing the same job in the same run.
  if (records.has(REFERENCE_FLOOR)) {
    atMost(
      "send-message",
      "CPU per request vs floor-ref",
      rt["send-message"]?.cpuVsReference ?? null,
      1.15,
    );
    atLeast("send-message", "req/s vs floor-ref", rt["send-message"]?.rpsVsReference ?? null, 0.9);
  }
  // The same job with tree heads on both sides: the floor signs a head every 2 s over the rows
  // it reads back as committed, as the Beacon does (../shared/floor, `HEADS=2000 HEADS_FROM=db`).
  const vs = (id: string, floor: string, field: "cpuUsPerRequest" | "rps") =>
    ratio(records.get(id)?.median?.[field], records.get(floor)?.median?.[field]);
  // The two bounds a Beacon target is held to against its floor: CPU per request and req/s.
  const againstFloor = (id: string, floor: string, cpu: string) => {
    atMost(id, `${cpu} per request vs ${floor}`, vs(id, floor, "cpuUsPerRequest"), 1.15);
    atLeast(id, `req/s vs ${floor}`, vs(id, floor, "rps"), 0.9);
  };
  if (records.has("floor-ref-heads")) againstFloor("send-message", "floor-ref-heads", "CPU");
  // On sqld, each with its own sqld: the Beacon's own CPU against the floor's own CPU.
  if (records.has("floor-ref-sqld") && records.has("beacon-sqld")) {
    againstFloor("beacon-sqld", "floor-ref-sqld", "own CPU");
  }
  atMost("native-submit", "CPU per request vs echo", rt["native-submit"]?.cpuVsEcho ?? null, 8);
  // The remote path does no SQLite work of its own: its own CPU per request must not exceed the
  // embedded path's. sqld's CPU is reported beside it (the render's remote table).
  if (records.has("beacon-sqld") && records.has("send-message")) {
    const remote = records.get("beacon-sqld")!.median?.cpuUsPerRequest;
    const embedded = records.get("send-message")!.median?.cpuUsPerRequest;
    atMost("beacon-sqld", "own CPU per request vs send-message", ratio(remote, embedded), 1);
  }
  atLeast("send-message", "req/s vs SDK", rt["send-message"]?.rpsVsSdk ?? null, 3);
  atLeast("send-message", "req/s vs echo", rt["send-message"]?.rpsVsEcho ?? null, 0.125);
  for (const id of ["refuse-429", "refuse-32009", "refuse-404"]) {
    const r = records.get(id);
    if (!r) continue;
    atLeast(id, "req/s vs echo", rt[id]?.rpsVsEcho ?? null, 0.5);
    const writes = refusalWrites(r);
    out.push({
      name: `${id} database operations under load`,
      measured: writes === null ? "n/a" : `${writes.rows} rows, ${writes.commits} commits`,
      bound: "0 rows, 0 commits",
      pass: writes === null || !r.median ? null : writes.rows === 0 && writes.commits === 0,
    });
  }
  const beacons = [...records.values()].filter((r) => r.role === "accept" || r.role === "refuse");
  for (const r of beacons) atMost(r.id, "p99 vs echo", rt[r.id].p99VsEcho, 3);
  for (const r of beacons) atMost(r.id, "peak RSS vs echo", rt[r.id].rssVsEcho, 2);
  return out;
}

/** Integrity checks: each target ran, and storage adds up. */
export function integrity(
  targets: readonly Target[],
  records: Map<string, TargetRecord>,
  connections: number,
): Check[] {
  const checks: Check[] = [];
  const add = (name: string, pass: boolean, detail: string) => checks.push({ name, pass, detail });
  for (const t of targets) {
    const r = records.get(t.id)!;
    if (r.error !== null) {
      add(`${t.id} ran`, false, r.error.split("\n")[0]);
      continue;
    }
    if (!t.beacon || !r.median) continue;
    const restarts = r.lifetimes.length - 1;
    if (t.role === "accept" || t.role === "floor") {
      add(
        `${t.id} all answers 2xx`,
        r.non2xx === 0 && r.socketErrors === 0,
        `${r.non2xx} non-2xx, ${r.socketErrors} socket errors`,
      );
    } else if (t.id !== "refuse-32009") {
      // wrk sees -32009 as a 200; the probe checked its code, the row count checks the rest.
      // A restarted rate limiter lets one submission through again, hence the allowance.
      const allowed = t.id === "refuse-429" ? restarts : 0;
      add(
        `${t.id} every answer refused`,
        r.requests - r.non2xx <= allowed,
        `${r.non2xx} of ${r.requests} non-2xx`,
      );
    }
    const s = r.storage;
    if (!s) continue;
    if (s.commits === null || s.submissions === null) {
      add(`${t.id} commits counted`, false, s.note || "commits/submissions missing");
    }
    if (s.rows === null) {
      add(`${t.id} rows counted`, false, s.note);
      continue;
    }
    if (t.role === "accept" || t.role === "floor") {
      // Every 2xx the client saw must be stored; a few more may be: wrk drops its in-flight
      // requests when a run ends, after the server may already have committed them.
      const inFlightBound = connections * (r.loadRuns + restarts);
      add(
        `${t.id} every 2xx stored`,
        s.rows >= r.accepted && s.rows <= r.accepted + inFlightBound,
        `${num(s.rows)} rows for ${num(r.accepted)} 2xx ` +
          `(at most ${num(inFlightBound)} abandoned in flight)`,
      );
    }
    if (s.submissions !== null) {
      add(
        // A Beacon's: every stored row lies in a commit's signed batch.
        `${t.id} rows == rows committed`,
        s.rows === s.submissions,
        `${num(s.rows)} rows, ${num(s.submissions)} committed`,
      );
    }
    if (s.commits !== null && s.submissions !== null && s.submissions > 0) {
      // Group commit: each stored submission rides in exactly one commit, many per commit.
      add(
        `${t.id} group commit (commits <= submissions)`,
        s.commits >= 1 && s.commits <= s.submissions,
        `${num(s.submissions)} submissions in ${num(s.commits)} commits = ` +
          `${num(s.submissions / Math.max(1, s.commits), 1)} per commit`,
      );
    }
  }
  return checks;
}
