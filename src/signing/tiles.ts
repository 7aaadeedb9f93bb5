/**
 * The submission log as C2SP tiles (c2sp.org/tlog-tiles): the RFC 6962 tree kept as the hashes of
 * its complete subtrees of 256^L leaves, 256 to a tile.
 *
 * - A level-0 tile holds leaf hashes; an entry of a level-L tile is the root of the perfect
 *   subtree over 256^L leaves, so level L + 1 is level L with every 256 entries hashed into one
 *   (8 levels of the binary tree per tile level: the tile height is 8).
 * - Tile `N` of level `L` holds the entries `256·N` to `256·N + 255`; while fewer exist it is a
 *   partial tile of width `W`, the first `W` entries. A tile never changes once published, at any
 *   width: a wider one only adds entries.
 * - {@linkcode TileLog} is the log's right edge: the partial tile of every level. Its root is the
 *   RFC 6962 root at its size, and appending a leaf costs one leaf hash plus, once in 256 leaves,
 *   the 255 node hashes that close a tile, so a process continues a log of any length from its
 *   newest partial tiles, never rereading it.
 * - {@linkcode inclusionProof} and {@linkcode rangeHash} read any other hash from a tile source.
 *
 * Pure hashing: where the tiles are kept is src/store/log_rows.ts.
 *
 * @module
 */
import { sha256 } from "../bytes.ts";
import { nodeHash, rootFromPath, split } from "./merkle.ts";

/** Tree levels per tile level (c2sp.org/tlog-tiles: "tiles have a fixed height of 8"). */
export const TILE_HEIGHT = 8;

/** Entries in a full tile: 2^{@linkcode TILE_HEIGHT}. */
export const TILE_WIDTH = 256;

/** The bytes of one hash in a tile. */
export const HASH_BYTES = 32;

/** One tile: level, index, and width (256 for a full tile, 1–255 for a partial one). */
export interface Tile {
  readonly level: number;
  readonly index: number;
  readonly width: number;
}

/** RFC 6962 §2.1: the root of the empty tree is SHA-256 of nothing. */
export const EMPTY_ROOT: Uint8Array<ArrayBuffer> = sha256(new Uint8Array(0));

/** The number of entries level `level` has in a tree of `size` leaves: ⌊size / 256^level⌋. */
export function entriesAt(size: number, level: number): number {
  return Math.floor(size / TILE_WIDTH ** level);
}

/**
 * The root of the perfect subtree over `entries` (a power of two of them), each entry itself the
 * root of an equal perfect subtree: the entries hashed pairwise, level by level.
 */
export function perfectRoot(entries: readonly Uint8Array[]): Uint8Array {
  let level = entries;
  while (level.length > 1) {
    const up: Uint8Array[] = new Array(level.length / 2);
    for (let i = 0; i < up.length; i++) up[i] = nodeHash(level[2 * i], level[2 * i + 1]);
    level = up;
  }
  return level[0];
}

/**
 * The RFC 6962 root over a run of perfect subtrees that decrease in size from left to right (the
 * binary decomposition of a tree's size): `MTH(D[n]) = node(MTH(D[0:k]), MTH(D[k:n]))` with `k`
 * the first subtree's size, folded from the right (RFC 6962 §2.1).
 */
function foldRight(subtrees: readonly Uint8Array[]): Uint8Array {
  let root = subtrees[subtrees.length - 1];
  for (let i = subtrees.length - 2; i >= 0; i--) root = nodeHash(subtrees[i], root);
  return root;
}

/** The perfect subtrees `entries` make in order, by the binary decomposition of their count. */
function decompose(entries: readonly Uint8Array[], into: Uint8Array[]): void {
  let at = 0;
  for (let width = TILE_WIDTH / 2; width >= 1; width /= 2) {
    if (entries.length - at < width) continue;
    into.push(perfectRoot(entries.slice(at, at + width)));
    at += width;
  }
}

/**
 * The log's right edge: the entries of the newest (partial) tile of every level. It grows by
 * {@linkcode append} and says its RFC 6962 {@linkcode root} at any size; {@linkcode takeAdded}
 * hands over every entry completed since the last call, level by level, for storing.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { leafHash, treeRoot } from "./merkle.ts";
 * import { TileLog } from "./tiles.ts";
 *
 * const leaves = Array.from({ length: 300 }, (_, i) => leafHash(`leaf ${i}`));
 * const log = new TileLog();
 * for (const leaf of leaves) log.append(leaf);
 * assert.deepEqual(log.root(), treeRoot(leaves));
 * const added = log.takeAdded();
 * assert.equal(added[0].entries.length, 300); // every leaf hash, from entry 0
 * assert.equal(added[1].entries.length, 1); // the root of leaves 0–255
 * // A process that kept nothing continues from the right edge alone.
 * const again = TileLog.fromEdge(300, [leaves.slice(256), [added[1].entries[0]]]);
 * assert.deepEqual(again.root(), treeRoot(leaves));
 * ```
 */
