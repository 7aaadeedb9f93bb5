/** Params helpers: ProtoJSON presence, type checks naming the field, int ranges, RFC 3339. */
import { assert, assertEquals, assertStrictEquals, assertThrows } from "../support/assert.ts";
import {
  checkTenant,
  isRfc3339,
  member,
  optionalInteger,
  optionalStringArray,
  requiredId,
  TASK_STATES,
} from "../../src/a2a/params.ts";
import { A2AFailure } from "../../src/a2a/errors.ts";

function fieldOf(run: () => unknown): string | undefined {
  try {
    run();
  } catch (error) {
    assert(error instanceof A2AFailure && error.kind === "invalidParams");
    return error.metadata.field;
  }
  return undefined;
}

Deno.test("member() treats absent and null as unset and ignores inherited names", () => {
  assertStrictEquals(member({ a: null }, "a"), undefined);
  assertStrictEquals(member({}, "a"), undefined);
  assertStrictEquals(member({}, "constructor"), undefined);
  assertStrictEquals(member({}, "__proto__"), undefined);
  assertStrictEquals(member({ a: 0 }, "a"), 0);
});

Deno.test("optionalInteger() checks integer-ness and the range", () => {
  assertStrictEquals(optionalInteger({ n: 5 }, "n", "n", 1, 100), 5);
  assertStrictEquals(optionalInteger({}, "n", "n", 1, 100), undefined);
  for (const n of [0, 101, 1.5, "5", true, [], Infinity]) {
    assertStrictEquals(fieldOf(() => optionalInteger({ n } as never, "n", "x.n", 1, 100)), "x.n");
  }
});

Deno.test("requiredId() requires a non-empty bounded string", () => {
  assertStrictEquals(requiredId({ id: "a" }, "id", "id", 3), "a");
  for (const id of [undefined, null, "", 1, "abcd"]) {
    assertStrictEquals(fieldOf(() => requiredId({ id } as never, "id", "p.id", 3)), "p.id");
  }
});

Deno.test("optionalStringArray() names the offending index", () => {
  optionalStringArray({ a: ["x", "y"] }, "a", "a");
  assertStrictEquals(fieldOf(() => optionalStringArray({ a: ["x", 2] }, "a", "a")), "a[1]");
  assertStrictEquals(fieldOf(() => optionalStringArray({ a: "x" }, "a", "a")), "a");
});

Deno.test("checkTenant() allows an absent or empty tenant only", () => {
  checkTenant({});
  checkTenant({ tenant: "" });
  checkTenant({ tenant: null });
  assertStrictEquals(fieldOf(() => checkTenant({ tenant: "acme" })), "tenant");
  assertStrictEquals(fieldOf(() => checkTenant({ tenant: 1 })), "tenant");
  assertThrows(() => checkTenant({ tenant: "x" }), A2AFailure);
});

Deno.test("isRfc3339() accepts RFC 3339 date-times naming real instants", () => {
  for (
    const text of [
      "2026-01-01T00:00:00Z",
      "2026-01-01t00:00:00z",
      "2024-02-29T23:59:59.999999999+14:00",
      "2000-02-29T00:00:00-05:30",
      "0004-02-29T00:00:00Z",
      "2016-12-31T23:59:60Z",
    ]
  ) {
    assert(isRfc3339(text), text);
  }
  for (
    const text of [
      "",
      "2026-01-01",
      "2026-01-01 00:00:00Z",
      "2026-01-01T00:00:00",
      "2025-02-29T00:00:00Z",
      "1900-02-29T00:00:00Z",
      "2026-13-01T00:00:00Z",
      "2026-01-32T00:00:00Z",
      "2026-01-01T24:00:00Z",
      "2026-01-01T00:00:00.Z",
      "2026-01-01T00:00:00+2400",
      "+02026-01-01T00:00:00Z",
    ]
  ) {
    assert(!isRfc3339(text), text);
  }
});

Deno.test("TASK_STATES lists the nine proto TaskState names in enum order", () => {
  assertStrictEquals(TASK_STATES.length, 9);
  assertEquals([TASK_STATES[0], TASK_STATES[1], TASK_STATES[8]], [
    "TASK_STATE_UNSPECIFIED",
    "TASK_STATE_SUBMITTED",
    "TASK_STATE_AUTH_REQUIRED",
  ]);
});
