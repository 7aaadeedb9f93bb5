/** Option parsing of the review tool (review/commands/options.ts, review/io.ts). */
import { progressLine } from "../io.ts";
import {
  filtersFrom,
  normaliseArgs,
  parseCommand,
  parseKeyPrefix,
  parseSince,
} from "../commands/options.ts";
import { assertEquals, assertStrictEquals, assertThrows } from "../../tests/support/assert.ts";

const NOW = Date.UTC(2025, 5, 15, 12, 0, 0);

Deno.test("parseSince() reads dates, date-times with or without offset, and durations", () => {
  assertStrictEquals(parseSince("2025-06-01", NOW), "2025-06-01T00:00:00.000Z");
  assertStrictEquals(parseSince("2025-06-01T08:30", NOW), "2025-06-01T08:30:00.000Z");
  assertStrictEquals(parseSince("2025-06-01 08:30:15Z", NOW), "2025-06-01T08:30:15.000Z");
  assertStrictEquals(parseSince("2025-06-01T08:30:15.5+02:00", NOW), "2025-06-01T06:30:15.500Z");
  assertStrictEquals(parseSince("24h", NOW), "2025-06-14T12:00:00.000Z");
  assertStrictEquals(parseSince("7d", NOW), "2025-06-08T12:00:00.000Z");
  assertStrictEquals(parseSince("90m", NOW), "2025-06-15T10:30:00.000Z");
});

Deno.test("parseSince() refuses impossible and ambiguous input", () => {
  for (const bad of ["2025-02-30", "2025-13-01", "2025-06-01T24:00", "June 1", "1w", "", "-1d"]) {
    assertThrows(() => parseSince(bad, NOW), /Cannot parse --since/, bad);
  }
});

Deno.test("parseKeyPrefix() accepts hex with or without sha256:", () => {
  assertStrictEquals(parseKeyPrefix("sha256:ABCdef01"), "abcdef01");
  assertStrictEquals(parseKeyPrefix("0a"), "0a");
  assertThrows(() => parseKeyPrefix("xyz"), /Cannot parse --key/);
  assertThrows(() => parseKeyPrefix("a%"), /Cannot parse --key/);
});

Deno.test("filtersFrom() checks every filter value", () => {
  assertEquals(
    filtersFrom({ kind: "structured", surface: "a2a", unreviewed: true }, NOW),
    {
      since: undefined,
      until: undefined,
      intent: undefined,
      sender: undefined,
      source: undefined,
      signed: undefined,
      kind: "structured",
      surface: "a2a",
      key: undefined,
      unreviewed: true,
      status: undefined,
    },
  );
  assertEquals(filtersFrom({ signed: true, intent: "report" }, NOW).signed, true);
  assertEquals(filtersFrom({ unsigned: true }, NOW).signed, false);
  assertEquals(filtersFrom({ status: "new" }, NOW).status, "new");
  assertThrows(() => filtersFrom({ kind: "both" }, NOW), /--kind/);
  assertThrows(() => filtersFrom({ status: "done" }, NOW), /--status/);
  assertThrows(() => filtersFrom({ signed: true, unsigned: true }, NOW), /--signed/);
  assertThrows(() => filtersFrom({ intent: "" }, NOW), /--intent/);
  assertThrows(() => filtersFrom({ source: "a b" }, NOW), /--source/);
});

Deno.test("progressLine() draws a bar of plain characters", () => {
  assertStrictEquals(progressLine("export", 1, 4), "export [#####---------------] 1/4 25%");
  assertStrictEquals(progressLine("export", 9, 9), "export [####################] 9/9 100%");
  assertStrictEquals(progressLine("export", 3, 0), "export 3");
});

Deno.test("normaliseArgs() lets receipt ids and option values start with a dash", () => {
  const options = { note: { type: "string" }, help: { type: "boolean", short: "h" } } as const;
  assertEquals(normaliseArgs(["-AbC", "--note", "-x"], options), ["--note=-x", "--", "-AbC"]);
  assertEquals(normaliseArgs(["--note=a", "-h", "id"], options), ["--note=a", "-h", "--", "id"]);
  assertEquals(normaliseArgs(["a", "--", "--note"], options), ["--", "a", "--note"]);
  assertThrows(() => normaliseArgs(["--note"], options), /Cannot parse --note: it needs a value/);
  const parsed = parseCommand(["-Xyz_-abc", "--note", "--looks-like-a-flag"], options, 1);
  assertEquals(parsed.positionals, ["-Xyz_-abc"]);
  assertStrictEquals(parsed.values.note, "--looks-like-a-flag");
  assertThrows(() => parseCommand(["--bogus"], options, 1), /Cannot parse the arguments/);
  assertThrows(() => parseCommand(["a", "b"], options, 1), /too many arguments/);
});
