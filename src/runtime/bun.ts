/**
 * Bun entry (`deno task start:bun`): reads the environment, serves the core handler with
 * `Bun.serve`, passes the peer address from `server.requestIP`, logs one JSON line per request,
 * and shuts down cleanly on SIGINT / SIGTERM — the same behaviour as the Deno entry.
 *
 * Bun does not read `deno.json`'s import map, so `scripts/runtimes.ts` bundles this file with
 * esbuild into `tools/dist/bun.mjs`, next to the npm packages it resolves at run time.
 *
 * @example Use your own `Bun.serve` (or a default export) with the Beacon's handler
 * ```ts ignore
 * import { createBeacon } from "./mod.ts";
 * import { bunFetch } from "./src/runtime/bun.ts";
 *
 * const beacon = createBeacon({ database: { url: "file:data/beacon.db" } });
 * export default { port: 8000, fetch: bunFetch(beacon.fetch) };
 * ```
 *
 * @module
 */
import process from "node:process";
import type { ConnectionInfo } from "../../mod.ts";
import { beaconForServer, closeAndReport, configFromEnvironment } from "./config.ts";

/** The part of Bun's `Server` this entry uses. */
export interface BunServer {
  /** The peer address of a request, as Bun saw it. */
  requestIP(request: Request): { address: string } | null;
  /** The bound port. */
  readonly port: number;
  /** Stops accepting; with `false`, in-flight requests finish first. */
  stop(closeActiveConnections?: boolean): Promise<void> | void;
}

/** The part of the `Bun` global this entry uses (Deno type-checks this file without Bun's types). */
interface BunGlobal {
  serve(options: {
    port: number;
    hostname: string;
    fetch(request: Request, server: BunServer): Promise<Response>;
  }): BunServer;
}

/**
 * Adapts a fetch handler (such as `beacon.fetch`) to Bun's `fetch(request, server)` signature,
 * taking the peer address from `server.requestIP`.
 *
 * @example
 * ```ts ignore
 * import { createBeacon } from "./mod.ts";
 * import { bunFetch } from "./src/runtime/bun.ts";
 *
 * const beacon = createBeacon();
 * Bun.serve({ port: 8000, fetch: bunFetch(beacon.fetch) });
 * ```
 */
export function bunFetch(
  handler: (request: Request, info?: ConnectionInfo) => Promise<Response>,
): (request: Request, server: BunServer) => Promise<Response> {
  return (request, server) =>
    handler(request, { remoteAddress: server.requestIP(request)?.address });
}

/**
 * Serves the Beacon on Bun from the environment (`PORT`, `HOSTNAME`, `BEACON_*`), printing
 * `{"event":"listening",...}` and, after SIGINT / SIGTERM, `{"event":"shutdown",...}`.
 *
 * @example
 * ```ts ignore
 * import { main } from "./src/runtime/bun.ts";
 * await main();
 * ```
 */
export async function main(): Promise<void> {
  const bun = (globalThis as unknown as { Bun?: BunGlobal }).Bun;
  if (bun === undefined) throw new Error("Cannot start the Bun entry: this runtime is not Bun");
  const config = configFromEnvironment((name) => process.env[name]);
  const beacon = beaconForServer(config);
  await beacon.ready();
  const server = bun.serve({
    port: config.port,
    hostname: config.hostname,
    fetch: bunFetch(beacon.fetch),
  });
  console.log(
    JSON.stringify({ event: "listening", hostname: config.hostname, port: server.port }),
  );

  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    await server.stop(false); // stops accepting, lets in-flight requests finish
    await closeAndReport(beacon);
    process.exit(0);
  };
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
}

if ((import.meta as { main?: boolean }).main) await main();
