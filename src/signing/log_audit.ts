/**
 * The audit of the submission log that its signer (src/tree_heads.ts) and its verifier
 * (`review verify`) share: which rows a tree head may cover, and whether one head extends
 * another.
 *
 * ## A head covers only rows the Beacon acknowledged
 *
 * Every row stored since schema version 9 carries the receipt signature the intake made in the
 * row's own transaction (src/store/rows.ts). A head vouches for a row only when that stored
 * signature verifies under the key (docs/protocol-0.1.md §6.2–6.4): a database writer without the
 * private key cannot make one, so a row it inserted is reported and never covered. Rows stored
 * before version 9 have none; they are covered as before, up to {@linkcode intakeSignaturesFrom}.
 *
 * Verifying costs one Ed25519 verification per signature, not per row: the rows of one batch
 * share one signature over their batch's root, and {@linkcode IntakeSignatures} remembers the
 * roots it has verified, so each further row of the batch costs its leaf and audit path only.
 *
 * ## Consistency (RFC 9162 §2.1.4)
 *
 * {@linkcode consistencyProof} builds the proof that the tree of `first` leaves is a prefix of the
 * tree of `second` leaves, from any source of subtree hashes, and
 * {@linkcode verifyConsistency} checks one against the two roots (§2.1.4.2), so a monitor that
 * kept an older head can check that a newer one only appended.
 *
 * @module
 */
import { base64url, hex } from "../bytes.ts";
import { verifyBytes } from "./ed25519.ts";
import { nodeHash, split, submissionLeafHash, treeRoot } from "./merkle.ts";
import {
  canonicalBatchBytes,
  receiptBatchRoot,
  receiptLeafHash,
  type ReceiptSignature,
  type SignedReceiptFields,
  verifyReceipt,
} from "./receipt.ts";

/** How many verified batch roots are remembered: batches arrive in order, so a few suffice. */
const REMEMBERED_BATCHES = 64;

/**
 * The first `seq` that must carry a verifying intake signature: the one recorded when the store
 * was upgraded (schema version 10, `log_settings`), but never after the first row that does carry
 * one (a row signed at intake proves the store already signed every later row). Without either,
 * no row is required to carry one (a store older than version 9 that was never upgraded).
 *
 * @param recorded `intake_signatures_from` as read (null or undefined when not recorded).
 * @param firstSigned The smallest `seq` with a stored signature as read (null or undefined when
 *   there is none).
 * @returns The first required `seq`, or `Infinity`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { intakeSignaturesFrom } from "./log_audit.ts";
 *
 * assert.equal(intakeSignaturesFrom(1, undefined), 1);
 * assert.equal(intakeSignaturesFrom(90, 5), 5); // raised by a writer: the signed row wins
 * assert.equal(intakeSignaturesFrom(undefined, undefined), Infinity);
 * ```
 */
export function intakeSignaturesFrom(recorded: unknown, firstSigned: unknown): number {
  const seq = (value: unknown) => value === null || value === undefined ? Infinity : Number(value);
  return Math.min(seq(recorded), seq(firstSigned));
}

/**
 * Checks rows' stored intake signatures under a set of keys, one Ed25519 verification per
 * signature.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { signingKeyFromSeed } from "./key.ts";
 * import { IntakeSignatures } from "./log_audit.ts";
 * import { signReceipts } from "./receipt.ts";
 *
 * const key = await signingKeyFromSeed(new Uint8Array(32).fill(7));
 * const receipts = [1, 2, 3].map((size) => ({
 *   id: "r" + size,
 *   receivedAt: "2025-06-01T12:00:03.123Z",
 *   digest: "sha256:" + "0".repeat(64),
 *   size,
 *   kind: "unstructured",
 * }));
 * const stored = (await signReceipts(key, receipts)).receipts;
 * const check = new IntakeSignatures([key.publicKey]);
 * assert.ok(await check.verifies(receipts[0], stored[0]));
 * assert.ok(await check.verifies(receipts[2], stored[2])); // same batch: no second verification
 * assert.ok(!await check.verifies({ ...receipts[1], size: 9 }, stored[1]));
 * assert.ok(!await check.verifies(receipts[1], undefined));
 * ```
 */
export class IntakeSignatures {
  readonly #keys: readonly string[];
  /** Verified batch signatures: signature → `size:root` it was verified over. */
  readonly #batches = new Map<string, string>();

  /** @param keys The raw Ed25519 public keys (base64url) a signature may verify under. */
  constructor(keys: Iterable<string>) {
    this.#keys = [...keys];
  }

