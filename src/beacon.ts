/**
 * The Beacon's lifecycle: {@linkcode createBeacon} resolves its options (src/options.ts), opens it
 * in the background (src/open.ts: the database, its secrets, the store, the file guard, the tree
 * heads, the handler), retrying on the next request after a failure, answers `503 unavailable`
 * until it is open or once its database file changed, and closes it in order. The public face is
 * mod.ts.
 *
 * @module
 */
import { probeResponse, type Unready } from "./http/probe.ts";
import { createDoor } from "./middleware/door.ts";
import { A2A_PATH, HEALTH_PATH, METRICS_PATH, READY_PATH } from "./routes.ts";
import type { Context } from "./http/context.ts";
import type { RequestLogEntry } from "./http/request_log.ts";
import { BeaconMetrics } from "./metrics/beacon_metrics.ts";
import { metricsHandler } from "./metrics/endpoint.ts";
import { FAILURES } from "./a2a/errors.ts";
import { jsonRpcUnavailable } from "./a2a/transport.ts";
import { openBeacon, type OpenedBeacon } from "./open.ts";
import { resolveOptions } from "./options.ts";
import type { Beacon, BeaconOptions, ConnectionInfo } from "./types.ts";

export type { Beacon, BeaconOptions, ConnectionInfo, StartFacts } from "./types.ts";

let warnedNoClientAddress = false;

/** The path of a request URL, or "" when it does not parse. */
function pathOf(url: string): string {
  return URL.canParse(url) ? new URL(url).pathname : "";
}

/** Whether `url` names the A2A endpoint (either spelling). */
function isA2A(url: string): boolean {
  const path = pathOf(url);
  return path === A2A_PATH || path === A2A_PATH + "/";
}

/** Says once per process that a caller gave `fetch` no client address: every client shares a bucket. */
function warnNoClientAddress(): void {
  if (warnedNoClientAddress) return;
  warnedNoClientAddress = true;
  console.warn(JSON.stringify({
    event: "warning",
    message: "beacon.fetch was called without a client address (its second argument, " +
      "{ remoteAddress }): every such request shares one rate-limit bucket; pass the peer " +
      "address, or UNKNOWN_CLIENT to share the bucket on purpose",
  }));
}

/**
 * Creates a Beacon. The database opens in the background; `fetch` waits for it, and answers
 * `503 unavailable` while it cannot be opened (retrying on the next request).
 *
 * @example
 * ```ts
 * import { createBeacon } from "./beacon.ts";
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
 * await beacon.close();
 * ```
 */