export class TileLog {
  #size = 0;
  /** Per level, the entries of its newest tile (fewer than 256). */
  readonly #edge: Uint8Array[][] = [[]];
  /** Per level, entries completed since {@linkcode takeAdded}, and the index of the first. */
  #added: { first: number; entries: Uint8Array[] }[] = [];

  /**
   * The log of `size` leaves from its right edge: `edge[L]` holds the entries of level L's newest
   * tile, `⌊size / 256^L⌋ mod 256` of them, for every level that has entries.
   *
   * @throws {RangeError} When an edge does not have the length the size requires.
   */
  static fromEdge(size: number, edge: readonly (readonly Uint8Array[])[]): TileLog {
    const log = new TileLog();
    log.#size = size;
    log.#edge.length = 0;
    for (let level = 0; level === 0 || entriesAt(size, level) > 0; level++) {
      const entries = edge[level] ?? [];
      if (entries.length !== entriesAt(size, level) % TILE_WIDTH) {
        throw new RangeError(`Cannot continue the log: level ${level} needs its newest tile`);
      }
      log.#edge.push([...entries]);
    }
    return log;
  }

  /** Leaves in the log. */
  get size(): number {
    return this.#size;
  }

  /** Appends one leaf hash, closing every tile it completes. */
  append(leaf: Uint8Array): void {
    this.#size++;
    let entry = leaf;
    for (let level = 0;; level++) {
      this.#edge[level] ??= [];
      const tile = this.#edge[level];
      tile.push(entry);
      const added = this.#added[level] ??= {
        first: entriesAt(this.#size, level) - 1,
        entries: [],
      };
      added.entries.push(entry);
      if (tile.length < TILE_WIDTH) return;
      // A full tile: its root is the next level's new entry.
      entry = perfectRoot(tile);
      this.#edge[level] = [];
    }
  }