  /**
   * {@linkcode verifies} for rows in log order, cheaper where a whole batch is there: rows that
   * carry one batch signature with indexes `0 … size − 1` in order are checked by rebuilding the
   * batch's root from their receipts (one leaf hash each and `size − 1` node hashes for the
   * batch, RFC 6962 §2.1) instead of folding each row's audit path (about log2(size) node hashes
   * per row), then one signature check. The root binds every leaf in its place, so this is the
   * same verdict; any other run of rows is checked row by row.
   *
   * @returns One verdict per row, in order.
   */
  async verifiesAll(
    rows: readonly { fields: SignedReceiptFields; stored: ReceiptSignature | undefined }[],
  ): Promise<boolean[]> {
    const verdicts: boolean[] = [];
    for (let at = 0; at < rows.length;) {
      const batch = rows[at].stored?.batch;
      const size = batch?.size;
      const whole = batch !== undefined && batch.index === 0 && Number.isSafeInteger(size) &&
        size! > 1 && at + size! <= rows.length &&
        rows.slice(at, at + size!).every((row, i) =>
          row.stored?.signature === rows[at].stored!.signature && row.stored.batch?.size === size &&
          row.stored.batch?.index === i
        );
      if (!whole) {
        verdicts.push(await this.verifies(rows[at].fields, rows[at].stored));
        at++;
        continue;
      }
      const group = rows.slice(at, at + size!);
      if (await this.#verifiesBatch(group.map((row) => row.fields), group[0].stored!)) {
        for (let i = 0; i < group.length; i++) verdicts.push(true);
      } else {
        // Some row of the batch is not as signed: each is checked alone to name exactly which.
        for (const row of group) verdicts.push(await this.verifies(row.fields, row.stored));
      }
      at += size!;
    }
    return verdicts;
  }

