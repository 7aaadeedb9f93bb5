/**
 * The Merkle tree of RFC 6962 §2.1 (RFC 9162 §2.1), synchronous, in one place for both of its
 * uses: the submissions in `seq` order, whose tree heads the checkpoints sign (`checkpoint.ts`,
 * checked by `review verify`), and a batch of receipts signed with one signature, with inclusion
 * proofs (RFC 9162 §2.1.3; `receipt.ts`).
 *
 * ```text
 * MTH({})       = SHA-256()
 * leaf hash     = SHA-256(0x00 || leaf data)
 * node hash     = SHA-256(0x01 || left || right)
 * MTH(D[0:n])   = node hash(MTH(D[0:k]), MTH(D[k:n]))   for n > 1, k the largest power of two < n
 * ```
 *
 * The one-byte prefixes separate leaves from interior nodes, so a leaf can never be passed off
 * as a node (the second-preimage attack on plain Merkle trees).
 *
 * ## Leaf data of a submission
 *
 * ```text
 * leaf data = UTF-8( JCS({"digest": digest, "id": id, "receivedAt": received_at, "seq": seq}) )
 * ```
 *
 * the RFC 8785 serialisation of exactly those four stored columns: members sorted
 * (`digest`, `id`, `receivedAt`, `seq`), no whitespace, strings as stored, `seq` a plain decimal
 * integer. Example: `{"digest":"sha256:9f86…","id":"AZR1t2x1q4Xv3T0x0kq8T5bJm3V6eA",
 * "receivedAt":"2025-06-01T12:00:03.123Z","seq":1}`. The digest stands for the content, so the
 * tree covers the content through it; `verify` separately checks each digest against the bytes.
 * `seq` is included so that removing a row and renumbering cannot go unnoticed.
 *
 * {@linkcode MerkleAccumulator} computes the same roots while leaves stream in, keeping only
 * one hash per set bit of the leaf count (O(log n) memory), and can answer the root of every
 * prefix as it passes, which is what checking many checkpoints in one pass needs.
 *
 * @module
 */
import { sha256 } from "../bytes.ts";
import { canonicalString } from "../json/canonical.ts";

const LEAF_PREFIX = 0x00;
const NODE_PREFIX = 0x01;

/**
 * Where a leaf's or node's input is assembled before it is hashed, instead of a new array per
 * hash: the hash copies what it reads and is synchronous, so one buffer is never shared by two
 * hashes. A string's UTF-8 goes straight into it (`encodeInto` writes into existing memory;
 * `encode` makes a new buffer on every call, about ten times the cost for a leaf of 175 bytes in
 * Deno 2.9). Inputs larger than it get an array of their own, so it never grows.
 */
const scratch = new Uint8Array(4096);
const scratchText = scratch.subarray(1);
const utf8 = new TextEncoder();

/**
 * SHA-256(0x00 || data): the hash of one leaf. A string is hashed as its UTF-8 (an unpaired
 * surrogate as U+FFFD, as `TextEncoder` writes it).
 */
export function leafHash(data: Uint8Array | string): Uint8Array<ArrayBuffer> {
  // UTF-8 takes at most three bytes per UTF-16 code unit.
  const most = typeof data === "string" ? 3 * data.length : data.length;
  const input = most < scratch.length ? scratch : new Uint8Array(1 + most);
  input[0] = LEAF_PREFIX;
  if (typeof data !== "string") {
    input.set(data, 1);
    return sha256(input.subarray(0, 1 + data.length));
  }
  const { written } = utf8.encodeInto(data, input === scratch ? scratchText : input.subarray(1));
  return sha256(input.subarray(0, 1 + written));
}

/** SHA-256(0x01 || left || right): the hash of an interior node. */
export function nodeHash(left: Uint8Array, right: Uint8Array): Uint8Array<ArrayBuffer> {
  const length = 1 + left.length + right.length;
  const input = length <= scratch.length ? scratch.subarray(0, length) : new Uint8Array(length);
  input[0] = NODE_PREFIX;
  input.set(left, 1);
  input.set(right, 1 + left.length);
  return sha256(input);
}