  /** The RFC 6962 root over every leaf appended (the empty tree's for none). */
  root(): Uint8Array {
    if (this.#size === 0) return EMPTY_ROOT;
    const subtrees: Uint8Array[] = [];
    for (let level = this.#edge.length - 1; level >= 0; level--) {
      decompose(this.#edge[level], subtrees);
    }
    return foldRight(subtrees);
  }

  /**
   * The entries completed since the last call, per level from 0: `first` is the index of the
   * first at its level. Levels without new entries are left out at the end.
   */
  takeAdded(): { first: number; entries: Uint8Array[] }[] {
    const added = this.#added;
    this.#added = [];
    return added;
  }
}

/** Reads tiles: the entries of one tile of at least `width` entries (more are allowed). */
export type TileSource = (tile: Tile) => Promise<readonly Uint8Array[]>;

/**
 * MTH(D[start:end]) of a log of at least `end` leaves, read from tiles: the range is split into
 * perfect subtrees (largest first; `start` must be a multiple of the first one's size, as in every
 * range RFC 9162's proofs name), each read from the one tile that holds its entries and hashed up.
 */
export async function rangeHash(
  start: number,
  end: number,
  tiles: TileSource,
): Promise<Uint8Array> {
  if (end <= start) return EMPTY_ROOT;
  const subtrees: Uint8Array[] = [];
  let at = start;
  while (at < end) {
    let size = 1;
    while (size * 2 <= end - at) size *= 2;
    subtrees.push(await perfectHash(at, size, tiles));
    at += size;
  }
  return foldRight(subtrees);
}

/** The root of the perfect, aligned subtree over leaves `[start, start + size)`. */
async function perfectHash(start: number, size: number, tiles: TileSource): Promise<Uint8Array> {
  const height = Math.log2(size);
  const level = Math.floor(height / TILE_HEIGHT);
  const span = TILE_WIDTH ** level; // leaves per entry at that level
  const first = start / span;
  const count = size / span; // at most 128: an aligned run inside one tile
  const index = Math.floor(first / TILE_WIDTH);
  const offset = first - index * TILE_WIDTH;
  const entries = await tiles({ level, index, width: offset + count });
  return perfectRoot(entries.slice(offset, offset + count));
}

/**
 * The inclusion proof of leaf `index` in the tree of `size` leaves (RFC 9162 §2.1.3.1,
 * PATH(m, D[n])), from tiles: the sibling hashes from the leaf up.
 *
 * @throws {RangeError} When `index` is not below `size`.
 */
export async function inclusionProof(
  index: number,
  size: number,
  tiles: TileSource,
): Promise<Uint8Array[]> {
  if (!Number.isSafeInteger(index) || !Number.isSafeInteger(size) || index < 0 || index >= size) {
    throw new RangeError("Cannot prove inclusion: the index must be below the tree size");
  }
  const path: Uint8Array[] = [];
  let start = 0;
  let end = size;
  let m = index;
  while (end - start > 1) {
    const k = split(end - start);
    if (m < k) {
      path.push(await rangeHash(start + k, end, tiles));
      end = start + k;
    } else {
      path.push(await rangeHash(start, start + k, tiles));
      start += k;
      m -= k;
    }
  }
  // Found from the root down; the proof lists the leaf's sibling first.
  return path.reverse();
}

/**
 * Verifies an inclusion proof (RFC 9162 §2.1.3.2): `leaf` is entry `index` of the tree of `size`
 * leaves whose root is `root`. Never throws.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { leafHash, treeRoot } from "./merkle.ts";
 * import { inclusionProof, TILE_WIDTH, verifyInclusion } from "./tiles.ts";
 *
 * const leaves = Array.from({ length: 7 }, (_, i) => leafHash(`leaf ${i}`));
 * const tiles = ({ level }: { level: number }) =>
 *   Promise.resolve(level === 0 ? leaves.slice(0, TILE_WIDTH) : []);
 * const proof = await inclusionProof(5, 7, tiles);
 * assert.ok(verifyInclusion(5, 7, leaves[5], proof, treeRoot(leaves)));
 * assert.ok(!verifyInclusion(4, 7, leaves[5], proof, treeRoot(leaves)));
 * ```
 */
export function verifyInclusion(
  index: number,
  size: number,
  leaf: Uint8Array,
  proof: readonly Uint8Array[],
  root: Uint8Array,
): boolean {
  if (proof.some((hash) => hash.length !== HASH_BYTES)) return false;
  const folded = rootFromPath(leaf, index, size, proof);
  return folded !== undefined && folded.length === root.length &&
    folded.every((byte, i) => byte === root[i]);
}

/**
 * The path of a tile under a log's prefix (c2sp.org/tlog-tiles): `tile/<L>/<N>[.p/<W>]`, the
 * index in groups of three digits, each but the last prefixed with `x`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { tilePath } from "./tiles.ts";
 *
 * assert.equal(tilePath({ level: 0, index: 1234067, width: 256 }), "tile/0/x001/x234/067");
 * assert.equal(tilePath({ level: 1, index: 0, width: 5 }), "tile/1/000.p/5");
 * ```
 */
export function tilePath(tile: Tile): string {
  const digits = String(tile.index).padStart(3, "0");
  const groups: string[] = [];
  for (let end = digits.length; end > 0; end -= 3) {
    groups.unshift(digits.slice(Math.max(0, end - 3), end).padStart(3, "0"));
  }
  const index = groups.map((group, i) => i < groups.length - 1 ? "x" + group : group).join("/");
  return `tile/${tile.level}/${index}` + (tile.width < TILE_WIDTH ? `.p/${tile.width}` : "");
}

/**
 * Hashes end to end, 32 bytes each: a tile's body as c2sp.org/tlog-tiles serves it, and the
 * entries a head stores (src/store/log_rows.ts).
 */
export function tileBytes(entries: readonly Uint8Array[]): Uint8Array<ArrayBuffer> {
  const bytes = new Uint8Array(32 * entries.length);
  for (let i = 0; i < entries.length; i++) bytes.set(entries[i], 32 * i);
  return bytes;
}

/** The largest level a tile path may name: 256^6 leaves is past any safe integer. */
const MAX_LEVEL = 6;

/**
 * The tile a path after `tile/` names, or undefined when it is not one written exactly as
 * {@linkcode tilePath} writes it (one spelling per tile, so one cache entry per tile).
 */
export function parseTilePath(path: string): Tile | undefined {
  const match = /^([0-9])\/((?:x[0-9]{3}\/)*[0-9]{3})(?:\.p\/([1-9][0-9]{0,2}))?$/.exec(path);
  if (match === null) return undefined;
  const level = Number(match[1]);
  const index = Number(match[2].replaceAll("x", "").replaceAll("/", ""));
  const width = match[3] === undefined ? TILE_WIDTH : Number(match[3]);
  if (level > MAX_LEVEL || !Number.isSafeInteger(index) || width > TILE_WIDTH) return undefined;
  const tile = { level, index, width };
  return tilePath(tile) === "tile/" + path ? tile : undefined;
}
