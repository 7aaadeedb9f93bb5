/**
 * Cloudflare Workers entry: a module worker, `export default { fetch(request, env, ctx),
 * scheduled(controller, env, ctx) }`; `scheduled` signs the log when a Cron Trigger runs it.
 * Configuration and secrets come from `env` (the same `BEACON_*` names as everywhere; `PORT` and
 * `BEACON_HOSTNAME` do not apply), the client address from the `CF-Connecting-IP` header that
 * Cloudflare sets. The Beacon is created once per isolate, on the first request.
 *
 * Workers cannot load native modules, so the embedded database is refused: `BEACON_DATABASE_URL`
 * must name Turso or `sqld` (`libsql://…` or `https://…`, `http://…` for a local sqld), which
 * the core opens with
 * `@libsql/client/web`. Run `deno task migrate` against that database before deploying.
 *
 * `npm run start:workers` (or `deno task start:workers`) bundles this file with esbuild into
 * `tools/workers/dist/worker.js` and serves it with workerd through Miniflare
 * (`scripts/workerd_serve.mjs`); the package exports it as `@beacon/beacon/workers`.
 * `docs/deploy.md` shows a `wrangler.toml` for a real deployment.
 *
 * @example wrangler.toml
 * ```toml
 * name = "beacon"
 * main = "tools/workers/dist/worker.js"
 * compatibility_date = "2026-04-01"
 * [vars]
 * BEACON_PUBLIC_URL = "https://beacon.example.com"
 * # secrets: wrangler secret put BEACON_DATABASE_URL / BEACON_DATABASE_AUTH_TOKEN
 * [triggers]
 * crons = ["* * * * *"]
 * ```
 *
 * @module
 */
import type { Beacon } from "../../types.ts";
import { createDoor } from "../../middleware/door.ts";
import { workersDatabaseRefusal } from "./refusal.mjs";
import { isEmbedded } from "../../store/client.ts";
import { beaconForServer, configFromEnvironment } from "../../start/config.ts";

/** The bindings the worker reads: plain-text vars and secrets named like the env variables. */
export type WorkerEnv = Readonly<Record<string, unknown>>;

/** The part of the Workers `ExecutionContext` this entry uses. */
export interface WorkerContext {
  /** Keeps the isolate working on `promise` after the response is sent. */
  waitUntil(promise: Promise<unknown>): void;
}

/**
 * Builds the Beacon for a worker from its `env`. Throws with a message naming the variable when
 * the configuration is invalid, including an embedded (`file:` / `:memory:`) database.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { beaconFromEnv } from "./workers.ts";
 *
 * assert.throws(
 *   () => beaconFromEnv({ BEACON_DATABASE_URL: "file:data/beacon.db" }),
 *   /^Error: Cannot start on Workers: /,
 * );
 * ```
 */
export function beaconFromEnv(env: WorkerEnv): Beacon {
  const config = configFromEnvironment((name) => {
    const value = env[name];
    return typeof value === "string" ? value : undefined;
  });
  const url = config.options.database?.url ?? "";
  if (isEmbedded(url)) {
    throw new Error(workersDatabaseRefusal(""));
  }
  return beaconForServer(config, {
    // Every request sends its own queries: see `serve` below and DatabaseConfig.concurrency.
    database: { url, authToken: config.options.database?.authToken, concurrency: Infinity },
    // No timer outlives a request here, and close() never runs: heads are signed by the Cron
    // Trigger's `scheduled` run below (docs/deploy.md, "Cloudflare Workers").
    checkpointIntervalMs: "off",
  });
}

let instance: { beacon: Beacon } | { failure: string } | undefined;

/** How long one request may take before it is answered `503` (the core bounds bodies to 10 s). */
const REQUEST_DEADLINE_MS = 30_000;

