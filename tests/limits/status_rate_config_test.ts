/** `BEACON_STATUS_RATE_LIMIT`: read like `BEACON_RATE_LIMIT`, refused with its name when bad. */
import { assertEquals, assertThrows } from "../support/assert.ts";
import {
  configFromEnvironment,
  ENVIRONMENT_VARIABLES,
  StartupError,
} from "../../src/start/config.ts";

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

Deno.test("both rate limits share one parser: the same values are refused the same way", () => {
  for (
    const [name, example] of [["BEACON_RATE_LIMIT", "10/1m"], [
      "BEACON_STATUS_RATE_LIMIT",
      "120/1m",
    ]]
  ) {
    for (const value of ["abc", "5", "0/1m", "10/1x", "-1/1m"]) {
      assertThrows(
        () => configFromEnvironment(read({ [name]: value })),
        StartupError,
        `Cannot start: ${name} must be "off" or a count of at least 1 per period, like ` +
          `"${example}" (units s, m, h, d)`,
      );
    }
    assertEquals(
      configFromEnvironment(read({ [name]: "3/2h" })).options[
        name === "BEACON_RATE_LIMIT" ? "rateLimit" : "statusRateLimit"
      ],
      { count: 3, periodMs: 7_200_000 },
    );
  }
});
