/**
 * The Workers entry's own decisions, run in Deno without workerd: configuration from `env`, the
 * refusal of embedded databases, and the answer when the configuration is unusable. The worker
 * itself runs on workerd in tests/conformance/runtimes_test.ts.
 */
import { assert, assertMatch, assertStrictEquals, assertThrows } from "../support/assert.ts";
import worker, { beaconFromEnv } from "../../src/adapter/workers/workers.ts";

Deno.test("beaconFromEnv() refuses embedded databases, naming the variable and the fix", () => {
  for (
    const env of [{ BEACON_DATABASE_URL: "file:data/beacon.db" }, {
      BEACON_DATABASE_URL: ":memory:",
    }, {}]
  ) {
    assertThrows(
      () => beaconFromEnv(env),
      (error: Error) => {
        assertMatch(error.message, /^Cannot start on Workers: BEACON_DATABASE_URL/);
        assertMatch(error.message, /libsql:\/\/ or https:\/\//);
        assert(!error.message.includes("data/beacon.db"), "no path in the message");
        return true;
      },
    );
  }
});

Deno.test("beaconFromEnv() reads the same BEACON_* variables as every runtime", () => {
  assertThrows(
    () => beaconFromEnv({ BEACON_DATABASE_URL: "https://db.example", BEACON_RATE_LIMIT: "lots" }),
    (error: Error) => error.message.includes("BEACON_RATE_LIMIT"),
  );
  assertThrows(
    () =>
      beaconFromEnv({ BEACON_DATABASE_URL: "https://db.example", BEACON_PUBLIC_URL: "ftp://x" }),
    (error: Error) => error.message.includes("BEACON_PUBLIC_URL"),
  );
  // Non-string bindings (a KV namespace, say) are not configuration.
  const beacon = beaconFromEnv({
    BEACON_DATABASE_URL: "https://db.example",
    BEACON_LOG: "off",
    BEACON_RATE_LIMIT: { binding: true },
  });
  assertStrictEquals(typeof beacon.fetch, "function");
});

Deno.test("the worker answers 503 unavailable when its configuration cannot be used", async () => {
  const errors: string[] = [];
  const original = console.error;
  console.error = (line: string) => errors.push(line);
  try {
    const waited: Promise<unknown>[] = [];
    const context = { waitUntil: (promise: Promise<unknown>) => waited.push(promise) };
    for (let i = 0; i < 2; i++) {
      const response = await worker.fetch(
        new Request("https://beacon.example.com/.well-known/autonomous-agent"),
        { BEACON_DATABASE_URL: "file:data/beacon.db" },
        context,
      );
      assertStrictEquals(response.status, 503);
      assertStrictEquals((await response.json()).error.code, "unavailable");
      assertStrictEquals(response.headers.get("x-content-type-options"), "nosniff");
    }
  } finally {
    console.error = original;
  }
  assertStrictEquals(errors.length, 1, "the reason is logged once per isolate");
  assertMatch(errors[0], /Cannot start on Workers/);
});
