/**
 * CommittedReceipts: what a process committed, in runs of consecutive `seq`s, each row compared
 * with its own members whatever the key check skipped around it, out-of-order commits, the
 * limit, and forgetting what a head covers.
 */
import { CommittedReceipts } from "../../src/signing/committed.ts";
import type { SignedReceiptFields } from "../../src/signing/receipt.ts";
import { assertEquals } from "../support/assert.ts";

const receipt = (
  id: string,
  overrides: Partial<SignedReceiptFields> = {},
): SignedReceiptFields => ({
  id,
  receivedAt: "2025-06-01T12:00:03.123Z",
  digest: "sha256:" + "0".repeat(64),
  size: 16,
  kind: "unstructured",
  ...overrides,
});

Deno.test("CommittedReceipts: each inserted row is compared with its own members, across skipped rows and gaps", () => {
  const committed = new CommittedReceipts();
  // Rows 5 and 6, a row the key check skipped, then 9 (another instance took 7 and 8), then 10.
  committed.add([5, 6, 0, 9, 10], ["a", "b", "skipped", "c", "d"].map((id) => receipt(id)));
  assertEquals(committed.size, 4);
  for (const [seq, id] of [[5, "a"], [6, "b"], [9, "c"], [10, "d"]] as const) {
    assertEquals(committed.check(seq, receipt(id)), true, `row ${seq}`);
  }
  for (const seq of [4, 7, 8, 11]) assertEquals(committed.check(seq, receipt("a")), undefined);
  // Any member that reads otherwise, or a row moved to another seq.
  assertEquals(committed.check(5, receipt("a", { size: 17 })), false);
  assertEquals(committed.check(5, receipt("a", { kind: "structured" })), false);
  assertEquals(committed.check(5, receipt("a", { receivedAt: "2020-01-01T00:00:00.000Z" })), false);
  assertEquals(committed.check(5, receipt("a", { digest: "sha256:" + "1".repeat(64) })), false);
  assertEquals(committed.check(6, receipt("a")), false);
  // A member that would shift a boundary in a plain concatenation still reads otherwise.
  assertEquals(committed.check(5, receipt('a","2025')), false);
});

Deno.test("CommittedReceipts: commits told out of order are found in order; the limit and forgetting what a head covers", () => {
  const committed = new CommittedReceipts(5);
  committed.add([20, 21], [receipt("late-1"), receipt("late-2")]);
  committed.add([10, 11], [receipt("early-1"), receipt("early-2")]);
  assertEquals(committed.check(10, receipt("early-1")), true);
  assertEquals(committed.check(11, receipt("early-2")), true);
  assertEquals(committed.check(21, receipt("late-2")), true);
  // Past the limit, a commit is left to the stored signatures.
  committed.add([30, 31], [receipt("x"), receipt("y")]);
  assertEquals(committed.check(30, receipt("x")), undefined);
  committed.add([32], [receipt("z")]);
  assertEquals(committed.size, 5);
  // A head covered up to 20: the run before it goes, the one it reaches into stays.
  committed.forgetBefore(21);
  assertEquals(committed.size, 3);
  assertEquals(committed.check(10, receipt("early-1")), undefined);
  assertEquals(committed.check(20, receipt("late-1")), true);
  assertEquals(committed.check(32, receipt("z")), true);
});
