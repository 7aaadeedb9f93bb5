/**
 * Composes the Beacon's one fetch handler from small middleware, in the order the design asks
 * for (docs/threat-model.md explains why each step sits where it does):
 *
 * 0. the trusted URL (`http/target.ts`): scheme from the listener, authority from a valid
 *    `Host`; an invalid `Host` is `400`, an unparsable target `404`,
 * 1. the door (outermost, so it sees every answer): hardening headers and one log line, for
 *    answers made outside the chain too,
 * 2. the error boundary (total error mapping),
 * 3. source identification,
 * 4. routing: 404 / 405 / preflight, before any limit is spent or body read (the probes,
 *    `/healthz` and `/readyz`, spend nothing at all);
 *    then per route: rate limit → body limit → the protocol handler. Submissions spend the
 *    submission budget, receipt reads (native status, every A2A request) the status budget;
 *    A2A `SendMessage` spends the submission budget too, once its method is known.
 *
 * Every refusal up to and including the body limit happens before any parsing and touches no
 * storage (design principle 6).
 *
 * @module
 */
import type { Intake } from "./intake/accept.ts";
import type { RateLimiter } from "./limits/rate.ts";
import { bodyLimit, releaseBody } from "./middleware/body_limit.ts";
import type { Context, PublicOrigin } from "./http/context.ts";
import { compose } from "./middleware/compose.ts";
import { errorBoundary } from "./middleware/error_boundary.ts";
import { rateLimit } from "./middleware/rate_limit.ts";
import type { Door } from "./middleware/door.ts";
import type { Route, RouteHandler } from "./http/route.ts";
import { router } from "./middleware/router.ts";
import { type ForwardingHeader, identifySource } from "./middleware/source.ts";
import { type CachedDocument, serveDocument } from "./http/cacheable.ts";
import { type ListenerScheme, trustedUrl } from "./http/target.ts";
import {
  A2A_PATH,
  CARD_PATH,
  CONSISTENCY_PATH,
  DISCOVERY_PATH,
  DOCS_PATH,
  HEALTH_PATH,
  HOME_PATH,
  INCLUSION_PATH,
  JWKS_PATH,
  LOG_PATH,
  METRICS_PATH,
  READY_PATH,
  SCHEMA_PATH,
  STATUS_PATH,
  SUBMIT_PATH,
  TREE_HEAD_PATH,
} from "./routes.ts";
import { probeResponse, type Readiness } from "./http/probe.ts";
import { metricsHandler } from "./metrics/endpoint.ts";
import { submitHandler } from "./native/submit.ts";
import { statusHandler } from "./native/status.ts";
import { consistencyHandler, treeHeadHandler } from "./native/tree_head.ts";
import { checkpointHandler, inclusionHandler, tileHandler } from "./native/log.ts";
import type { LogSigner } from "./transparency/signer.ts";
import { a2aHandler } from "./a2a/endpoint.ts";
import { jsonRpcRateRefusal, jsonRpcTransportFailures } from "./a2a/transport.ts";
import { SERVED_DOC_FILES, type ServedDoc } from "./native/docs.ts";
import { homeHandler } from "./native/home.ts";

/** Everything the handler is built from (resolved configuration plus opened resources). */
export interface HandlerOptions {
  readonly intake: Intake;
  readonly limiter: RateLimiter | undefined;
  /** The per-source budget for reading receipts (`BEACON_STATUS_RATE_LIMIT`). */
  readonly statusLimiter?: RateLimiter | undefined;
  readonly maxBodyBytes: number;
  readonly bodyTimeoutMs: number;
  readonly trustedProxies: number;
  readonly trustedProxyHeader: ForwardingHeader;
  readonly now: () => number;
  /** The public URL the Beacon answers under for a request, for documents and receipts. */
  readonly origin: PublicOrigin;
  /** The discovery document, agent card, message schema, JWKS and served docs for an origin. */
  readonly documents: (origin: string) => Promise<{
    discovery: CachedDocument;
    card: CachedDocument;
    schema: CachedDocument;
    jwks: CachedDocument;
    docs: Readonly<Record<ServedDoc, CachedDocument>>;
  }>;
  /** The signed log: its heads, tiles and proofs (src/transparency/signer.ts). */
  readonly log: Pick<
    LogSigner,
    "latest" | "tiledHead" | "checkpoint" | "tile" | "consistency" | "inclusion"
  >;
  /** Whether this instance can accept a submission now (`GET /readyz`). */
  readonly readiness: Readiness;
  /** `GET /metrics` (its token and the page), when the operator turned metrics on. */
  readonly metrics?: { readonly token: string; render(): string };
  /** The one way out: hardening headers and the request log line. */
  readonly door: Door;
  readonly onError?: (error: unknown) => void;
}

/** An answer made at once. */
const answer = (response: Response) => Promise.resolve(response);

/**
 * The route table: every path the Beacon answers, each method with the middleware it runs behind
 * (the submission budget and body limit for writes, the status budget for reads and A2A), as
 * data the router reads.
 */
