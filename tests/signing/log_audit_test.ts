/**
 * The log audit: consistency proofs (RFC 9162 §2.1.4) against the recursive definition for every
 * pair of sizes up to 70, their verification and its refusals, and the intake-signature check.
 */
import {
  consistencyProof,
  IntakeSignatures,
  intakeSignaturesFrom,
  LogWalk,
  verifyConsistency,
} from "../../src/signing/log_audit.ts";
import {
  leafHash,
  MerkleAccumulator,
  submissionLeafData,
  treeRoot,
} from "../../src/signing/merkle.ts";
import { hex } from "../../src/bytes.ts";
import { signingKeyFromSeed } from "../../src/signing/key.ts";
import { signReceipts } from "../../src/signing/receipt.ts";
import { assert, assertEquals, assertRejects } from "../support/assert.ts";

const leaves = (n: number) =>
  Array.from({ length: n }, (_, i) => leafHash(new TextEncoder().encode(`leaf ${i}`)));

/** RFC 9162 §2.1.4.1, written as the RFC writes it: recursion on D[0:n] with the flag b. */
function subproof(m: number, tree: Uint8Array[], complete: boolean): Uint8Array[] {
  const n = tree.length;
  if (m === n) return complete ? [] : [treeRoot(tree)];
  let k = 1;
  while (k * 2 < n) k *= 2;
  return m <= k
    ? [...subproof(m, tree.slice(0, k), complete), treeRoot(tree.slice(k))]
    : [...subproof(m - k, tree.slice(k), false), treeRoot(tree.slice(0, k))];
}

Deno.test("consistencyProof() equals the RFC's recursive SUBPROOF, and verifies, for every 0 < m ≤ n ≤ 70", async () => {
  const all = leaves(70);
  for (let n = 1; n <= 70; n++) {
    const tree = all.slice(0, n);
    const subtree = (start: number, end: number) =>
      Promise.resolve(treeRoot(tree.slice(start, end)));
    for (let m = 1; m <= n; m++) {
      const proof = await consistencyProof(m, n, subtree);
      assertEquals(proof, m === n ? [] : subproof(m, tree, true), `${m} → ${n}`);
      const first = treeRoot(all.slice(0, m));
      assert(verifyConsistency(m, n, first, treeRoot(tree), proof), `${m} → ${n} verifies`);
    }
  }
});

Deno.test("verifyConsistency() refuses a changed hash, a wrong root, a fork and wrong sizes", async () => {
  const all = leaves(13);
  const subtree = (start: number, end: number) => Promise.resolve(treeRoot(all.slice(start, end)));
  const first = treeRoot(all.slice(0, 5));
  const second = treeRoot(all);
  const proof = await consistencyProof(5, 13, subtree);
  assert(verifyConsistency(5, 13, first, second, proof));
  for (let i = 0; i < proof.length; i++) {
    const changed = proof.map((hash) => new Uint8Array(hash));
    changed[i][0] ^= 1;
    assert(!verifyConsistency(5, 13, first, second, changed), `hash ${i} changed`);
  }
  assert(!verifyConsistency(5, 13, second, second, proof), "wrong first root");
  assert(!verifyConsistency(5, 13, first, first, proof), "wrong second root");
  // A fork: the same first five leaves' root, but a second tree that changed leaf 2.
  const forked = [...all];
  forked[2] = leafHash(new Uint8Array([9]));
  assert(!verifyConsistency(5, 13, first, treeRoot(forked), proof), "a fork");
  assert(!verifyConsistency(4, 13, first, second, proof), "wrong first size");
  assert(!verifyConsistency(5, 13, first, second, proof.slice(1)), "a hash left out");
  assert(!verifyConsistency(5, 13, first, second, [...proof, proof[0]]), "a hash added");
  assert(!verifyConsistency(6, 5, first, second, []), "first above second");
  assert(!verifyConsistency(5, 13, first, second, []), "an empty proof");
  assert(verifyConsistency(0, 13, treeRoot([]), second, []), "the empty tree extends to any");
  assert(verifyConsistency(13, 13, second, second, []), "a tree is consistent with itself");
  assert(!verifyConsistency(13, 13, first, second, []), "the same size with two roots");
  await assertRejects(() => consistencyProof(6, 5, subtree), RangeError);
  await assertRejects(() => consistencyProof(-1, 5, subtree), RangeError);
});

Deno.test("IntakeSignatures: single and batch forms verify under the key, nothing else does", async () => {
  const key = await signingKeyFromSeed(new Uint8Array(32).fill(3));
  const other = await signingKeyFromSeed(new Uint8Array(32).fill(4));
  const receipts = [1, 2, 3, 4, 5].map((size) => ({
    id: `receipt-${size}`,
    receivedAt: "2025-06-01T12:00:03.123Z",
    digest: "sha256:" + "0".repeat(64),
    size,
    kind: "unstructured",
  }));
  const batch = (await signReceipts(key, receipts)).receipts;
  const [single] = (await signReceipts(key, [receipts[0]])).receipts;
  const check = new IntakeSignatures([key.publicKey]);
  for (let i = 0; i < receipts.length; i++) assert(await check.verifies(receipts[i], batch[i]));
  assert(await check.verifies(receipts[0], single));
  // Another row's place in the batch, another row's fields, another key, no signature.
  assert(!await check.verifies(receipts[1], batch[0]));
  assert(!await check.verifies({ ...receipts[2], kind: "structured" }, batch[2]));
  assert(!await check.verifies(receipts[1], single));
  assert(!await check.verifies(receipts[0], undefined));
  assert(!await new IntakeSignatures([other.publicKey]).verifies(receipts[0], batch[0]));
  assert(
    await new IntakeSignatures([other.publicKey, key.publicKey]).verifies(receipts[3], batch[3]),
  );
  // A remembered batch signature does not vouch for a proof that leads to another root.
  const forged = { signature: batch[0].signature, batch: { ...batch[0].batch!, index: 1 } };
  assert(!await check.verifies(receipts[0], forged));
  // A malformed stored path is `false`, never a throw.
  const malformed = { signature: batch[0].signature, batch: { size: 5, index: 0, path: ["!"] } };
  assert(!await check.verifies(receipts[0], malformed));
});

