/**
 * The Beacon: a public intake where autonomous software agents submit messages for asynchronous
 * human review, over its native protocol (beacon/0.1) and A2A 1.0 (JSON-RPC). One standards-only
 * `fetch` handler that any runtime can serve; the adapters for Node, Bun and Workers are the
 * package's other exports (`./node`, `./bun`, `./workers`, from `src/adapter/`).
 *
 * This module is the face only: the lifecycle is src/beacon.ts, the options and types
 * src/types.ts, the request pipeline src/handler.ts (docs/architecture.md has the map).
 *
 * @example Submit a message and read its receipt
 * ```ts
 * import { createBeacon } from "./mod.ts";
 *
 * const beacon = createBeacon({ database: { url: ":memory:" }, rateLimit: "off" });
 * const response = await beacon.fetch(
 *   new Request("http://127.0.0.1/beacon/0.1/submissions", {
 *     method: "POST",
 *     headers: { "content-type": "text/plain; charset=utf-8" },
 *     body: "Hello, reviewer.",
 *   }),
 *   { remoteAddress: "127.0.0.1" },
 * );
 * if (response.status !== 202) throw new Error(`expected 202, got ${response.status}`);
 * const { receipt } = await response.json();
 * if (typeof receipt.id !== "string") throw new Error("expected a receipt id");
 * await beacon.close();
 * ```
 *
 * @example Serve the Beacon on Deno with an embedded database
 * ```ts ignore
 * import { createBeacon } from "@beacon/beacon";
 *
 * const beacon = createBeacon({ database: { url: "file:data/beacon.db" } });
 * await beacon.ready();
 * Deno.serve((request, info) => beacon.fetch(request, { remoteAddress: info.remoteAddr.hostname }));
 * ```
 *
 * @module
 */
export { createBeacon } from "./src/beacon.ts";
export type { Beacon, BeaconOptions, ConnectionInfo, StartFacts } from "./src/types.ts";
export { UNKNOWN_CLIENT } from "./src/types.ts";
export type { DatabaseConfig } from "./src/store/client.ts";
export type { Outcome, RequestLogEntry } from "./src/http/request_log.ts";
export type { ListenerScheme } from "./src/http/target.ts";
export type { RateDecision, RateLimit, RateLimiter } from "./src/limits/rate.ts";
export type { Receipt } from "./src/intake/accept.ts";
export type { IdentityCheck } from "./src/message/identity.ts";
export type { SubmissionKind, Surface } from "./src/store/store.ts";
export { parseRateLimit } from "./src/limits/rate.ts";