  /** Whether `stored`'s batch signature is over the root of exactly these receipts, in order. */
  async #verifiesBatch(
    receipts: readonly SignedReceiptFields[],
    stored: ReceiptSignature,
  ): Promise<boolean> {
    let root: Uint8Array;
    try {
      root = treeRoot(receipts.map(receiptLeafHash));
    } catch {
      return false; // a member of the wrong type, or a string with no JCS form
    }
    const signed = `${receipts.length}:${base64url(root)}`;
    if (this.#batches.get(stored.signature) === signed) return true;
    const bytes = canonicalBatchBytes(root, receipts.length);
    for (const key of this.#keys) {
      if (await verifyBytes(key, bytes, stored.signature)) {
        this.#remember(stored.signature, signed);
        return true;
      }
    }
    return false;
  }

  #remember(signature: string, signed: string): void {
    if (this.#batches.size >= REMEMBERED_BATCHES) this.#batches.clear();
    this.#batches.set(signature, signed);
  }

  /**
   * Whether `stored` is a signature by one of the keys over exactly these receipt members.
   * Never throws: anything malformed is `false`.
   */
  async verifies(
    fields: SignedReceiptFields,
    stored: ReceiptSignature | undefined,
  ): Promise<boolean> {
    if (stored === undefined) return false;
    const batch = stored.batch;
    if (batch === undefined) {
      for (const key of this.#keys) {
        if (await verifyReceipt(key, fields, stored.signature)) return true;
      }
      return false;
    }
    const root = receiptBatchRoot(fields, batch);
    if (root === undefined) return false;
    const signed = `${batch.size}:${base64url(root)}`;
    if (this.#batches.get(stored.signature) === signed) return true;
    for (const key of this.#keys) {
      if (await verifyReceipt(key, fields, stored.signature, batch)) {
        this.#remember(stored.signature, signed);
        return true;
      }
    }
    return false;
  }
}

/**
 * The hash of the subtree over leaves `[start, end)` of the log: RFC 6962 §2.1's MTH(D[start:end])
 * for the ranges a proof names (`start` a multiple of the largest power of two not above
 * `end − start`).
 */
export type SubtreeHash = (start: number, end: number) => Promise<Uint8Array>;

/**
 * The consistency proof between the trees of `first` and `second` leaves (RFC 9162 §2.1.4.1),
 * empty when `first` is 0 or equals `second`.
 *
 * @param first The older tree's size.
 * @param second The newer tree's size, at least `first`.
 * @param subtree The hashes of the log's subtrees.
 * @returns The proof's hashes, in order.
 * @throws {RangeError} When the sizes are not `0 ≤ first ≤ second` safe integers.
 */
export async function consistencyProof(
  first: number,
  second: number,
  subtree: SubtreeHash,
): Promise<Uint8Array[]> {
  if (!Number.isSafeInteger(first) || !Number.isSafeInteger(second) || first < 0) {
    throw new RangeError("Cannot prove consistency: sizes must be non-negative integers");
  }
  if (first > second) throw new RangeError("Cannot prove consistency: first exceeds second");
  if (first === 0 || first === second) return [];
  const proof: Uint8Array[] = [];
  // SUBPROOF(m, D[start:end], b) of §2.1.4.1, iterated: each step descends one level.
  let m = first;
  let start = 0;
  let end = second;
  let complete = true; // b: whether the subtree of m leaves is the older tree itself
  const right: Uint8Array[] = [];
  while (m !== end - start) {
    const k = split(end - start);
    if (m <= k) {
      right.push(await subtree(start + k, end));
      end = start + k;
    } else {
      right.push(await subtree(start, start + k));
      m -= k;
      start += k;
      complete = false;
    }
  }
  if (!complete) proof.push(await subtree(start, end));
  // The recursion appends on the way back up: the deepest hash first.
  for (let i = right.length - 1; i >= 0; i--) proof.push(right[i]);
  return proof;
}

/**
 * Verifies a consistency proof (RFC 9162 §2.1.4.2): the tree of `first` leaves with root
 * `firstRoot` is a prefix of the tree of `second` leaves with root `secondRoot`.
 *
 * @returns Whether the proof shows it. Never throws.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { consistencyProof, verifyConsistency } from "./log_audit.ts";
 * import { leafHash, treeRoot } from "./merkle.ts";
 *
 * const leaves = [1, 2, 3, 4, 5, 6, 7].map((n) => leafHash(new Uint8Array([n])));
 * const subtree = (start: number, end: number) => Promise.resolve(treeRoot(leaves.slice(start, end)));
 * const proof = await consistencyProof(3, 7, subtree);
 * assert.ok(verifyConsistency(3, 7, treeRoot(leaves.slice(0, 3)), treeRoot(leaves), proof));
 * assert.ok(!verifyConsistency(3, 7, treeRoot(leaves.slice(0, 2)), treeRoot(leaves), proof));
 * ```
 */
export function verifyConsistency(
  first: number,
  second: number,
  firstRoot: Uint8Array,
  secondRoot: Uint8Array,
  proof: readonly Uint8Array[],
): boolean {
  if (
    !Number.isSafeInteger(first) || !Number.isSafeInteger(second) || first < 0 ||
    first > second || proof.some((hash) => hash.length !== 32)
  ) return false;
  if (first === second) return proof.length === 0 && equal(firstRoot, secondRoot);
  if (first === 0) return proof.length === 0;
  // §2.1.4.2, step by step.
  if (proof.length === 0) return false;
  const path = isPowerOfTwo(first) ? [firstRoot, ...proof] : [...proof];
  let fn = first - 1;
  let sn = second - 1;
  while (fn % 2 === 1) {
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  let fr = path[0];
  let sr = path[0];
  for (const c of path.slice(1)) {
    if (sn === 0) return false;
    if (fn % 2 === 1 || fn === sn) {
      fr = nodeHash(c, fr);
      sr = nodeHash(c, sr);
      while (fn % 2 === 0 && fn !== 0) {
        fn = Math.floor(fn / 2);
        sn = Math.floor(sn / 2);
      }
    } else {
      sr = nodeHash(sr, c);
    }
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  return sn === 0 && equal(fr, firstRoot) && equal(sr, secondRoot);
}

function isPowerOfTwo(n: number): boolean {
  return n > 0 && Number.isInteger(Math.log2(n)); // exact for safe integers; `&` is 32-bit
}

function equal(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((byte, i) => byte === b[i]);
}

/** A submission row as the log walk reads it: the members its leaf is made of. */
export interface LogRow {
  readonly seq: number;
  readonly id: string;
  readonly receivedAt: string;
  readonly digest: string;
}

/** Something wrong with a row, found by {@linkcode LogWalk.check}. */
export type RowFinding =
  /** Rows `from` to `to` are missing before this one (deleted: SQLite numbers rows one past the largest). */
  | { readonly kind: "missing"; readonly from: number; readonly to: number }
  /** Its columns cannot be a leaf (a member not a string, or an unpaired surrogate). */
  | { readonly kind: "unencodable" }
  /** The Beacon did not acknowledge it as it reads: no stored intake signature verifies. */
  | { readonly kind: "unacknowledged" };

/** A root some record says the log has at `treeSize` leaves (a head, or one kept elsewhere). */
export interface RootRecord {
  readonly treeSize: number;
  readonly rootHash: string;
}

/** A tree the walk appends leaves to: a `TileLog` (the signer) or a `MerkleAccumulator`. */
interface GrowingTree {
  readonly size: number;
  append(leaf: Uint8Array): void;
  root(): Uint8Array;
}

/**
 * The walk over the submission log that its signer (src/tree_heads.ts) and `review verify` share:
 * rows in `seq` order, each checked ({@linkcode check}: no rows missing before it, a leaf its
 * columns can make, acknowledged by the Beacon), then appended to the tree
 * ({@linkcode append}), where every recorded root due at the new size is compared (RFC 9162
 * §2.1.4: a later tree extends every earlier head). The signer stops at the first finding and
 * signs nothing over it; the verifier reports every one.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { LogWalk } from "./log_audit.ts";
 * import { MerkleAccumulator } from "./merkle.ts";
 *
 * const walk = new LogWalk(new MerkleAccumulator());
 * walk.expect({ treeSize: 1, rootHash: "00".repeat(32) });
 * const row = { seq: 2, id: "a", receivedAt: "2025-06-01T00:00:00.000Z", digest: "sha256:00" };
 * const { findings, leaf } = walk.check(row, true);
 * assert.deepEqual(findings, [{ kind: "missing", from: 1, to: 1 }]);
 * assert.equal(walk.append(row.seq, leaf!).mismatched.length, 1);
 * ```
 */
export class LogWalk<R extends RootRecord = RootRecord> {
  readonly #tree: GrowingTree;
  readonly #expected = new Map<number, R[]>();
  /** The `seq` of the last row appended. */
  #lastSeq: number;

  /** @param tree The tree to grow; the walk continues from its size (rows 1 to size). */
  constructor(tree: GrowingTree) {
    this.#tree = tree;
    this.#lastSeq = tree.size;
  }

  /** Leaves appended so far. */
  get size(): number {
    return this.#tree.size;
  }

  /** The root over the leaves appended so far. */
  root(): Uint8Array {
    return this.#tree.root();
  }

  /** Expects `record.rootHash` once the tree reaches `record.treeSize` (checked at {@linkcode append}). */
  expect(record: R): void {
    const due = this.#expected.get(record.treeSize);
    if (due === undefined) this.#expected.set(record.treeSize, [record]);
    else due.push(record);
  }

  /** The records of sizes the tree has not reached: they cover rows that do not exist. */
  unreached(): R[] {
    return [...this.#expected.values()].flat();
  }

  /**
   * What is wrong with the next row, and its leaf hash (undefined when its columns cannot make
   * one). Changes nothing: a row not appended is checked again next time.
   *
   * @param row The next row in `seq` order.
   * @param acknowledged Whether its stored intake signature verifies (or is not required).
   */
  check(row: LogRow, acknowledged: boolean): { findings: RowFinding[]; leaf?: Uint8Array } {
    const findings: RowFinding[] = [];
    if (row.seq !== this.#lastSeq + 1) {
      findings.push({ kind: "missing", from: this.#lastSeq + 1, to: row.seq - 1 });
    }
    let leaf: Uint8Array | undefined;
    try {
      leaf = submissionLeafHash(row);
    } catch {
      findings.push({ kind: "unencodable" });
    }
    if (!acknowledged) findings.push({ kind: "unacknowledged" });
    return { findings, leaf };
  }

  /**
   * Appends row `seq`'s leaf, and compares every record due at the new size with the new root.
   *
   * @returns The records due now, split by whether the root matches.
   */
  append(seq: number, leaf: Uint8Array): { matched: R[]; mismatched: R[] } {
    this.#tree.append(leaf);
    this.#lastSeq = seq;
    return this.compareNow();
  }

  /**
   * Compares the records due at the current size (at the start: the empty tree's, or those a
   * caller expects at a size already reached), and forgets them.
   */
  compareNow(): { matched: R[]; mismatched: R[] } {
    const due = this.#expected.get(this.#tree.size);
    const matched: R[] = [];
    const mismatched: R[] = [];
    if (due === undefined) return { matched, mismatched };
    this.#expected.delete(this.#tree.size);
    const root = hex(this.#tree.root());
    for (const record of due) (record.rootHash === root ? matched : mismatched).push(record);
    return { matched, mismatched };
  }
}
