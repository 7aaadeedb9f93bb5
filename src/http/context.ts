/**
 * The per-request state every layer above HTTP shares: the middleware chain fills it in, route
 * handlers read it, the door logs what it says.
 *
 * @module
 */

/** Per-request state shared by the middleware chain. */
export interface Context {
  /** The incoming request. */
  readonly request: Request;
  /** The parsed request URL. */
  readonly url: URL;
  /** The peer address the runtime saw (the entry file's fact), if any. */
  readonly remoteAddress: string | undefined;
  /** The path the Beacon is mounted under (`/beacon`), or `""` at the root. */
  readonly basePath: string;
  /** Time the request arrived, in epoch milliseconds, from the configured clock. */
  readonly startedAt: number;
  /** The rate-limit key of the sender (IPv4 /32, IPv6 /64), set by the source middleware. */
  source: string;
  /** Path parameters of the matched route. */
  params: Record<string, string>;
  /** The body bytes, read under the size limit by the body-limit middleware. */
  body: Uint8Array<ArrayBuffer> | undefined;
  /** What the request log reports: never content, never a raw address. */
  log: RequestLog;
}

/**
 * The public URL the Beacon answers under for a request (origin and mount path, no trailing
 * slash): what documents, receipts and status URLs are built from. `publicUrl` when configured,
 * else the request's trusted origin and the mount path.
 */
export type PublicOrigin = (context: Context) => string;

/**
 * What became of a request, for the operator's log: `accepted` (a new submission stored),
 * `replayed` (an idempotent retry answered with the earlier receipt), `served` (a document,
 * status or preflight), `refused` (an expected refusal) or `failed` (an unexpected error or
 * unavailable storage).
 */
export type Outcome = "accepted" | "replayed" | "served" | "refused" | "failed";

/** One request's log fields, filled in along the chain. */
export interface RequestLog {
  /**
   * Set only where the status cannot tell (a JSON-RPC refusal inside a `200`, a `202` that
   * replayed); otherwise the door derives it from the status (`outcomeOf`).
   */
  outcome?: Outcome;
  /** The stable error code or JSON-RPC code, for refusals. */
  code?: string | number;
  /** The receipt id, for accepted submissions. */
  receiptId?: string;
  /** The route name, such as `native.submit` or `a2a`. */
  route?: string;
}
