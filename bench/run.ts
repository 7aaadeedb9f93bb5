/**
 * `deno task bench`: one run, one machine, one load generator, every target.
 *
 * Starts each target's server (the bare `Deno.serve` echo, the `@a2a-js/sdk` Express reference,
 * and one Beacon process per Beacon scenario, each with its own database file, started as
 * `deno task start` starts it), warms each one up, then loads them in measured rounds whose order
 * rotates, so no target always runs first or last on a machine whose state drifts. Reports, per
 * target, medians of req/s, p50/p99, the server's CPU per request over all its threads, its main
 * thread's utilisation, its peak RSS; ratios against the echo measured in the same run; the
 * storage accounting; and last the targets with PASS/MISS. Writes
 * bench/results/latest.json.
 *
 * Usage: `deno run -A bench/run.ts [--rounds=3] [--duration=10] [--warmup=3]
 *   [--connections=50] [--threads=2] [--only=echo,sdk] [--skip=...] [--loadgen=wrk|autocannon]
 *   [--pause=1] [--size=600] [--out=bench/results/latest.json] [--table=submissions] [--keep]
 *   [--strict] [--beacon=src/adapter/deno/server.ts] [--settle=20] [--timeout=10]`
 *
 * `--report=bench/results/latest.json` prints an earlier result again and loads nothing.
 *
 * @module
 */

import { goals, integrity, ratios } from "./lib/checks.ts";
import { runTargets } from "./lib/harness.ts";
import { ensureLoadGenerator, type LoadGenerator, loadGeneratorVersion } from "./lib/load.ts";
import { lastUploads, machine } from "./lib/machine.ts";
import { nonNegative, parseOptions, positive } from "./lib/options.ts";
import { summarise, type TargetRecord } from "./lib/records.ts";
import { render } from "./lib/render.ts";
import {
  assertBeaconExists,
  BEACON_ENTRY,
  beaconNpmCache,
  ensureSdkInstalled,
  gitState,
  ROOT,
  toolVersions,
} from "./lib/servers.ts";
import { makeTargets, selectTargets, type Target } from "./lib/targets.ts";

const OPTIONS = {
  rounds: { type: "string" },
  duration: { type: "string" },
  warmup: { type: "string" },
  connections: { type: "string" },
  threads: { type: "string" },
  pause: { type: "string" },
  settle: { type: "string" },
  size: { type: "string" },
  timeout: { type: "string" },
  table: { type: "string", default: "submissions" },
  out: { type: "string", default: `${ROOT}/bench/results/latest.json` },
  loadgen: { type: "string" },
  only: { type: "string" },
  skip: { type: "string" },
  beacon: { type: "string", default: BEACON_ENTRY },
  report: { type: "string" },
  keep: { type: "boolean", default: false },
  strict: { type: "boolean", default: false },
} as const;

const log = (line: string) => console.log(`· ${line}`);

/** The run's settings from the command line. */
function settingsFrom(args: readonly string[]) {
  const o = parseOptions(args, OPTIONS);
  if (o.loadgen !== undefined && o.loadgen !== "wrk" && o.loadgen !== "autocannon") {
    throw new Error(`Cannot use --loadgen=${o.loadgen}: choose wrk or autocannon`);
  }
  return {
    rounds: positive(o.rounds, "rounds", 3),
    durationS: positive(o.duration, "duration", 10),
    warmupS: positive(o.warmup, "warmup", 3),
    connections: positive(o.connections, "connections", 50),
    threads: positive(o.threads, "threads", 2),
    pauseS: nonNegative(o.pause, "pause", 1),
    settleS: nonNegative(o.settle, "settle", 20),
    size: positive(o.size, "size", 600),
    timeoutS: positive(o.timeout, "timeout", 10),
    tableName: o.table!,
    out: o.out!,
    loadgen: o.loadgen as LoadGenerator | undefined,
    only: o.only,
    skip: o.skip,
    entry: o.beacon!,
    report: o.report,
    keep: o.keep,
    strict: o.strict,
  };
}

type Settings = ReturnType<typeof settingsFrom>;

