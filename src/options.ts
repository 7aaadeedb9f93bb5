/**
 * The options of `createBeacon` (src/beacon.ts) with every default applied (the values are in
 * src/defaults.ts), resolved once when the Beacon is created: the one place that says what an
 * option left out means.
 *
 * @module
 */
import {
  DEFAULT_BODY_TIMEOUT_MS,
  DEFAULT_CHECKPOINT_INTERVAL_MS,
  DEFAULT_DATABASE_URL,
  DEFAULT_IDEMPOTENCY_WINDOW_MS,
  DEFAULT_MAX_BODY_BYTES,
  DEFAULT_RATE_LIMIT,
  DEFAULT_RATE_LIMIT_STORE,
  DEFAULT_STATUS_RATE_LIMIT,
  DEFAULT_TRUSTED_PROXIES,
  DEFAULT_TRUSTED_PROXY_HEADER,
} from "./defaults.ts";
import { chooseLimiter, type LimitChoice } from "./limits/select.ts";
import type { BeaconOptions } from "./types.ts";

/** {@linkcode BeaconOptions} resolved: each field is documented there, with its default. */
export interface ResolvedOptions {
  readonly database: NonNullable<BeaconOptions["database"]>;
  /** `publicUrl` as an origin and path prefix, or undefined: each request's own origin. */
  readonly publicOrigin: string | undefined;
  readonly maxBodyBytes: number;
  readonly bodyTimeoutMs: number;
  /** The submission budget (`rateLimit`). */
  readonly submissions: LimitChoice;
  /** The receipt-read budget (`statusRateLimit`). */
  readonly status: LimitChoice;
  readonly rateLimitStore: NonNullable<BeaconOptions["rateLimitStore"]>;
  readonly trustedProxies: number;
  readonly trustedProxyHeader: NonNullable<BeaconOptions["trustedProxyHeader"]>;
  readonly idempotencyWindowMs: number;
  /** Undefined: the salt kept in the database. */
  readonly sourceSalt: BeaconOptions["sourceSalt"];
  /** Undefined: the key kept in the database. */
  readonly signingKey: BeaconOptions["signingKey"];
  /** Where a new key goes when none is configured or kept (default `"database"`). */
  readonly newSigningKey: NonNullable<BeaconOptions["newSigningKey"]>;
  /** The keys that signed the log before (none by default). */
  readonly previousSigningKeys: readonly string[];
  readonly checkpointIntervalMs: number | "off";
  readonly now: () => number;
  readonly randomBytes: (length: number) => Uint8Array<ArrayBuffer>;
  readonly log: BeaconOptions["log"];
  readonly onError: BeaconOptions["onError"];
  readonly metricsToken: string | undefined;
}

function defaultRandomBytes(length: number): Uint8Array<ArrayBuffer> {
  return crypto.getRandomValues(new Uint8Array(length));
}

function normaliseOrigin(url: string): string {
  const parsed = new URL(url);
  // A path prefix (an embedding app's mount point) is kept; query, fragment and `/` are not.
  return parsed.origin + parsed.pathname.replace(/\/+$/, "");
}

/**
 * Applies the defaults to `options`. The in-memory rate limiters are made here, once, so they live
 * as long as the Beacon, across database reconnects.
 *
 * @example
 * ```ts
 * import { resolveOptions } from "./options.ts";
 *
 * const resolved = resolveOptions({ publicUrl: "https://example.com/beacon/?q" });
 * if (resolved.publicOrigin !== "https://example.com/beacon") throw new Error("expected the origin");
 * if (resolved.maxBodyBytes !== 65_536) throw new Error("expected the default body limit");
 * ```
 */
export function resolveOptions(options: BeaconOptions): ResolvedOptions {
  const now = options.now ?? Date.now;
  return {
    database: options.database ?? { url: DEFAULT_DATABASE_URL },
    publicOrigin: options.publicUrl === undefined ? undefined : normaliseOrigin(options.publicUrl),
    maxBodyBytes: options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES,
    bodyTimeoutMs: options.bodyTimeoutMs ?? DEFAULT_BODY_TIMEOUT_MS,
    submissions: chooseLimiter(options.rateLimit, DEFAULT_RATE_LIMIT, now),
    status: chooseLimiter(options.statusRateLimit, DEFAULT_STATUS_RATE_LIMIT, now),
    rateLimitStore: options.rateLimitStore ?? DEFAULT_RATE_LIMIT_STORE,
    trustedProxies: options.trustedProxies ?? DEFAULT_TRUSTED_PROXIES,
    trustedProxyHeader: options.trustedProxyHeader ?? DEFAULT_TRUSTED_PROXY_HEADER,
    idempotencyWindowMs: options.idempotencyWindowMs ?? DEFAULT_IDEMPOTENCY_WINDOW_MS,
    sourceSalt: options.sourceSalt,
    signingKey: options.signingKey,
    newSigningKey: options.newSigningKey ?? "database",
    previousSigningKeys: options.previousSigningKeys ?? [],
    checkpointIntervalMs: options.checkpointIntervalMs ?? DEFAULT_CHECKPOINT_INTERVAL_MS,
    now,
    randomBytes: options.randomBytes ?? defaultRandomBytes,
    log: options.log,
    onError: options.onError,
    metricsToken: options.metricsToken,
  };
}
