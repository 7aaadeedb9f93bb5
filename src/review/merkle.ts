/**
 * The Merkle tree of RFC 6962 §2.1 (Certificate Transparency), over the Beacon's submissions in
 * `seq` order, for tamper evidence: a recorded root commits to every leaf under it.
 *
 * Hashing, with one-byte domain separation between leaves and interior nodes (RFC 6962 §2.1;
 * it makes a leaf impossible to pass off as a node, the second-preimage attack on plain Merkle
 * trees):
 *
 * ```text
 * MTH({})       = SHA-256()                         (the empty string)
 * leaf hash     = SHA-256(0x00 || leaf data)
 * node hash     = SHA-256(0x01 || left || right)
 * MTH(D[0:n])   = node hash(MTH(D[0:k]), MTH(D[k:n]))   for n > 1, k the largest power of two < n
 * ```
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
import { canonicalJson } from "../message/canonical.ts";

const LEAF_PREFIX = 0x00;
const NODE_PREFIX = 0x01;

async function sha256(bytes: Uint8Array<ArrayBuffer>): Promise<Uint8Array<ArrayBuffer>> {
  return new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
}

/**
 * The root of the empty tree: SHA-256 of the empty string (RFC 6962 §2.1).
 *
 * @returns 32 bytes, `e3b0c442…b855`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { emptyRoot } from "./merkle.ts";
 *
 * assert.equal((await emptyRoot()).length, 32);
 * ```
 */
export async function emptyRoot(): Promise<Uint8Array<ArrayBuffer>> {
  return await sha256(new Uint8Array(0));
}

/**
 * The leaf hash `SHA-256(0x00 || data)` (RFC 6962 §2.1).
 *
 * @param data The leaf data.
 * @returns 32 bytes.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { leafHash } from "./merkle.ts";
 *
 * // SHA-256 of the single byte 0x00 (RFC 9162 §2.1.1)
 * const hex = Array.from(await leafHash(new Uint8Array()), (b) => b.toString(16).padStart(2, "0"));
 * assert.ok(hex.join("").startsWith("6e340b9c"));
 * ```
 */
export async function leafHash(data: Uint8Array): Promise<Uint8Array<ArrayBuffer>> {
  const input = new Uint8Array(1 + data.length);
  input[0] = LEAF_PREFIX;
  input.set(data, 1);
  return await sha256(input);
}

/**
 * The interior node hash `SHA-256(0x01 || left || right)` (RFC 6962 §2.1).
 *
 * @param left The left child's hash (32 bytes).
 * @param right The right child's hash (32 bytes).
 * @returns 32 bytes.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { leafHash, nodeHash } from "./merkle.ts";
 *
 * const a = await leafHash(new Uint8Array([1]));
 * assert.equal((await nodeHash(a, a)).length, 32);
 * ```
 */
export async function nodeHash(
  left: Uint8Array,
  right: Uint8Array,
): Promise<Uint8Array<ArrayBuffer>> {
  const input = new Uint8Array(1 + left.length + right.length);
  input[0] = NODE_PREFIX;
  input.set(left, 1);
  input.set(right, 1 + left.length);
  return await sha256(input);
}

/**
 * The Merkle tree head of a list of leaf hashes, straight from the recursive definition of
 * RFC 6962 §2.1. Holds every leaf in memory: the reference the streaming
 * {@linkcode MerkleAccumulator} is tested against, and fine for small trees.
 *
 * @param leaves Leaf hashes in order.
 * @returns The 32-byte root.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { leafHash, merkleRoot } from "./merkle.ts";
 *
 * const leaf = await leafHash(new Uint8Array());
 * assert.deepEqual(await merkleRoot([leaf]), leaf); // a one-leaf tree's root is its leaf: 6e340b9c…
 * ```
 */
export async function merkleRoot(leaves: readonly Uint8Array[]): Promise<Uint8Array<ArrayBuffer>> {
  if (leaves.length === 0) return await emptyRoot();
  if (leaves.length === 1) return new Uint8Array(leaves[0]);
  let k = 1;
  while (k * 2 < leaves.length) k *= 2;
  return await nodeHash(await merkleRoot(leaves.slice(0, k)), await merkleRoot(leaves.slice(k)));
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
 * await tree.append(await leafHash(new Uint8Array([1])));
 * assert.equal(tree.size, 1);
 * assert.equal((await tree.root()).length, 32);
 * ```
 */
export class MerkleAccumulator {
  // Perfect subtree roots, left to right; heights strictly decrease.
  readonly #stack: { height: number; hash: Uint8Array<ArrayBuffer> }[] = [];
  #size = 0;

  /** Number of leaves appended so far. */
  get size(): number {
    return this.#size;
  }

  /**
   * Appends one leaf hash (from {@linkcode leafHash}).
   *
   * @param leaf The 32-byte leaf hash.
   */
  async append(leaf: Uint8Array): Promise<void> {
    let entry = { height: 0, hash: new Uint8Array(leaf) };
    // Two perfect subtrees of equal height are siblings: merge them, like a binary carry.
    while (this.#stack.length > 0 && this.#stack[this.#stack.length - 1].height === entry.height) {
      const left = this.#stack.pop()!;
      entry = { height: entry.height + 1, hash: await nodeHash(left.hash, entry.hash) };
    }
    this.#stack.push(entry);
    this.#size++;
  }

  /**
   * The tree head over every leaf appended so far.
   *
   * @returns The 32-byte root; SHA-256("") for the empty tree.
   */
  async root(): Promise<Uint8Array<ArrayBuffer>> {
    if (this.#stack.length === 0) return await emptyRoot();
    let hash = this.#stack[this.#stack.length - 1].hash;
    for (let i = this.#stack.length - 2; i >= 0; i--) {
      hash = await nodeHash(this.#stack[i].hash, hash);
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
  if (!Number.isSafeInteger(row.seq)) {
    throw new TypeError("Cannot hash leaf: seq is not an integer");
  }
  return new TextEncoder().encode(
    canonicalJson({ digest: row.digest, id: row.id, receivedAt: row.receivedAt, seq: row.seq }),
  );
}
