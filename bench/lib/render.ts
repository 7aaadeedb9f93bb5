/**
 * The text report of a bench run: measurements, per-thread CPU, ratios, storage, integrity
 * checks, and last the table of the targets with PASS / MISS.
 *
 * @module
 */

import type { Check, Goal, Ratios } from "./checks.ts";
import { NOISE_CORES } from "./cpu.ts";
import type { TargetRecord } from "./records.ts";
import { num, table, times } from "./report.ts";
import { TICKS_PER_SECOND } from "./threads.ts";

/** What the report says about how the run was made. */
export interface RenderSettings {
  rounds: number;
  durationS: number;
  connections: number;
  threads: number;
  gen: string;
}

/** The last `bench:uploads` result, when there is one. */
export interface UploadsSummary {
  at: string;
  head: string;
  peaks: { mode: string; peakMiB: number }[];
  limitMiB: number;
}

/** Cores per thread name over every measured round of a target. */
export function threadCores(r: TargetRecord): { name: string; cores: number }[] {
  const ticks: Record<string, number> = {};
  let wall = 0;
  for (const round of r.rounds) {
    wall += round.threads.wallS;
    for (const [name, used] of Object.entries(round.threads.byName)) {
      ticks[name] = (ticks[name] ?? 0) + used;
    }
  }
  if (wall === 0) return [];
  return Object.entries(ticks)
    .map(([name, used]) => ({ name, cores: used / TICKS_PER_SECOND / wall }))
    .sort((a, b) => b.cores - a.cores);
}

function measurements(all: TargetRecord[], s: RenderSettings): string {
  return [
    `Medians of the quiet rounds (others below ${NOISE_CORES} cores; all ${s.rounds} when none ` +
    `was quiet) of ${s.durationS}s, ${s.gen}, ${s.connections} connections, ` +
    `${s.threads} threads, loopback. CPU: user+system ticks of every thread of the serving ` +
    `process over the round (/proc/<pid>/task/*/stat, plus threads that ended in it, from ` +
    `/proc/<pid>/stat), per response; main busy: ticks of the thread whose tid is the pid over ` +
    `wall time; server cores: all ticks over wall time.`,
    table(
      [
        "target",
        "rounds",
        "req/s",
        "p50 ms",
        "p99 ms",
        "CPU µs/req",
        "main busy",
        "server cores",
        "peak RSS MiB",
        "non-2xx",
        "sock err",
        "other cores",
      ],
      all.map((r) => [
        r.error !== null ? `${r.id} (FAILED)` : r.id,
        r.median
          ? `${r.median.rounds}/${r.rounds.length}${r.median.quietOnly ? "" : " busy"}`
          : "n/a",
        num(r.median?.rps),
        num(r.median?.p50Ms, 2),
        num(r.median?.p99Ms, 2),
        num(r.median?.cpuUsPerRequest, 1),
        r.median ? `${num(r.median.mainUtilisation * 100)} %` : "n/a",
        num(r.median?.serverCores, 2),
        num(r.rss?.peakMiB, 1),
        r.median ? num(r.non2xx) : "n/a",
        r.median ? num(r.socketErrors) : "n/a",
        r.median ? num(r.maxOtherCpu, 2) : "n/a",
      ]),
    ),
  ].join("\n");
}

function threadSplit(all: TargetRecord[]): string {
  const rows = all.filter((r) => r.rounds.length > 0).map((r) => {
    const split = threadCores(r);
    const main = split.find((t) => t.name.startsWith("main"));
    const others = split.filter((t) => t !== main);
    const top = others.slice(0, 3).map((t) => `${t.name} ${num(t.cores, 2)}`).join(", ");
    return [
      r.id,
      num(main?.cores, 2),
      num(others.reduce((sum, t) => sum + t.cores, 0), 2),
      top || "none",
    ];
  });
  return table(["threads (cores)", "main", "others", "busiest others"], rows);
}

function notes(all: TargetRecord[]): string[] {
  const parts: string[] = [];
  const busy = all.filter((r) => r.median && r.maxOtherCpu > NOISE_CORES);
  if (busy.length > 0) {
    const noQuiet = all.filter((r) => r.median && !r.median.quietOnly);
    parts.push(
      `NOTE: other processes used up to ${num(Math.max(...busy.map((r) => r.maxOtherCpu)), 2)} ` +
        `cores in some rounds of ${busy.map((r) => r.id).join(", ")}; those rounds are left ` +
        "out of the medians (the `rounds` column counts the ones kept)" +
        (noQuiet.length > 0
          ? `, except for ${noQuiet.map((r) => r.id).join(", ")}, which had no quiet round: ` +
            "re-run those on a quieter machine"
          : ""),
    );
  }
  const restarted = all.filter((r) => r.lifetimes.length > 1);
  if (restarted.length > 0) {
    parts.push(
      "NOTE: stopped from outside the harness and restarted (a Beacon on the same database): " +
        restarted.map((r) => `${r.id} (${r.lifetimes.length - 1}x, ${r.discardedRuns} runs redone)`)
          .join(", "),
    );
  }
  return parts;
}

function storage(all: TargetRecord[]): string | null {
  const stored = all.filter((r) => r.storage);
  if (stored.length === 0) return null;
  return table(
    [
      "storage",
      "2xx stored",
      "rows before load",
      "rows after",
      "submissions",
      "commits",
      "per commit",
    ],
    stored.map((r) => {
      const s = r.storage!;
      return [
        r.id,
        num(r.accepted),
        num(s.rowsBeforeLoad),
        num(s.rows),
        num(s.submissions),
        num(s.commits),
        s.commits && s.submissions !== null ? num(s.submissions / s.commits, 1) : "n/a",
      ];
    }),
  );
}

