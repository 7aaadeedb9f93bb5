import { assertEquals, assertThrows } from "../support/assert.ts";
import {
  formatRateLimit,
  gcraStep,
  MemoryRateLimiter,
  parseRateLimit,
} from "../../src/limits/rate.ts";

Deno.test("parseRateLimit() reads count/period and off", () => {
  assertEquals(parseRateLimit("10/1m"), { count: 10, periodMs: 60_000 });
  assertEquals(parseRateLimit("100/30s"), { count: 100, periodMs: 30_000 });
  assertEquals(parseRateLimit("5/h"), { count: 5, periodMs: 3_600_000 });
  assertEquals(parseRateLimit("OFF"), undefined);
  for (const bad of ["", "10", "0/1m", "10/1x", "-1/1m", "10/0m", "1e3/1m"]) {
    assertThrows(() => parseRateLimit(bad), bad);
  }
});

Deno.test("formatRateLimit() round-trips parseRateLimit()", () => {
  for (const text of ["10/1m", "100/30s", "5/1h", "7/1d", "3/90s"]) {
    assertEquals(formatRateLimit(parseRateLimit(text)!), text);
  }
});

Deno.test("gcraStep() admits a burst of count, then one per interval", () => {
  const limit = { count: 3, periodMs: 3000 };
  let tat: number | undefined;
  for (let i = 0; i < 3; i++) {
    const step = gcraStep(limit, tat, 0);
    assertEquals(step.allowed, true);
    if (step.allowed) tat = step.tat;
  }
  assertEquals(gcraStep(limit, tat, 0), { allowed: false, waitMs: 1000 });
  assertEquals(gcraStep(limit, tat, 999).allowed, false);
  assertEquals(gcraStep(limit, tat, 1000).allowed, true);
});

Deno.test("MemoryRateLimiter.check() answers an exact Retry-After that then succeeds", () => {
  let now = 1_000_000;
  const limiter = new MemoryRateLimiter({ count: 2, periodMs: 60_000 }, () => now);
  assertEquals(limiter.check("a"), { allowed: true });
  assertEquals(limiter.check("a"), { allowed: true });
  assertEquals(limiter.check("a"), { allowed: false, retryAfterSeconds: 30 });
  assertEquals(limiter.check("b"), { allowed: true }, "keys are independent");
  now += 29_999;
  assertEquals(limiter.check("a").allowed, false);
  now += 1;
  assertEquals(limiter.check("a"), { allowed: true });
});

Deno.test("MemoryRateLimiter.check() stays bounded in memory under many keys", () => {
  let now = 0;
  const limiter = new MemoryRateLimiter({ count: 1, periodMs: 1000 }, () => now, 100);
  for (let i = 0; i < 10_000; i++) {
    now++;
    limiter.check(`key-${i}`);
  }
  // A forgotten key is treated like a new one, so the limit still holds for active keys.
  now++;
  assertEquals(limiter.check("key-9999").allowed, false);
});
