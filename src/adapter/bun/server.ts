/**
 * Bun server entry (`bun run start:bun`: Bun runs this TypeScript file and the sources it imports
 * directly, no bundle): serves the Beacon with `Bun.serve` through the shared start-up and
 * shutdown path (`serve.ts`): same environment variables, same JSON lines, same refusals as
 * every entry.
 *
 * Bun lets the entry bound idle connections: `idleTimeout` (10 s) closes a connection on which
 * nothing arrived for that long, a request head that stopped arriving included. A client that
 * keeps sending a byte now and then is not idle; Bun has no header deadline, so what stops a
 * slow sender is in front of it (docs/deploy.md, "Connections and timeouts").
 *
 * @module
 */
import type { Beacon } from "../../types.ts";
import { createDoor } from "../../middleware/door.ts";
import { bunFetch, type BunServer } from "./bun.ts";
import type { ServerConfig } from "../../start/config.ts";
import { type Listening, runServer } from "../../start/serve.ts";
import { nodeProcess } from "../../start/node_process.ts";

/** Seconds a connection may be idle on Bun before it is closed. */
export const BUN_IDLE_TIMEOUT_SECONDS = 10;

/** The part of the `Bun` global this entry uses (Deno type-checks this file without Bun's types). */
interface BunGlobal {
  serve(options: {
    port: number;
    hostname: string;
    idleTimeout: number;
    fetch(request: Request, server: BunServer): Promise<Response>;
    error(error: unknown): Response;
  }): BunServer;
}

function listen(config: ServerConfig, beacon: Beacon): Promise<Listening> {
  const bun = (globalThis as unknown as { Bun?: BunGlobal }).Bun;
  if (bun === undefined) {
    return Promise.reject(new Error("Cannot start the Bun entry: this runtime is not Bun"));
  }
  const server = bun.serve({
    port: config.port,
    hostname: config.hostname,
    idleTimeout: BUN_IDLE_TIMEOUT_SECONDS,
    fetch: bunFetch(beacon.fetch),
    // The core answers every request itself; this is only for a handler that threw anyway.
    error: () => createDoor(undefined, Date.now).turnAway({ method: "" }, 0, "internal"),
  });
  return Promise.resolve({
    port: server.port,
    async close() {
      await server.stop(false); // stops accepting, lets in-flight requests finish
    },
  });
}

await runServer({ ...nodeProcess, listen });