/**
 * The remote path beside the embedded one: the Beacon's own CPU per request, sqld's, and their
 * sum, against the embedded path's (which includes its SQLite work), and the share of the req/s
 * gap that sqld's CPU on the same cores accounts for (if the two cores are the bottleneck, the
 * sum of CPU per request sets the throughput: rps ≈ cores / CPU per request).
 */
function remotePath(records: Map<string, TargetRecord>): string | null {
  const remote = records.get("beacon-sqld")?.median;
  const embedded = records.get("send-message")?.median;
  if (!remote || !embedded) return null;
  const own = remote.cpuUsPerRequest;
  const sqld = remote.companionUsPerRequest ?? null;
  const both = own !== null && sqld !== null ? own + sqld : null;
  const rpsRatio = remote.rps / embedded.rps;
  // The req/s the remote path would reach if only the Beacon's own CPU counted, at the cores
  // the pair actually used: how much of the gap sqld's share explains.
  // With the cores the bottleneck, req/s scales as 1 / CPU per request: without sqld's share,
  // the remote path would reach rps × both / own; the part of the gap that closes is sqld's.
  const withoutSqld = both !== null && own !== null && own > 0 ? remote.rps * both / own : null;
  const explained = withoutSqld !== null && embedded.rps > remote.rps
    ? Math.min(1, (withoutSqld - remote.rps) / (embedded.rps - remote.rps))
    : null;
  return [
    "Remote path (a real sqld on the same two cores) beside the embedded path, same run:",
    table(
      ["path", "req/s", "Beacon CPU µs/req", "sqld CPU µs/req", "both", "req/s vs embedded"],
      [
        [
          "send-message (embedded)",
          num(embedded.rps),
          num(embedded.cpuUsPerRequest, 1),
          "-",
          num(
            embedded.cpuUsPerRequest,
            1,
          ),
          "1.00x",
        ],
        ["beacon-sqld", num(remote.rps), num(own, 1), num(sqld, 1), num(both, 1), times(rpsRatio)],
        ...floorOnSqld(records, embedded.rps),
      ],
    ),
    explained === null
      ? "sqld's share of the gap: n/a"
      : `sqld's CPU is ${num(sqld! / both! * 100)} % of the pair's CPU per request; on the ` +
        `shared cores it accounts for ${num(explained * 100)} % of the req/s gap to the ` +
        "embedded path.",
  ].join("\n");
}

/** The reference floor on its own sqld, as a row of the remote table, when it ran. */
function floorOnSqld(records: Map<string, TargetRecord>, embeddedRps: number): string[][] {
  const floor = records.get("floor-ref-sqld")?.median;
  if (!floor) return [];
  const own = floor.cpuUsPerRequest;
  const sqld = floor.companionUsPerRequest ?? null;
  const both = own !== null && sqld !== null ? own + sqld : null;
  return [[
    "floor-ref-sqld (its own sqld)",
    num(floor.rps),
    num(own, 1),
    num(sqld, 1),
    num(both, 1),
    times(floor.rps / embeddedRps),
  ]];
}

function goalTable(goals: Goal[], uploads: UploadsSummary | null): string {
  const verdict = (g: Goal) => (g.pass === null ? "n/a" : g.pass ? "PASS" : "MISS");
  const lines = [
    "Targets, each a ratio within this run:",
    table(
      ["target", "measured", "bound", "result"],
      goals.map((g) => [g.name, g.measured, g.bound, verdict(g)]),
    ),
  ];
  lines.push(
    uploads
      ? `200 concurrent hostile 1 MiB uploads, peak RSS < ${uploads.limitMiB} MiB: not measured ` +
        `here; run \`deno task bench:uploads\`. Last recorded (${uploads.at}, ${uploads.head}): ` +
        uploads.peaks.map((p) => `${p.mode} ${num(p.peakMiB, 1)} MiB`).join(", ") + "."
      : "200 concurrent hostile 1 MiB uploads: not measured here; run `deno task bench:uploads`.",
  );
  return lines.join("\n");
}

/** The whole report. */
export function render(
  records: Map<string, TargetRecord>,
  rt: Record<string, Ratios>,
  checks: Check[],
  goals: Goal[],
  settings: RenderSettings,
  uploads: UploadsSummary | null,
): string {
  const all = [...records.values()];
  const parts: string[] = [measurements(all, settings), ...notes(all), threadSplit(all)];
  parts.push(table(
    [
      "ratios",
      "req/s vs echo",
      "req/s vs SDK",
      "CPU/req vs echo",
      "CPU/req vs floor-ref",
      "req/s vs floor-ref",
      "p99 vs echo",
      "RSS vs echo",
    ],
    all.map((r) => [
      r.id,
      times(rt[r.id].rpsVsEcho),
      times(rt[r.id].rpsVsSdk),
      times(rt[r.id].cpuVsEcho),
      times(rt[r.id].cpuVsReference ?? null),
      times(rt[r.id].rpsVsReference ?? null),
      times(rt[r.id].p99VsEcho),
      times(rt[r.id].rssVsEcho),
    ]),
  ));
  const remote = remotePath(records);
  if (remote) parts.push(remote);
  const stored = storage(all);
  if (stored) parts.push(stored);
  if (checks.length > 0) {
    parts.push(
      "Integrity:\n" +
        checks.map((c) => `${c.pass ? "ok  " : "FAIL"}  ${c.name}: ${c.detail}`).join("\n"),
    );
  }
  parts.push(goalTable(goals, uploads));
  return parts.join("\n\n");
}
