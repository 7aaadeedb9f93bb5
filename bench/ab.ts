/**
 * A/B of two checkouts of the Beacon on a shared, noisy machine: the echo and, from each
 * checkout, its own `send-message` and `native-submit` servers (each started by that checkout's
 * `bench/lib/targets.ts`, so with its own flags and code), all running at once and loaded in
 * short alternating bursts, so every server sees the same background load on average. It reports,
 * per server, CPU µs per request pooled over the bursts (all threads, `/proc`) and its ratio to
 * the echo, and per checkout the median over bursts of B's CPU per request over A's (adjacent in
 * time, so a neighbour's burst moves both).
 *
 * `deno run -A bench/ab.ts <checkout A> <checkout B> [bursts=12] [seconds=3]`
 *
 * Only loopback targets, every burst bounded by its duration.
 *
 * @module
 */
import { ensureLoadGenerator, runLoad } from "./lib/load.ts";
import { type RunningServer, startServer } from "./lib/process.ts";
import { beaconNpmCache } from "./lib/servers.ts";
import { startThreadWatch } from "./lib/threads.ts";
import type { Target } from "./lib/targets.ts";

const [a, b, burstsText = "12", secondsText = "3"] = Deno.args;
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
  for (
    const id of label === "A" ? ["echo", "send-message", "native-submit"] : [
      "send-message",
      "native-submit",
    ]
  ) {
    const target = targets.find((t) => t.id === id)!;
    const server = await startServer(target.spec(`${dir}/${label}`));
    entries.push({ name: `${label} ${id}`, target, server, ticks: 0, requests: 0, perBurst: [] });
  }
}
for (let burst = 0; burst < bursts + 1; burst++) {
  const order = burst % 2 === 0 ? entries : [...entries].reverse();
  for (const entry of order) {
    const finish = startThreadWatch(entry.server.pid);
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
    const cpu = finish();
    if (load.non2xx > 0) throw new Error(`${entry.name}: ${load.non2xx} answers >= 400`);
    if (burst === 0) continue; // warm-up
    entry.ticks += cpu.ticks;
    entry.requests += load.requests;
    entry.perBurst.push((cpu.ticks * 10_000) / load.requests);
  }
}
for (const entry of entries) await entry.server.stop();
const echo = entries[0];
const echoUs = (echo.ticks * 10_000) / echo.requests;
const median = (values: number[]) => [...values].sort((x, y) => x - y)[values.length >> 1];
console.log(`${bursts} bursts of ${seconds}s, 50 connections; A = ${a}, B = ${b}`);
for (const entry of entries) {
  const us = (entry.ticks * 10_000) / entry.requests;
  console.log(
    `${entry.name.padEnd(16)} ${us.toFixed(1).padStart(7)} µs/req  ${
      (us / echoUs).toFixed(2)
    }x echo  (${entry.requests} requests)`,
  );
}
for (const id of ["send-message", "native-submit"]) {
  const ea = entries.find((e) => e.name === `A ${id}`)!;
  const eb = entries.find((e) => e.name === `B ${id}`)!;
  const ratios = ea.perBurst.map((value, i) => eb.perBurst[i] / value);
  console.log(`${id}: B/A CPU per request, median over bursts ${median(ratios).toFixed(3)}`);
}
await Deno.remove(dir, { recursive: true });
