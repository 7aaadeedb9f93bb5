/**
 * The one assertion module of the test suite. JSR (and so `@std/assert`) is not reachable from
 * the machines this project is built on, so the tests use Node's strict assertions through Deno's
 * `node:` compatibility layer.
 */
export {
  deepEqual as assertEquals,
  equal as assertStrictEquals,
  match as assertMatch,
  notEqual as assertNotEquals,
  ok as assert,
  rejects as assertRejects,
  throws as assertThrows,
} from "node:assert/strict";
export { default as assertModule } from "node:assert/strict";