/** The largest power of two smaller than `n` (n > 1): where RFC 6962 splits a tree. */
export function split(n: number): number {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
}

/** MTH over already hashed leaves (RFC 6962 §2.1). */
export function treeRoot(leaves: readonly Uint8Array[]): Uint8Array<ArrayBuffer> {
  if (leaves.length === 0) return sha256(new Uint8Array(0));
  if (leaves.length === 1) return leaves[0] as Uint8Array<ArrayBuffer>;
  const k = split(leaves.length);
  return nodeHash(treeRoot(leaves.slice(0, k)), treeRoot(leaves.slice(k)));
}

/**
 * The root of a tree over `leaves` and every leaf's inclusion proof (audit path, RFC 6962
 * §2.1.1: the sibling hashes from the leaf up to the root), in one pass: each interior node is
 * hashed once, so a batch of n leaves costs n − 1 node hashes, not one tree per proof.
 */
export function treeWithPaths(
  leaves: readonly Uint8Array[],
): { root: Uint8Array<ArrayBuffer>; paths: Uint8Array<ArrayBuffer>[][] } {
  if (leaves.length === 0) return { root: sha256(new Uint8Array(0)), paths: [] };
  if (leaves.length === 1) return { root: leaves[0] as Uint8Array<ArrayBuffer>, paths: [[]] };
  const k = split(leaves.length);
  const left = treeWithPaths(leaves.slice(0, k));
  const right = treeWithPaths(leaves.slice(k));
  for (const path of left.paths) path.push(right.root);
  for (const path of right.paths) path.push(left.root);
  return { root: nodeHash(left.root, right.root), paths: [...left.paths, ...right.paths] };
}

/**
 * The root an inclusion proof leads to (RFC 9162 §2.1.3.2), or undefined when the proof cannot
 * belong to a leaf `index` of a tree of `size` leaves.
 */
