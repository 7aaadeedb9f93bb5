/**
 * Defaults shared by the server, the library and the operator tools, so that `deno task start`,
 * `createBeacon()`, `deno task migrate` and `deno task review` find the same database.
 *
 * @module
 */

/** The embedded database used when none is configured (`BEACON_DATABASE_URL`). */
export const DEFAULT_DATABASE_URL = "file:data/beacon.db";
