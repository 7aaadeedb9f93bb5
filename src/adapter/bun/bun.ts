/**
 * The Bun adapter (the package's `./bun` export): {@linkcode bunFetch} turns the Beacon's fetch
 * handler into `Bun.serve`'s, with the peer address from `server.requestIP`. The Bun server entry
 * is `server.ts` beside it (`bun run start:bun`, from the TypeScript sources: no build step).
 *
 * @example Use your own `Bun.serve` (or a default export) with the Beacon's handler
 * ```ts ignore
 * import { createBeacon } from "@beacon/beacon";
 * import { bunFetch } from "@beacon/beacon/bun";
 *
 * const beacon = createBeacon({ database: { url: "file:beacon.db" } });
 * export default { port: 8000, fetch: bunFetch(beacon.fetch) };
 * ```
 *
 * @module
 */
import type { ConnectionInfo } from "../../types.ts";

/** The part of Bun's `Server` this entry uses. */
export interface BunServer {
  /** The peer address of a request, as Bun saw it. */
  requestIP(request: Request): { address: string } | null;
  /** The bound port. */
  readonly port: number;
  /** Stops accepting; with `false`, in-flight requests finish first. */
  stop(closeActiveConnections?: boolean): Promise<void> | void;
}

/**
 * Adapts a fetch handler (such as `beacon.fetch`) to Bun's `fetch(request, server)` signature,
 * taking the peer address from `server.requestIP`.
 *
 * @example
 * ```ts ignore
 * import { createBeacon } from "@beacon/beacon";
 * import { bunFetch } from "@beacon/beacon/bun";
 *
 * const beacon = createBeacon();
 * Bun.serve({ port: 8000, fetch: bunFetch(beacon.fetch) });
 * ```
 */
export function bunFetch(
  handler: (request: Request, info: ConnectionInfo) => Promise<Response>,
): (request: Request, server: BunServer) => Promise<Response> {
  return (request, server) =>
    handler(request, { remoteAddress: server.requestIP(request)?.address ?? null });
}