/** Medians, ratios, checks, targets and the printed report of a run's records. */
function analyse(
  records: Map<string, TargetRecord>,
  targets: readonly Target[],
  s: Pick<Settings, "rounds" | "durationS" | "connections" | "threads">,
  gen: string,
) {
  summarise(records.values());
  const rt = ratios(records);
  const checks = integrity(targets, records, s.connections);
  const measuredGoals = goals(records);
  const uploads = lastUploads(`${ROOT}/bench/results/upload_memory.json`);
  const text = render(records, rt, checks, measuredGoals, { ...s, gen }, uploads);
  return { rt, checks, measuredGoals, uploads, text };
}

/** `--report=file`: prints an earlier result again with today's summary rules; loads nothing. */
function reprint(file: string, targets: readonly Target[]): number {
  const saved = JSON.parse(Deno.readTextFileSync(file));
  const records = new Map<string, TargetRecord>(Object.entries(saved.targets));
  const ran = targets.filter((t) => records.has(t.id));
  const gen = String(saved.tools?.loadGenerator ?? "wrk").split(" ")[0];
  console.log(analyse(records, ran, saved.settings, gen).text);
  return 0;
}

/** Picks the targets and readies what they need (the load generator, the SDK's packages). */
async function prepare(s: Settings) {
  const npmCache = await beaconNpmCache();
  const chosen = selectTargets(makeTargets({ ...s, npmCache }), s.only, s.skip);
  for (const t of chosen) {
    if (t.unavailable !== undefined) log(`${t.id}: not measured: ${t.unavailable}`);
  }
  const targets = chosen.filter((t) => t.unavailable === undefined);
  if (targets.length === 0) throw new Error("Cannot run: no target selected");
  if (targets.some((t) => t.beacon)) assertBeaconExists(s.entry);
  const gen = await ensureLoadGenerator(s.loadgen, log);
  if (targets.some((t) => t.id === "sdk")) await ensureSdkInstalled(log);
  return { targets, gen };
}

/** Loads every target once, in a temporary folder for the Beacons' databases. */
async function load(s: Settings, targets: Target[], gen: LoadGenerator) {
  const runId = crypto.randomUUID().slice(0, 8);
  const dir = await Deno.makeTempDir({ prefix: "beacon-bench-" });
  log(`run ${runId}: ${targets.map((t) => t.id).join(", ")}; ${gen}; data in ${dir}`);
  log(
    `settings: ${s.connections} connections, ${s.threads} threads, warm-up ${s.warmupS}s, ` +
      `${s.rounds} rounds x ${s.durationS}s, pause ${s.pauseS}s, body ${s.size} bytes`,
  );
  try {
    return await runTargets(targets, { ...s, gen, runId, dir }, log);
  } finally {
    if (s.keep) log(`kept ${dir}`);
    else await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}

async function write(out: string, result: unknown): Promise<void> {
  await Deno.mkdir(out.replace(/\/[^/]*$/, ""), { recursive: true });
  await Deno.writeTextFile(out, JSON.stringify(result, null, 2) + "\n");
  console.log(`\nwrote ${out.startsWith(ROOT) ? out.slice(ROOT.length + 1) : out}`);
}

async function main(): Promise<number> {
  const s = settingsFrom(Deno.args);
  if (s.report !== undefined) {
    return reprint(s.report, makeTargets({ ...s, npmCache: await beaconNpmCache() }));
  }
  const { targets, gen } = await prepare(s);
  const startedAt = new Date().toISOString();
  const git = await gitState(); // before the servers start: others may commit meanwhile
  const { records, order } = await load(s, targets, gen);
  const { rt, checks, measuredGoals, uploads, text } = analyse(records, targets, s, gen);
  console.log("\n" + text);
  await write(s.out, {
    schema: "beacon-bench/2",
    command: ["deno", "run", "-A", "bench/run.ts", ...Deno.args].join(" "),
    startedAt,
    finishedAt: new Date().toISOString(),
    git,
    machine: machine(),
    tools: { ...(await toolVersions()), loadGenerator: await loadGeneratorVersion(gen) },
    settings: { ...s, out: undefined },
    order,
    targets: Object.fromEntries([...records.values()].map((r) => [r.id, r])),
    ratios: rt,
    goals: measuredGoals,
    checks,
    lastUploads: uploads,
  });
  if ([...records.values()].some((r) => r.error !== null) || checks.some((c) => !c.pass)) return 1;
  return s.strict && measuredGoals.some((g) => g.pass !== true) ? 1 : 0;
}

if (import.meta.main) {
  try {
    Deno.exit(await main());
  } catch (error) {
    console.error(error instanceof Error ? error.message : error);
    Deno.exit(2);
  }
}
