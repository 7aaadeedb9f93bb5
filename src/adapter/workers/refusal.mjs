// The one wording of the Workers refusal of an embedded database, shared by the worker itself
// (src/adapter/workers/workers.ts), `deno task start:workers` (scripts/runtimes.ts) and
// `npm run start:workers` (scripts/workerd_serve.mjs, plain Node, hence JavaScript here).

/**
 * The refusal of an embedded (or unset) `BEACON_DATABASE_URL` on Workers, which cannot load
 * native modules. `localDatabase` names the command that starts a local sqld, if any.
 *
 * @param {string} localDatabase
 * @returns {string}
 */
export function workersDatabaseRefusal(localDatabase) {
  return "Cannot start on Workers: BEACON_DATABASE_URL names an embedded database (or is " +
    "unset), and Workers cannot load native modules; set it to the libsql:// or https:// URL of " +
    "a Turso or sqld database, or the http:// URL of a local sqld" +
    (localDatabase === "" ? "" : ` (\`${localDatabase}\` starts one)`);
}