/**
 * Runs `beacon.fetch` so that what concurrent requests share survives workerd's request model.
 *
 * Requests in one isolate share the database client, the open database and the group commit, so
 * one request may wait for I/O that another request started (the first requests wait for the
 * database the first one opens; a write waits for the commit that carries it). workerd cancels a
 * request as hung when nothing of its own (I/O or timer) is pending, even though another request
 * is about to resolve what it awaits: a timer held for the request's duration keeps it alive.
 * `waitUntil` keeps a request's own work, which may carry others' writes, running after its
 * client disconnects. The deadline turns anything that never settles into a `503`, never a hang.
 *
 * What this cannot fix is work a request leaves behind after it has answered: workerd cancels
 * it. So the web client gets no request queue (DatabaseConfig.concurrency), and every commit must
 * run in the call of a request that waits for it (src/store/group_commit.ts).
 */
function serve(beacon: Beacon, request: Request, context: WorkerContext): Promise<Response> {
  const alive = setInterval(() => {}, 1_000);
  let timer: ReturnType<typeof setTimeout> | undefined;
  const handling = beacon.fetch(request, {
    remoteAddress: request.headers.get("cf-connecting-ip"), // null outside Cloudflare's edge
    scheme: request.url.startsWith("https:") ? "https" : "http",
  });
  const deadline = new Promise<Response>((resolve) => {
    timer = setTimeout(() => resolve(beacon.unavailable(request)), REQUEST_DEADLINE_MS);
  });
  const answer = Promise.race([handling, deadline]).finally(() => {
    clearInterval(alive);
    clearTimeout(timer);
  });
  context.waitUntil(handling.catch(() => {}));
  return answer;
}

/**
 * The module worker. Invalid configuration is logged once per isolate and every request is
 * answered `503 unavailable` (the reason stays in the log, never in a response).
 *
 * @example Call the worker directly, as workerd does
 * ```ts ignore
 * import worker from "@beacon/beacon/workers";
 *
 * const env = { BEACON_DATABASE_URL: "https://beacon-db.example.turso.io", BEACON_LOG: "off" };
 * const response = await worker.fetch(
 *   new Request("https://beacon.example.com/.well-known/autonomous-agent"),
 *   env,
 *   { waitUntil() {} },
 * );
 * console.log(response.status);
 * ```
 */
/** The shape of a module worker: workerd calls `fetch` for each request. */
export interface ModuleWorker {
  fetch(request: Request, env: WorkerEnv, context: WorkerContext): Promise<Response>;
  scheduled(controller: unknown, env: WorkerEnv, context: WorkerContext): Promise<void>;
}

/** The Beacon of this isolate, made on first use; undefined when its configuration failed. */
function beaconOf(env: WorkerEnv): Beacon | undefined {
  if (instance === undefined) {
    try {
      instance = { beacon: beaconFromEnv(env) };
    } catch (error) {
      instance = { failure: (error as Error).message };
      console.error(JSON.stringify({ event: "error", message: instance.failure }));
    }
  }
  return "beacon" in instance ? instance.beacon : undefined;
}

const worker: ModuleWorker = {
  fetch(request: Request, env: WorkerEnv, context: WorkerContext): Promise<Response> {
    const beacon = beaconOf(env);
    if (beacon === undefined) {
      // No Beacon to log through (its configuration failed); the door still hardens the answer.
      return Promise.resolve(createDoor(undefined, Date.now).turnAway(request, 0, "unavailable"));
    }
    return serve(beacon, request, context);
  },
  /**
   * A Cron Trigger's run (docs/deploy.md, "Cloudflare Workers"): signs the log up to the newest
   * row, continuing from the newest stored head, so no isolate reads the log from the start. A
   * failure is logged by name only, like every error line.
   */
  scheduled(_controller: unknown, env: WorkerEnv, context: WorkerContext): Promise<void> {
    const beacon = beaconOf(env);
    if (beacon === undefined) return Promise.resolve();
    const signing = beacon.signLog().catch((error) => {
      console.error(JSON.stringify({ event: "error", name: (error as Error).name ?? "Error" }));
    });
    context.waitUntil(signing);
    return signing;
  },
};

export default worker;
