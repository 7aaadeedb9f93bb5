/** `BEACON_STATUS_RATE_LIMIT`: read like `BEACON_RATE_LIMIT`, refused with its name when bad. */
import { assertEquals, assertThrows } from "../support/assert.ts";
import { configFromEnvironment, ENVIRONMENT_VARIABLES } from "../../src/runtime/config.ts";

const read = (env: Record<string, string>) => (name: string) => env[name];

Deno.test("BEACON_STATUS_RATE_LIMIT sets the status-read budget", () => {
  assertEquals(ENVIRONMENT_VARIABLES.includes("BEACON_STATUS_RATE_LIMIT"), true);
  const config = configFromEnvironment(read({ BEACON_STATUS_RATE_LIMIT: "30/1m" }));
  assertEquals(config.options.statusRateLimit, { count: 30, periodMs: 60_000 });
  assertEquals(
    configFromEnvironment(read({ BEACON_STATUS_RATE_LIMIT: "off" })).options.statusRateLimit,
    "off",
  );
  assertEquals(configFromEnvironment(read({})).options.statusRateLimit, undefined);
  assertThrows(
    () => configFromEnvironment(read({ BEACON_STATUS_RATE_LIMIT: "lots" })),
    Error,
    "BEACON_STATUS_RATE_LIMIT",
  );
});