Deno.test("intakeSignaturesFrom(): the recorded start, never after the first signed row", () => {
  assertEquals(intakeSignaturesFrom(1, 1), 1);
  assertEquals(intakeSignaturesFrom(40, undefined), 40);
  assertEquals(intakeSignaturesFrom(40, 12), 12);
  assertEquals(intakeSignaturesFrom(3, 12), 3);
  assertEquals(intakeSignaturesFrom(undefined, 7), 7);
  assertEquals(intakeSignaturesFrom(undefined, undefined), Infinity);
  // As SQL reads them: NULL when nothing is recorded or signed.
  assertEquals(intakeSignaturesFrom(null, null), Infinity);
  assertEquals(intakeSignaturesFrom(null, 9), 9);
});

Deno.test("IntakeSignatures.verifiesAll(): whole batches by their root, the rest row by row, the same verdicts as verifies()", async () => {
  const key = await signingKeyFromSeed(new Uint8Array(32).fill(5));
  const receipt = (n: number) => ({
    id: `receipt-${n}`,
    receivedAt: "2025-06-01T12:00:03.123Z",
    digest: "sha256:" + "0".repeat(64),
    size: n,
    kind: "unstructured",
  });
  const first = [1, 2, 3, 4, 5, 6, 7].map(receipt);
  const second = [8, 9, 10].map(receipt);
  const [single] = (await signReceipts(key, [receipt(11)])).receipts;
  const rows = [
    ...(await signReceipts(key, first)).receipts.map((stored, i) => ({ fields: first[i], stored })),
    { fields: receipt(11), stored: single },
    ...(await signReceipts(key, second)).receipts.map((stored, i) => ({
      fields: second[i],
      stored,
    })),
  ];
  const check = new IntakeSignatures([key.publicKey]);
  assertEquals(await check.verifiesAll(rows), rows.map(() => true));
  // A changed row in a whole batch, a batch cut short (a row the key check skipped), a row
  // without a signature: the verdicts name exactly those rows.
  const changed = rows.map((row, i) =>
    i === 2 ? { ...row, fields: { ...row.fields, size: 99 } } : row
  );
  assertEquals(
    await new IntakeSignatures([key.publicKey]).verifiesAll(changed),
    rows.map((_, i) => i !== 2),
  );
  const cut = [...rows.slice(0, 3), ...rows.slice(4)];
  assertEquals(await new IntakeSignatures([key.publicKey]).verifiesAll(cut), cut.map(() => true));
  const bare = rows.map((row, i) => i === 9 ? { ...row, stored: undefined } : row);
  assertEquals(
    await new IntakeSignatures([key.publicKey]).verifiesAll(bare),
    rows.map((_, i) => i !== 9),
  );
  const other = await signingKeyFromSeed(new Uint8Array(32).fill(6));
  assertEquals(
    await new IntakeSignatures([other.publicKey]).verifiesAll(rows),
    rows.map(() => false),
  );
});

Deno.test("LogWalk: gaps, unencodable and unacknowledged rows are found, and each recorded root is compared at its size", () => {
  const row = (seq: number, id = `r${seq}`) => ({
    seq,
    id,
    receivedAt: "2026-01-01T00:00:00.000Z",
    digest: "sha256:00",
  });
  const leafOf = (seq: number) => leafHash(submissionLeafData(row(seq)));
  const walk = new LogWalk(new MerkleAccumulator());
  const rootOf = (seqs: number[]) => hex(treeRoot(seqs.map(leafOf)));
  walk.expect({ treeSize: 0, rootHash: hex(treeRoot([])) });
  walk.expect({ treeSize: 2, rootHash: rootOf([1, 3]) });
  walk.expect({ treeSize: 2, rootHash: "00".repeat(32) });
  walk.expect({ treeSize: 9, rootHash: "00".repeat(32) });
  assertEquals(walk.compareNow().matched.length, 1);

  const first = walk.check(row(1), true);
  assertEquals(first.findings, []);
  assertEquals(walk.append(1, first.leaf!), { matched: [], mismatched: [] });
  // Row 2 is gone; row 3 was not acknowledged.
  const third = walk.check(row(3), false);
  assertEquals(third.findings, [{ kind: "missing", from: 2, to: 2 }, { kind: "unacknowledged" }]);
  // Checking changes nothing: a signer that stops here sees the same findings next time.
  assertEquals(walk.check(row(3), false).findings, third.findings);
  const due = walk.append(3, third.leaf!);
  assertEquals(due.matched.map((r) => r.rootHash), [rootOf([1, 3])]);
  assertEquals(due.mismatched.map((r) => r.rootHash), ["00".repeat(32)]);
  const odd = walk.check({ ...row(4), id: "\ud800" }, true);
  assertEquals(odd.findings, [{ kind: "unencodable" }]);
  assertEquals(odd.leaf, undefined);
  assertEquals(walk.unreached().map((r) => r.treeSize), [9]);
  assertEquals(walk.size, 2);
});
