/**
 * A2A version negotiation for the one interface the Beacon declares (protocolVersion "1.0").
 *
 * - The version is the `A2A-Version` service parameter: the HTTP header, else the query
 *   parameter. A2A §9.2 says JSON-RPC service parameters MUST travel as headers, while §3.6.1
 *   lets clients send the version as a request parameter instead; reading the header first and
 *   the query second serves both texts. Service parameter names are case-insensitive (§3.2.6),
 *   so the query name is matched case-insensitively too.
 * - Versions are `Major.Minor` (§3.6, §14.2.1); a patch part MUST NOT be considered, so
 *   `1.0.3` is `1.0`.
 * - An absent or empty version means 0.3 (§3.6.2 "Agents MUST interpret empty value as 0.3
 *   version"), which this interface does not speak; it and any other version get
 *   VersionNotSupportedError (-32009).
 * - A bare major such as `1` is not in `Major.Minor` form (§14.2.1 MUST) and is refused, as is
 *   any spelling with leading zeros or spaces: one accepted spelling per version.
 * - Two different places or repeated query parameters are resolved header first; repeated
 *   query values are ambiguous and refused.
 *
 * @module
 */
import { A2AFailure } from "./errors.ts";

/** The A2A protocol version this interface speaks (the card's `protocolVersion`). */
export const A2A_VERSION = "1.0";

/** The service parameter name (A2A §3.2.6). */
export const VERSION_PARAMETER = "A2A-Version";

/** `1.0` with an optional patch part that is ignored (A2A §3.6). */
const SUPPORTED = /^1\.0(?:\.(?:0|[1-9][0-9]{0,8}))?$/;

/** Requested versions short and plain enough to name back in the error (never anything else). */
const NAMEABLE = /^\d{1,3}(?:\.\d{1,3}){0,2}$/;

/**
 * The requested version: the header's value, else the query parameter's, else undefined.
 * A header sent empty counts as sent (and empty).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { requestedVersion } from "./version.ts";
 *
 * const url = new URL("http://127.0.0.1/a2a/v1?A2A-Version=1.0");
 * assert.equal(requestedVersion(new Request(url), url), "1.0");
 * ```
 */
export function requestedVersion(request: Request, url: URL): string | undefined {
  const header = request.headers.get(VERSION_PARAMETER);
  if (header !== null) return header;
  let found: string | undefined;
  let count = 0;
  for (const [name, value] of url.searchParams) {
    if (name.toLowerCase() !== "a2a-version") continue;
    found = value;
    count++;
  }
  // Two query values could disagree; rather than pick one, refuse (an empty string never passes).
  return count > 1 ? "" : found;
}

/**
 * Whether a requested version is served by this interface (`1.0`, any patch).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { isSupportedVersion } from "./version.ts";
 *
 * assert.ok(isSupportedVersion("1.0.3"));
 * assert.ok(!isSupportedVersion("0.3"));
 * ```
 */
export function isSupportedVersion(version: string | undefined): boolean {
  return version !== undefined && SUPPORTED.test(version);
}

/**
 * Checks the request's version; throws VersionNotSupportedError (-32009) unless it is 1.0.
 * The error's ErrorInfo names the supported version and, only when it is a short dotted
 * number, the requested one: anything longer or odder is submitted content and not echoed.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { checkVersion } from "./version.ts";
 *
 * const url = new URL("http://127.0.0.1/a2a/v1");
 * assert.doesNotThrow(() => checkVersion(new Request(url, { headers: { "A2A-Version": "1.0" } }), url));
 * ```
 */
export function checkVersion(request: Request, url: URL): void {
  const version = requestedVersion(request, url);
  if (isSupportedVersion(version)) return;
  const metadata: Record<string, string> = { supportedVersions: A2A_VERSION };
  if (version === undefined || version === "") {
    throw new A2AFailure(
      "versionNotSupported",
      "A2A version not supported: A2A-Version is missing or empty, which means 0.3; " +
        "this interface speaks 1.0 only",
      metadata,
    );
  }
  if (NAMEABLE.test(version)) metadata.requestedVersion = version;
  throw new A2AFailure("versionNotSupported", undefined, metadata);
}
