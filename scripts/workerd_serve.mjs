// Serves the bundled worker (tools/workers/dist/worker.js) with workerd through Miniflare, on
// Node. Started by `deno task start:workers` (scripts/runtimes.ts, which installs tools/workers/
// and builds the bundle first and passes its path), or by `npm run start:workers` without Deno:
// given no bundle path, this script installs tools/workers/ (`npm ci --ignore-scripts`, once per
// lock file) and bundles src/adapter/workers/workers.ts with esbuild itself, with the same settings as
// scripts/build.ts. Same PORT, BEACON_HOSTNAME and BEACON_* variables as the other
// entries (BEACON_HOSTNAME is not a binding: it is where Miniflare listens): the BEACON_*
// ones become the worker's `env` bindings, as `wrangler.toml` vars and secrets would. Prints the
// same JSON lines as the other entries: {"event":"listening",...} and {"event":"shutdown",...}.
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import process from "node:process";
import { workersDatabaseRefusal } from "../src/adapter/workers/refusal.mjs";

const tools = new URL("../tools/workers/", import.meta.url);
const toolsPath = fileURLToPath(tools);
const root = fileURLToPath(new URL("..", import.meta.url));

/** Installs tools/workers/ unless installed from its current lock file (as scripts/tools.ts). */
function ensureTools() {
  const stamp = `${toolsPath}node_modules/.beacon-install-stamp`;
  const digest = createHash("sha256").update(readFileSync(`${toolsPath}package-lock.json`))
    .digest("hex");
  if (existsSync(stamp) && readFileSync(stamp, "utf8").trim() === digest) return;
  console.error("Installing tools/workers/ (npm ci --ignore-scripts)");
  const installed = spawnSync("npm", ["ci", "--ignore-scripts", "--no-audit", "--no-fund"], {
    cwd: toolsPath,
    stdio: ["ignore", "ignore", "inherit"],
  });
  if (installed.status !== 0) {
    console.error("Cannot install tools/workers/: npm ci failed");
    process.exit(2);
  }
  writeFileSync(stamp, digest + "\n");
}

/** Bundles the worker with esbuild's API, the settings of scripts/build.ts. */
async function bundle(require) {
  const esbuild = require("esbuild");
  const outfile = `${toolsPath}dist/worker.js`;
  await esbuild.build({
    entryPoints: [`${root}src/adapter/workers/workers.ts`],
    bundle: true,
    format: "esm",
    logLevel: "warning",
    platform: "neutral",
    target: "es2022",
    conditions: ["workerd", "worker", "browser"],
    mainFields: ["browser", "module", "main"],
    alias: {
      "node:fs/promises": `${root}scripts/shims/no_node_fs.ts`,
      // The embedded driver is imported lazily, only for file databases, which Workers refuse.
      libsql: `${root}scripts/shims/no_libsql.ts`,
    },
    nodePaths: [`${toolsPath}node_modules`],
    outfile,
  });
  return outfile;
}

if (process.argv[2] === undefined) {
  // As `deno task start:workers` (scripts/runtimes.ts): refuse an embedded database up front.
  const url = process.env.BEACON_DATABASE_URL || "file:";
  if (url.startsWith("file:") || url === ":memory:") {
    console.error(workersDatabaseRefusal("npm run db"));
    process.exit(2);
  }
  ensureTools();
}
const require = createRequire(new URL("package.json", tools));
const { Miniflare } = require("miniflare");

const env = process.env;
const bindings = Object.fromEntries(
  Object.entries(env).filter(([name]) => name.startsWith("BEACON_") && name !== "BEACON_HOSTNAME"),
);
const port = Number(env.PORT ?? "8000");
const hostname = env.BEACON_HOSTNAME || "0.0.0.0";

// The bundle to serve: the first argument, else one built here.
const script = process.argv[2] ?? await bundle(require);

const miniflare = new Miniflare({
  modules: true,
  scriptPath: script,
  modulesRoot: dirname(script),
  compatibilityDate: "2026-04-01",
  bindings,
  host: hostname,
  port,
  // No request.cf lookup over the network: Miniflare's built-in sample values are enough.
  cf: false,
  // `GET /cdn-cgi/handler/scheduled` runs the worker's `scheduled` handler, as a Cron Trigger
  // would on Cloudflare (Miniflare runs no cron schedule itself): the local way to sign the log.
  unsafeTriggerHandlers: true,
  // The worker's console output goes to this process's stdout / stderr.
  handleRuntimeStdio(stdout, stderr) {
    stdout.pipe(process.stdout);
    stderr.pipe(process.stderr);
  },
});

const url = await miniflare.ready;
console.log(JSON.stringify({ event: "listening", hostname, port: Number(url.port) }));

let stopping = false;
async function stop() {
  if (stopping) return;
  stopping = true;
  await miniflare.dispose();
  // The worker's counters live inside workerd; this process cannot read them.
  console.log(JSON.stringify({ event: "shutdown" }));
  process.exit(0);
}
// Miniflare's own signal hooks exit at once with 128 + signal; this shutdown disposes it instead.
for (const signal of ["SIGINT", "SIGTERM"]) {
  process.removeAllListeners(signal);
  process.on(signal, stop);
}
