/**
 * The Beacon's version, as released (CHANGELOG.md is by version): the server's `listening` line
 * and the discovery document carry it, so an operator can tell which build runs. It equals the
 * `version` of deno.json and package.json (tests/version_test.ts).
 *
 * @module
 */

/** The version of this build, semantic versioning. */
export const BEACON_VERSION = "0.2.4";
