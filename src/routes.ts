/**
 * Every path the Beacon serves, in one place: the router (src/handler.ts) routes them, the
 * documents (discovery, card, receipts) publish them as absolute URLs under the public origin.
 *
 * @module
 */

/** A small HTML page for people: what this is and where the documents are (src/native/home.ts). */
export const HOME_PATH = "/";
/** The beacon/0.1 discovery document (RFC 8615 well-known URI). */
export const DISCOVERY_PATH = "/.well-known/autonomous-agent";
/** The native submit endpoint. */
export const SUBMIT_PATH = "/beacon/0.1/submissions";
/** The native status endpoint, a URI template (RFC 6570 level 1) with `{id}`. */
export const STATUS_PATH = "/beacon/0.1/submissions/{id}";
/** The latest signed tree head of the submissions log (src/native/tree_head.ts). */
export const TREE_HEAD_PATH = "/beacon/0.1/tree-head";
/** Consistency proofs between tree sizes (RFC 9162 §2.1.4; src/native/tree_head.ts). */
export const CONSISTENCY_PATH = "/beacon/0.1/tree-head/consistency";
/** The signed log's prefix (c2sp.org/tlog-tiles): `<prefix>/checkpoint`, `<prefix>/tile/…`. */
export const LOG_PATH = "/beacon/0.1/log";
/** The inclusion proof of a receipt's submission (RFC 9162 §2.1.3), a URI template with `{id}`. */
export const INCLUSION_PATH = "/beacon/0.1/submissions/{id}/inclusion";
/** The served message schema. */
export const SCHEMA_PATH = "/schemas/message.schema.json";
/** The A2A agent card (A2A 1.0.1 §8.2). */
export const CARD_PATH = "/.well-known/agent-card.json";
/** The A2A JSON-RPC endpoint. */
export const A2A_PATH = "/a2a/v1";
/** The JWKS (RFC 7517 §5) that holds the Beacon's public signing key. */
export const JWKS_PATH = "/.well-known/jwks.json";
/** Liveness and readiness for load balancers and supervisors (src/http/probe.ts). */
export const HEALTH_PATH = "/healthz";
export const READY_PATH = "/readyz";
/** Prometheus metrics, behind the operator's bearer token (src/metrics/endpoint.ts). */
export const METRICS_PATH = "/metrics";
/** Prefix of the served specifications (`/docs/protocol-0.1.md`, `/docs/a2a.md`). */
export const DOCS_PATH = "/docs/";