export function rootFromPath(
  leaf: Uint8Array,
  index: number,
  size: number,
  path: readonly Uint8Array[],
): Uint8Array<ArrayBuffer> | undefined {
  if (!Number.isSafeInteger(index) || !Number.isSafeInteger(size) || index < 0 || index >= size) {
    return undefined;
  }
  let fn = index;
  let sn = size - 1;
  let hash = leaf as Uint8Array<ArrayBuffer>;
  for (const sibling of path) {
    if (sn === 0) return undefined;
    if (fn % 2 === 1 || fn === sn) {
      hash = nodeHash(sibling, hash);
      if (fn % 2 === 0) {
        while (fn % 2 === 0 && fn !== 0) {
          fn = Math.floor(fn / 2);
          sn = Math.floor(sn / 2);
        }
      }
    } else {
      hash = nodeHash(hash, sibling);
    }
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  return sn === 0 ? hash : undefined;
}

/**
 * A Merkle tree grown one leaf at a time. It keeps the roots of the perfect subtrees that the
 * binary representation of the leaf count splits the tree into (largest first): RFC 6962's
 * split at the largest power of two below `n` is exactly that decomposition, so folding those
 * roots from the right gives `MTH(D[0:n])`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { leafHash, MerkleAccumulator } from "./merkle.ts";
 *
 * const tree = new MerkleAccumulator();
 * tree.append(leafHash(new Uint8Array([1])));
 * assert.equal(tree.size, 1);
 * assert.equal(tree.root().length, 32);
 * ```
 */
export class MerkleAccumulator {
  // Perfect subtree roots, left to right; heights strictly decrease.
  readonly #stack: { height: number; hash: Uint8Array<ArrayBuffer> }[] = [];
  #size = 0;
  readonly #onSubtree: ((height: number, hash: Uint8Array<ArrayBuffer>) => void) | undefined;

  /**
   * @param onSubtree Told each perfect subtree the moment an append completes it (its height, 0
   *   for the leaf itself, and its hash), in the order of their leaves within each height: a
   *   caller that keeps subtree hashes (a {@linkcode MerkleLog}) gets them without hashing again.
   */
  constructor(onSubtree?: (height: number, hash: Uint8Array<ArrayBuffer>) => void) {
    this.#onSubtree = onSubtree;
  }

  /** Number of leaves appended so far. */
  get size(): number {
    return this.#size;
  }

  /**
   * Appends one leaf hash (from {@linkcode leafHash}).
   *
   * @param leaf The 32-byte leaf hash.
   */
  append(leaf: Uint8Array): void {
    let entry = { height: 0, hash: new Uint8Array(leaf) };
    this.#onSubtree?.(0, entry.hash);
    // Two perfect subtrees of equal height are siblings: merge them, like a binary carry.
    while (this.#stack.length > 0 && this.#stack[this.#stack.length - 1].height === entry.height) {
      const left = this.#stack.pop()!;
      entry = { height: entry.height + 1, hash: nodeHash(left.hash, entry.hash) };
      this.#onSubtree?.(entry.height, entry.hash);
    }
    this.#stack.push(entry);
    this.#size++;
  }

  /**
   * The tree head over every leaf appended so far.
   *
   * @returns The 32-byte root; SHA-256("") for the empty tree.
   */
  root(): Uint8Array<ArrayBuffer> {
    if (this.#stack.length === 0) return treeRoot([]);
    let hash = this.#stack[this.#stack.length - 1].hash;
    for (let i = this.#stack.length - 2; i >= 0; i--) {
      hash = nodeHash(this.#stack[i].hash, hash);
    }
    return hash;
  }
}

/** The stored columns of a submission that its Merkle leaf commits to. */
export interface LeafFields {
  /** The row's `seq`: its position in the log. */
  readonly seq: number;
  /** The receipt id. */
  readonly id: string;
  /** `received_at`, exactly as stored. */
  readonly receivedAt: string;
  /** `digest`, exactly as stored (`sha256:<hex>`). */
  readonly digest: string;
}

/**
 * The leaf data of one submission (see the module documentation): UTF-8 of the RFC 8785 form of
 * `{digest, id, receivedAt, seq}`.
 *
 * @param row The four stored columns.
 * @returns The leaf data (hash it with {@linkcode leafHash}).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { submissionLeafData } from "./merkle.ts";
 *
 * const data = submissionLeafData({
 *   seq: 1,
 *   id: "a",
 *   receivedAt: "2025-06-01T00:00:00.000Z",
 *   digest: "sha256:00",
 * });
 * assert.equal(
 *   new TextDecoder().decode(data),
 *   '{"digest":"sha256:00","id":"a","receivedAt":"2025-06-01T00:00:00.000Z","seq":1}',
 * );
 * ```
 */
export function submissionLeafData(row: LeafFields): Uint8Array<ArrayBuffer> {
  return utf8.encode(submissionLeafText(row));
}

/**
 * A submission's leaf hash: {@linkcode leafHash} of its {@linkcode submissionLeafData}, without
 * the bytes as an array of their own.
 *
 * @throws {TypeError} As {@linkcode submissionLeafData}.
 */
export function submissionLeafHash(row: LeafFields): Uint8Array<ArrayBuffer> {
  return leafHash(submissionLeafText(row));
}

/** {@linkcode submissionLeafData} before UTF-8. */
function submissionLeafText(row: LeafFields): string {
  if (!Number.isSafeInteger(row.seq)) {
    throw new TypeError("Cannot hash leaf: seq is not an integer");
  }
  // The RFC 8785 form written out, as for receipts (receipt.ts): four members of known names and
  // types in their sorted order (§3.2.3), strings as `JSON.stringify` writes them (§3.2.2.2), the
  // integer in plain decimal; the signer and `verify` hash one per row.
  // tests/signing/merkle_rfc6962_test.ts checks it against `canonicalJson`.
  return '{"digest":' + leafString(row.digest) + ',"id":' + leafString(row.id) + ',"receivedAt":' +
    leafString(row.receivedAt) + ',"seq":' + String(row.seq) + "}";
}

/** A member of a leaf: stored columns are strings, but a tampered row may hold anything. */
function leafString(value: unknown): string {
  if (typeof value !== "string") throw new TypeError("Cannot hash leaf: a member is not a string");
  return canonicalString(value);
}
