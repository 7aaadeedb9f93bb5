// Serves the bundled worker (tools/workers/dist/worker.js) with workerd through Miniflare, on
// Node. Started by `deno task start:workers` (scripts/runtimes.ts), which installs tools/workers/
// and builds the bundle first. Same PORT, BEACON_HOSTNAME and BEACON_* variables as the other
// entries (BEACON_HOSTNAME is not a binding: it is where Miniflare listens): the BEACON_*
// ones become the worker's `env` bindings, as `wrangler.toml` vars and secrets would. Prints the
// same JSON lines as the other entries: {"event":"listening",...} and {"event":"shutdown",...}.
import { createRequire } from "node:module";
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import process from "node:process";

const tools = new URL("../tools/workers/", import.meta.url);
const require = createRequire(new URL("package.json", tools));
const { Miniflare } = require("miniflare");

const env = process.env;
const bindings = Object.fromEntries(
  Object.entries(env).filter(([name]) => name.startsWith("BEACON_") && name !== "BEACON_HOSTNAME"),
);
const port = Number(env.PORT ?? "8000");
const hostname = env.BEACON_HOSTNAME || "0.0.0.0";

// The bundle to serve: the first argument, else the one `scripts/build.ts` writes.
const script = process.argv[2] ?? fileURLToPath(new URL("dist/worker.js", tools));

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
