/**
 * A/B of two checkouts of the Beacon on a shared, noisy machine: the echo and, from each
 * checkout, its own `send-message` and `native-submit` servers (each started by that checkout's
 * `bench/lib/targets.ts`, so with its own flags and code), all running at once and loaded in
 * short alternating bursts, so every server sees the same background load on average. It reports,
 * per server, CPU µs per request pooled over the bursts (all threads, `/proc`) and its ratio to
 * the echo, its median req/s over bursts, and per checkout the medians over bursts of B's CPU per
 * request and req/s over A's (adjacent in time, so a neighbour's burst moves both). A server bound
 * by its serving thread turns CPU into req/s one for one; one that waits (a linger, a lock) shows
 * it only in req/s.
 *
 * `deno run -A bench/ab.ts <checkout A> <checkout B> [bursts=12] [seconds=3] [targets]`
 *
 * `targets` (comma-separated, default `send-message,native-submit`) may name `beacon-sqld`: each
 * side then gets its own real sqld, whose CPU per request is printed beside.
 *
 * Only loopback targets, every burst bounded by its duration.
 *
 * @module
 */
import { ensureLoadGenerator, runLoad } from "./lib/load.ts";
import { type RunningServer, startServer } from "./lib/process.ts";
import { beaconNpmCache } from "./lib/servers.ts";
import { startThreadWatch } from "./lib/threads.ts";
import { TAIL_MS } from "./lib/harness.ts";
import { type Sqld, startSqld } from "../tests/support/sqld.ts";
import type { Target } from "./lib/targets.ts";

const [a, b, burstsText = "12", secondsText = "3", targetsText = "send-message,native-submit"] =
  Deno.args;
const ids = targetsText.split(",").map((id) => id.trim()).filter((id) => id !== "");
if (a === undefined || b === undefined) {
  console.error("usage: deno run -A bench/ab.ts <checkout A> <checkout B> [bursts] [seconds]");
  Deno.exit(2);
}
const bursts = Number(burstsText);

const seconds = Number(secondsText);
const npmCache = await beaconNpmCache();
const gen = await ensureLoadGenerator("wrk", console.log);
const dir = await Deno.makeTempDir({ prefix: "beacon-ab-" });

interface Entry {
  name: string;
  target: Target;
  server: RunningServer;
  ticks: number;
  requests: number;
  perBurst: number[];
  /** req/s of each burst. */
  rpsPerBurst: number[];
  sqld?: Sqld;
  sqldTicks: number;
}
const entries: Entry[] = [];
for (const [label, root] of [["A", a], ["B", b]] as const) {
  await Deno.mkdir(`${dir}/${label}`);
  const { makeTargets } = await import(`${root}/bench/lib/targets.ts`);
  const targets: Target[] = makeTargets({
    size: 600,
    npmCache,
    entry: "src/adapter/deno/server.ts",
  });
  for (const id of label === "A" ? ["echo", ...ids] : ids) {
    const target = targets.find((t) => t.id === id)!;
    const sqld = target.companion === "sqld"
      ? await startSqld({ directory: `${dir}/${label}/${id}-data` })
      : undefined;
    const server = await startServer(target.spec(`${dir}/${label}`, sqld?.url));
    entries.push({
      name: `${label} ${id}`,
      target,
      server,
      ticks: 0,
      requests: 0,
      perBurst: [],
      rpsPerBurst: [],
      sqld,
      sqldTicks: 0,
    });
  }
}
for (let burst = 0; burst < bursts + 1; burst++) {
  const order = burst % 2 === 0 ? entries : [...entries].reverse();
  for (const entry of order) {
    const finish = startThreadWatch(entry.server.pid);
    const finishSqld = entry.sqld ? startThreadWatch(entry.sqld.pid()) : undefined;
    const load = await runLoad(gen, {
      url: entry.server.origin + entry.target.path,
      headers: entry.target.headers,
      kind: entry.target.kind,
      size: 600,
      nonce: `${entry.name.replace(" ", "-")}-${burst}-${Date.now()}`,
      connections: 50,
      threads: 2,
      durationS: seconds,
      timeoutS: 10,
    });
    // The server's own work after its load (the next tree head over the rows just written, a
    // WAL checkpoint) is counted in its own burst: otherwise it falls into the next window, which
    // is the same server's for the side that runs twice in a row when the order turns.
    await new Promise((resolve) => setTimeout(resolve, TAIL_MS));
    const cpu = finish();
    const sqldCpu = finishSqld?.();
    // A refusal target refuses every request; any other must answer each with a 2xx.
    if (load.non2xx > 0 && entry.target.role !== "refuse") {
      throw new Error(`${entry.name}: ${load.non2xx} answers >= 400`);
    }
    if (burst === 0) continue; // warm-up
    entry.ticks += cpu.ticks;
    entry.sqldTicks += sqldCpu?.ticks ?? 0;
    entry.requests += load.requests;
    entry.perBurst.push((cpu.ticks * 10_000) / load.requests);
    entry.rpsPerBurst.push(load.rps);
  }
}
for (const entry of entries) {
  await entry.server.stop();
  await entry.sqld?.stop();
}
const echo = entries[0];
const echoUs = (echo.ticks * 10_000) / echo.requests;
const median = (values: number[]) => [...values].sort((x, y) => x - y)[values.length >> 1];
console.log(`${bursts} bursts of ${seconds}s, 50 connections; A = ${a}, B = ${b}`);
for (const entry of entries) {
  const us = (entry.ticks * 10_000) / entry.requests;
  console.log(
    `${entry.name.padEnd(16)} ${us.toFixed(1).padStart(7)} µs/req  ${
      (us / echoUs).toFixed(2)
    }x echo  ${Math.round(median(entry.rpsPerBurst))} req/s  (${entry.requests} requests)` +
      (entry.sqld
        ? `  sqld ${((entry.sqldTicks * 10_000) / entry.requests).toFixed(1)} µs/req`
        : ""),
  );
}
for (const id of ids) {
  const ea = entries.find((e) => e.name === `A ${id}`)!;
  const eb = entries.find((e) => e.name === `B ${id}`)!;
  const ratios = ea.perBurst.map((value, i) => eb.perBurst[i] / value);
  const rps = ea.rpsPerBurst.map((value, i) => eb.rpsPerBurst[i] / value);
  console.log(
    `${id}: B/A medians over bursts: CPU per request ${median(ratios).toFixed(3)}, ` +
      `req/s ${median(rps).toFixed(3)}`,
  );
}
await Deno.remove(dir, { recursive: true });
