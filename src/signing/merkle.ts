/**
 * The Merkle tree hash of RFC 6962 §2.1 (RFC 9162 §2.1), synchronous, with inclusion proofs (RFC 9162 §2.1.3):
 * what a batch of receipts signed with one signature needs (`receipt.ts`).
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
 * @module
 */
import { sha256 } from "../bytes.ts";

const LEAF_PREFIX = 0x00;
const NODE_PREFIX = 0x01;

/** SHA-256(0x00 || data): the hash of one leaf. */
export function leafHash(data: Uint8Array): Uint8Array<ArrayBuffer> {
  const input = new Uint8Array(1 + data.length);
  input[0] = LEAF_PREFIX;
  input.set(data, 1);
  return sha256(input);
}

/** SHA-256(0x01 || left || right): the hash of an interior node. */
export function nodeHash(left: Uint8Array, right: Uint8Array): Uint8Array<ArrayBuffer> {
  const input = new Uint8Array(1 + left.length + right.length);
  input[0] = NODE_PREFIX;
  input.set(left, 1);
  input.set(right, 1 + left.length);
  return sha256(input);
}

/** The largest power of two smaller than `n` (n > 1): where RFC 6962 splits a tree. */
function split(n: number): number {
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
