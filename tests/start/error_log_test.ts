/**
 * The operator's error lines (src/start/error_log.ts): each has a time, a cause in fixed words
 * and a count; repeats are counted, not repeated, and the counts add up to every occurrence;
 * nothing of an error's own message (a URL with a credential) is ever written.
 */
import { assert, assertEquals, assertMatch } from "../support/assert.ts";
import { type ErrorLine, errorLogger } from "../../src/start/error_log.ts";
import { StorageError } from "../../src/errors.ts";
import { FileCheckFailure } from "../../src/store/file_guard.ts";

/** A real refusal: fetch to a loopback port nothing listens on. */
async function refusedConnection(): Promise<unknown> {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  try {
    await fetch(`http://127.0.0.1:${port}/v2/pipeline?authToken=SECRET-TOKEN`);
  } catch (error) {
    return error;
  }
  throw new Error("expected a refused connection");
}

Deno.test("an outage's repeated error is one line at once, then counted lines whose counts add up", async () => {
  const lines: ErrorLine[] = [];
  let clock = Date.parse("2026-01-01T00:00:00Z");
  const log = errorLogger((line) => lines.push(line), () => clock);
  const error = new StorageError(await refusedConnection());
  let sent = 0;
  for (let second = 0; second < 120; second++) {
    for (let i = 0; i < 10; i++, sent++) log.report(error);
    clock += 1_000;
  }
  log.flush();
  assertEquals(lines.reduce((sum, line) => sum + line.count, 0), sent, "every one is counted");
  assert(lines.length < 15, `a few lines, not ${sent}: ${lines.length}`);
  assertEquals(lines[0].count, 1);
  assertEquals(lines[0].time, "2026-01-01T00:00:00.000Z");
  for (const line of lines) {
    assertEquals(line.name, "StorageError");
    assertMatch(line.cause, /^connection refused/);
    assert(!JSON.stringify(line).includes("SECRET"), "no credential");
  }
});

Deno.test("different causes are different lines; a check that could not run says why", () => {
  const lines: ErrorLine[] = [];
  const log = errorLogger((line) => lines.push(line));
  log.report(new StorageError(Object.assign(new Error("x"), { code: "SQLITE_BUSY" })));
  log.report(new StorageError(Object.assign(new Error("x"), { name: "DeadlineError" })));
  log.report(new FileCheckFailure(Object.assign(new Error("open"), { code: "EMFILE" })));
  const overwritten = new Error("fixed text");
  overwritten.name = "DatabaseFileOverwritten";
  log.report(overwritten);
  log.flush();
  assertEquals(lines.map((line) => [line.name, line.count]), [
    ["StorageError", 1],
    ["StorageError", 1],
    ["DatabaseFileCheckFailed", 1],
    ["DatabaseFileOverwritten", 1],
  ]);
  assertMatch(lines[0].cause, /locked/);
  assertMatch(lines[1].cause, /^timeout/);
  assertMatch(lines[2].cause, /^out of file descriptors/);
  assertMatch(lines[3].cause, /changed under the running server/);
});
