// autocannon fallback for bench/lib/load.ts, used only where wrk cannot be installed.
//
// Run through `npx --yes --package=autocannon@8.0.0 -- node bench/lib/autocannon_driver.mjs
// <config.json>`. autocannon's own `-I` id replacement cannot be used: it computes
// Content-Length for a fixed id length while the ids it substitutes vary in length, so servers
// wait for bytes that never come. Here `setupRequest` builds each unique body whole, so the
// length is always right. Bodies are laid out as bench/wrk/unique.lua and bench/lib/payload.ts
// lay them out; keep the three in step.
//
// Prints one line: BENCH_RESULT {json} with the same fields as the wrk script.

import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";

/** npx puts the package's bin folder on PATH; its node_modules is the folder above. */
function loadAutocannon() {
  for (const entry of (process.env.PATH ?? "").split(":")) {
    if (!entry.endsWith("node_modules/.bin")) continue;
    try {
      return createRequire(join(entry, "..", "_resolve.js"))("autocannon");
    } catch {
      // Not in this folder: try the next PATH entry.
    }
  }
  throw new Error("Cannot find autocannon: run this file through npx --package=autocannon");
}

const config = JSON.parse(readFileSync(process.argv[2], "utf8"));
const UNIT = "Benchmark message for asynchronous human review. ";
const filler = UNIT.repeat(Math.floor(config.size / UNIT.length) + 1);
const padded = (head, tail) =>
  head + filler.slice(0, Math.max(0, config.size - head.length - tail.length)) + tail;

let counter = 0;
function nextBody() {
  if (config.kind === "fixed") return filler.slice(0, config.size);
  counter++;
  const id = `${config.nonce}-1-${counter}`;
  if (config.kind === "json") {
    return padded(
      `{"jsonrpc":"2.0","id":${counter},"method":"SendMessage","params":{"message":` +
        `{"messageId":"${id}","role":"ROLE_USER","parts":[{"text":"${id} `,
      `"}]}}}`,
    );
  }
  return padded(`${id} `, "");
}

const autocannon = loadAutocannon();
const url = new URL(config.url);
const result = await autocannon({
  url: url.origin,
  connections: config.connections,
  duration: config.duration,
  timeout: config.timeout,
  requests: [{
    method: "POST",
    path: url.pathname,
    headers: config.headers,
    setupRequest: (request) => ({ ...request, body: nextBody() }),
  }],
});

const totalErrors = result.errors ?? 0;
const timeouts = result.timeouts ?? 0;
const line = {
  requests: result.latency.totalCount,
  duration_us: Math.round(result.duration * 1e6),
  bytes: result.throughput.total,
  connect: 0,
  read: totalErrors - timeouts,
  write: 0,
  status: result.non2xx,
  timeout: timeouts,
  p50_us: result.latency.p50 * 1000,
  p90_us: result.latency.p90 * 1000,
  p99_us: result.latency.p99 * 1000,
  max_us: result.latency.max * 1000,
  mean_us: result.latency.mean * 1000,
};
process.stdout.write(`BENCH_RESULT ${JSON.stringify(line)}\n`);
