/**
 * Stands in for `node:fs/promises` in the Workers bundle (see `scripts/build.ts`). The core only
 * reaches for it to create the folder of an embedded database, which the Workers entry refuses
 * before any database is opened; workerd without `nodejs_compat` has no such module to link.
 *
 * @module
 */

/** Always throws: Workers have no file system for a database. */
export function mkdir(): Promise<never> {
  return Promise.reject(new Error("Cannot create a folder on Workers: there is no file system"));
}