export function createBeacon(options: BeaconOptions = {}): Beacon {
  const given = resolveOptions(options);
  // Metrics, when the operator turned them on, hear every answer (through the door's log hook)
  // and every reported error (onError) beside the operator's own hooks.
  const metrics = given.metricsToken === undefined ? undefined : new BeaconMetrics(
    () => opened?.guard?.state,
    () => opened?.treeHeads === undefined ? undefined : opened.log.uncoveredSeconds(),
  );
  const resolved = metrics === undefined ? given : {
    ...given,
    log: (entry: RequestLogEntry) => {
      metrics.answered(entry);
      given.log?.(entry);
    },
    onError: (error: unknown) => {
      metrics.error(error);
      given.onError?.(error);
    },
  };
  const { now, onError } = resolved;
  const door = createDoor(resolved.log, now);
  const refuseUnavailable = (request: Request, startedAt = now()) => {
    request.body?.cancel().catch(() => {});
    // An A2A client gets JSON-RPC in every outage, this one included.
    if (request.method === "POST" && isA2A(request.url)) {
      const log = { route: "a2a", code: FAILURES.unavailable.code, outcome: "failed" as const };
      return door.leave(request, startedAt, log, jsonRpcUnavailable());
    }
    return door.turnAway(request, startedAt, "unavailable");
  };
  const started = new Date(now()); // the `Last-Modified` of every served document

  let opening: Promise<OpenedBeacon> | undefined;
  let closed = false;
  /** The opened Beacon, once there is one (an open that succeeded is never repeated). */
  let opened: OpenedBeacon | undefined;
  const open = () => {
    opening ??= openBeacon(resolved, door, started, metrics).then((beacon) => opened = beacon);
    opening.catch(() => {
      opening = undefined; // the next request tries again, so the Beacon recovers on its own
    });
    return opening;
  };

  const serveMetrics = metrics === undefined || given.metricsToken === undefined
    ? undefined
    : metricsHandler(given.metricsToken, () => metrics.registry.render());

  /**
   * The operator's answers while the Beacon cannot serve: the probes (src/http/probe.ts; the
   * process lives, and `unready` says why it is not ready) and the metrics, which matter most
   * in an outage. Undefined for any other request.
   */
  const probe = (
    request: Request,
    startedAt: number,
    unready: Unready,
  ): Response | Promise<Response> | undefined => {
    if (request.method !== "GET" && request.method !== "HEAD") return undefined;
    const path = pathOf(request.url);
    if (path === METRICS_PATH && serveMetrics !== undefined) {
      const context: Context = {
        request,
        url: new URL(request.url),
        remoteAddress: undefined,
        basePath: "",
        startedAt,
        source: "unknown",
        params: {},
        body: undefined,
        log: { route: "metrics" },
      };
      return serveMetrics(context).then((response) =>
        door.leave(request, startedAt, context.log, response)
      );
    }
    if (path !== HEALTH_PATH && path !== READY_PATH) return undefined;
    const answer = probeResponse(
      path === HEALTH_PATH ? "ok" : "ready",
      path === HEALTH_PATH ? undefined : unready,
    );
    const response = request.method === "HEAD" ? new Response(null, answer) : answer;
    const route = path === HEALTH_PATH ? "healthz" : "readyz";
    return door.leave(request, startedAt, { route }, response);
  };

  const openAndHandle = async (request: Request, info: ConnectionInfo) => {
    const startedAt = now();
    if (closed) return probe(request, startedAt, "closed") ?? refuseUnavailable(request, startedAt);
    if (opened === undefined) {
      // A probe does not wait for the database; it starts an open, so a Beacon that only a
      // load balancer talks to still comes up.
      const answer = probe(request, startedAt, "database");
      if (answer !== undefined) {
        open().catch(() => {});
        return answer;
      }
    }
    let beacon;
    try {
      beacon = await open();
    } catch (error) {
      onError?.(error);
      return refuseUnavailable(request, startedAt);
    }
    // A database file removed or replaced under us: nothing more may be acknowledged.
    if (beacon.guard?.tripped !== undefined) {
      return probe(request, startedAt, "guard") ?? refuseUnavailable(request, startedAt);
    }
    return beacon.handle(request, info?.remoteAddress ?? undefined, info?.scheme, info?.basePath);
  };

  return {
    fetch(request, info) {
      // A caller whose types do not reach here (Hono's `mount` takes `...args: any`).
      if (info?.remoteAddress === undefined) warnNoClientAddress();
      // Once open, the handler is called directly: no async frame or await per request.
      if (opened !== undefined && !closed && opened.guard?.tripped === undefined) {
        return opened.handle(
          request,
          info?.remoteAddress ?? undefined,
          info?.scheme,
          info?.basePath,
        );
      }
      return openAndHandle(request, info);
    },
    async ready() {
      return (await open()).facts;
    },
    unavailable(request) {
      return refuseUnavailable(request);
    },
    async signLog() {
      if (closed) return;
      await (await open()).log.sign();
    },
    async close() {
      closed = true;
      opened?.guard?.stop();
      if (opening === undefined) return;
      const beacon = await opening;
      const { store, guard } = beacon;
      guard?.stop(); // set by an open that was still running
      await guard?.idle(); // a check may be asking for a checkpoint right now
      // The last head covers every row the stopped server acknowledged, unless the file changed.
      const schedule = beacon.treeHeads;
      beacon.treeHeads = undefined; // a second close() signs nothing more
      await schedule?.stop(guard?.tripped === undefined);
      await store.close();
    },
  };
}
