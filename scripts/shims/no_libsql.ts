/**
 * Stands in for the native `libsql` driver in the Workers bundle. The store imports the driver
 * only for an embedded (`file:`) database, which the Workers entry refuses before opening one,
 * and workerd cannot load native modules.
 *
 * @module
 */
export default class NoEmbeddedDriver {
  constructor() {
    throw new Error("Cannot open an embedded database on this runtime: use a libsql: URL");
  }
}