function routeTable(options: HandlerOptions): Route[] {
  const limited = rateLimit(options.limiter, "submissions");
  const statusLimited = rateLimit(options.statusLimiter, "status");
  const bounded = bodyLimit(options.maxBodyBytes, options.bodyTimeoutMs);
  const document = (pick: "discovery" | "card" | "schema" | "jwks"): RouteHandler =>
  async (
    context,
  ) => {
    const documents = await options.documents(options.origin(context));
    return serveDocument(context.request, documents[pick]);
  };
  const servedDoc = (name: ServedDoc): Route => ({
    name: "docs",
    path: DOCS_PATH + name,
    methods: {
      GET: async (context) => {
        const documents = await options.documents(options.origin(context));
        context.log.outcome = "served";
        return serveDocument(context.request, documents.docs[name]);
      },
    },
  });
  const submit = submitHandler({ intake: options.intake, origin: options.origin });
  const { log } = options;
  const loggedSize = async () => (await log.tiledHead())?.treeSize ?? 0;
  const inclusion = (index: number, size?: number) => log.inclusion(index, size);
  const consistency = (first: number, second: number) => log.consistency(first, second);
  const a2a = compose(
    [
      jsonRpcTransportFailures(options.onError),
      rateLimit(options.statusLimiter, "status", jsonRpcRateRefusal(null)),
      bounded,
    ],
    a2aHandler({
      intake: options.intake,
      origin: options.origin,
      submissionLimiter: options.limiter,
      onError: options.onError,
    }),
  );
  return [
    { name: "home", path: HOME_PATH, methods: { GET: homeHandler(options.origin) } },
    { name: "discovery", path: DISCOVERY_PATH, methods: { GET: document("discovery") } },
    { name: "a2a.card", path: CARD_PATH, methods: { GET: document("card") } },
    { name: "schema", path: SCHEMA_PATH, methods: { GET: document("schema") } },
    { name: "jwks", path: JWKS_PATH, methods: { GET: document("jwks") } },
    ...SERVED_DOC_FILES.map(servedDoc),
    {
      name: "native.submit",
      path: SUBMIT_PATH,
      methods: { POST: compose([limited, bounded], submit) },
    },
    {
      name: "native.status",
      path: STATUS_PATH.replace("{id}", ":id"),
      methods: { GET: compose([statusLimited], statusHandler(options.intake, loggedSize)) },
    },
    {
      name: "native.inclusion",
      path: INCLUSION_PATH.replace("{id}", ":id"),
      methods: { GET: compose([statusLimited], inclusionHandler(options.intake, inclusion)) },
    },
    {
      name: "native.tree_head",
      path: TREE_HEAD_PATH,
      methods: { GET: compose([statusLimited], treeHeadHandler(() => log.latest())) },
    },
    {
      name: "native.consistency",
      path: CONSISTENCY_PATH,
      methods: { GET: compose([statusLimited], consistencyHandler(consistency)) },
    },
    // Each read of the log reaches the database: status reads, like the head they extend. Tiles
    // never change, so caches in front of the Beacon absorb repeated ones.
    {
      name: "log.checkpoint",
      path: LOG_PATH + "/checkpoint",
      methods: { GET: compose([statusLimited], checkpointHandler(() => log.checkpoint())) },
    },
    {
      name: "log.tile",
      path: LOG_PATH + "/tile/*",
      methods: {
        GET: compose(
          [statusLimited],
          tileHandler((level, index, width) => log.tile(level, index, width)),
        ),
      },
    },
    // Probes spend no budget: a balancer polls them every second.
    { name: "healthz", path: HEALTH_PATH, methods: { GET: () => answer(probeResponse("ok")) } },
    {
      name: "readyz",
      path: READY_PATH,
      methods: { GET: async () => probeResponse("ready", await options.readiness()) },
    },
    ...(options.metrics === undefined ? [] : [{
      name: "metrics",
      path: METRICS_PATH,
      methods: { GET: metricsHandler(options.metrics.token, options.metrics.render) },
    }]),
    // Some clients append a slash to the card's interface URL; both spellings are the endpoint.
    { name: "a2a", path: A2A_PATH, methods: { POST: a2a } },
    { name: "a2a", path: A2A_PATH + "/", methods: { POST: a2a } },
  ];
}

/**
 * A mount path as a caller gives it (`ConnectionInfo.basePath`): segments of URL path characters,
 * each after a `/`, no trailing slash. Anything else is ignored: a published URL is never built
 * from a value that could carry a query, a fragment or an authority.
 */
const BASE_PATH = /^(?:\/[A-Za-z0-9._~!$&'()*+,;=:@%-]+)+$/;

/** Builds the composed handler: `(request, remoteAddress, scheme, basePath) => Response`. */
export function buildHandler(
  options: HandlerOptions,
): (
  request: Request,
  remoteAddress: string | undefined,
  scheme?: ListenerScheme,
  basePath?: string,
) => Promise<Response> {
  const pipeline = compose([
    options.door.middleware,
    errorBoundary(options.onError),
    identifySource(options.trustedProxies, options.trustedProxyHeader),
  ], router(routeTable(options)));
  return (request, remoteAddress, scheme = "http", basePath) => {
    const startedAt = options.now();
    const url = trustedUrl(request, scheme);
    if (typeof url === "string") {
      releaseBody(request);
      return Promise.resolve(
        options.door.turnAway(request, startedAt, url),
      );
    }
    const context: Context = {
      request,
      url,
      remoteAddress,
      basePath: basePath !== undefined && BASE_PATH.test(basePath) ? basePath : "",
      startedAt,
      source: "unknown",
      params: {},
      body: undefined,
      log: {},
    };
    return pipeline(context).then((response) => {
      // A refusal that never read the body (429, 405, 404, 413 by Content-Length) releases it.
      if (context.body === undefined) releaseBody(request);
      return response;
    });
  };
}
