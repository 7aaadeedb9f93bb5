import { assert, assertEquals, assertRejects } from "../support/assert.ts";
import { DeadlineError, isBusy, withDeadline } from "../../src/store/faults.ts";

Deno.test("withDeadline() passes a result or an error through unchanged", async () => {
  assertEquals(await withDeadline(Promise.resolve(7), 1000), 7);
  const error = new Error("own");
  await assertRejects(() => withDeadline(Promise.reject(error), 1000), (e) => e === error);
});

Deno.test("withDeadline() rejects a call that never settles with DeadlineError", async () => {
  const never = new Promise<never>(() => {});
  const started = Date.now();
  await assertRejects(() => withDeadline(never, 150), DeadlineError);
  assert(Date.now() - started >= 150, "the deadline fired before its time");
});

Deno.test("isBusy() recognises SQLite's busy and locked codes, and nothing else", () => {
  for (const code of ["SQLITE_BUSY", "SQLITE_BUSY_SNAPSHOT", "SQLITE_LOCKED"]) {
    assert(isBusy({ code }), code);
  }
  for (const value of [{ code: "SQLITE_CONSTRAINT" }, new Error("busy"), undefined, null]) {
    assertEquals(isBusy(value), false);
  }
});
