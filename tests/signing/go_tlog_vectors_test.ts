/**
 * Go's `sumdb/tlog` vectors (tests/go/tlogvectors, through tests/support/go_tlog.ts) are well
 * formed and say what c2sp.org/tlog-tiles and RFC 6962 say, checked here from the specifications'
 * own definitions: which tiles a tree of each size has, what level-0 and higher tiles hold, the
 * tree hash, and how many hashes each proof has. Needs Go (`.ci/run` installs it); without Go
 * these tests fail, naming the packages.
 */
import { sha256 } from "@noble/hashes/sha2.js";
import { assert, assertEquals, assertStrictEquals } from "../support/assert.ts";
import {
  fromHex,
  type GoTlogVectors,
  goTlogVectors,
  parseTilePath,
  requireGo,
  toHex,
} from "../support/go_tlog.ts";

const SIZES = [0, 1, 2, 3, 255, 256, 257, 511, 512, 513, 65536 + 3];

/** C2SP's `<N>`: 3-digit groups, all but the last starting with `x`. */
function encodeIndex(n: number): string {
  const groups = [String(n % 1000).padStart(3, "0")];
  for (let rest = Math.floor(n / 1000); rest > 0; rest = Math.floor(rest / 1000)) {
    groups.unshift("x" + String(rest % 1000).padStart(3, "0"));
  }
  return groups.join("/");
}

/** The tiles of a tree of `size`: per level, the full ones and the partial of width (s / 256**l) mod 256. */
function expectedTilePaths(size: number): string[] {
  const paths: string[] = [];
  for (let level = 0, count = size; count > 0; level++, count = Math.floor(count / 256)) {
    const full = Math.floor(count / 256);
    for (let n = 0; n < full; n++) paths.push(`tile/${level}/${encodeIndex(n)}`);
    if (count % 256 !== 0) paths.push(`tile/${level}/${encodeIndex(full)}.p/${count % 256}`);
  }
  return paths.sort();
}

function leafHash(i: number): Uint8Array {
  return sha256(new Uint8Array([0x00, ...new TextEncoder().encode(`leaf ${i}`)]));
}

function nodeHash(left: Uint8Array, right: Uint8Array): Uint8Array {
  return sha256(new Uint8Array([0x01, ...left, ...right]));
}

/** RFC 6962 MTH over `leaves[lo, hi)` (hi > lo). */
function mth(leaves: Uint8Array[], lo: number, hi: number): Uint8Array {
  if (hi - lo === 1) return leaves[lo];
  let k = 1;
  while (k * 2 < hi - lo) k *= 2;
  return nodeHash(mth(leaves, lo, lo + k), mth(leaves, lo + k, hi));
}

function largestPowerOfTwoBelow(n: number): number {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
}

/** RFC 6962 2.1.1: the number of hashes in PATH(m, D[n]). */
function auditPathLength(m: number, n: number): number {
  if (n === 1) return 0;
  const k = largestPowerOfTwoBelow(n);
  return 1 + (m < k ? auditPathLength(m, k) : auditPathLength(m - k, n - k));
}

/** RFC 6962 2.1.2: the number of hashes in SUBPROOF(m, D[n], b). */
function consistencyLength(m: number, n: number, b = true): number {
  if (m === n) return b ? 0 : 1;
  const k = largestPowerOfTwoBelow(n);
  return 1 + (m <= k ? consistencyLength(m, k, b) : consistencyLength(m - k, n - k, false));
}

/** The 32-byte entries of a tile. */
function entries(hex: string): Uint8Array[] {
  const bytes = fromHex(hex);
  return Array.from({ length: bytes.length / 32 }, (_, i) => bytes.subarray(i * 32, i * 32 + 32));
}

function checkVectors(size: number, v: GoTlogVectors): void {
  assertStrictEquals(v.size, size);
  assertEquals(Object.keys(v.tiles).sort(), expectedTilePaths(size));
  const leaves = Array.from({ length: size }, (_, i) => leafHash(i));
  assertStrictEquals(v.root, toHex(size === 0 ? sha256(new Uint8Array()) : mth(leaves, 0, size)));

  for (const [path, hex] of Object.entries(v.tiles)) {
    const tile = parseTilePath(path);
    assert(tile !== undefined, path);
    entries(hex).forEach((entry, e) => {
      const position = tile.index * 256 + e;
      const want = tile.level === 0
        // level 0: leaf hashes; above: the MTH of the full tile below (all its 256 entries).
        ? leafHash(position)
        : mth(entries(v.tiles[`tile/${tile.level - 1}/${encodeIndex(position)}`]), 0, 256);
      assertStrictEquals(toHex(entry), toHex(want), `${path} entry ${e}`);
    });
  }

  const indexes = [0, 1, size >> 1, size - 2, size - 1].filter((i) => i >= 0 && i < size);
  assertEquals(Object.keys(v.inclusion).map(Number).sort((a, b) => a - b), [...new Set(indexes)]);
  for (const [key, proof] of Object.entries(v.inclusion)) {
    assertStrictEquals(proof.length, auditPathLength(Number(key), size), `inclusion ${key}`);
    assertStrictEquals(v.leafHashes[key], toHex(leafHash(Number(key))));
  }
  assertEquals(Object.keys(v.leafHashes).sort(), Object.keys(v.inclusion).sort());

  const sizes = [1, 2, size >> 1, size - 1, size].filter((m) => m >= 1 && m <= size);
  assertEquals(
    Object.keys(v.consistency).map(Number).sort((a, b) => a - b),
    [...new Set(sizes)].sort((a, b) => a - b),
  );
  for (const [key, proof] of Object.entries(v.consistency)) {
    assertStrictEquals(proof.length, consistencyLength(Number(key), size), `consistency ${key}`);
    assertStrictEquals(v.roots[key], toHex(mth(leaves, 0, Number(key))), `root of ${key}`);
  }
  assertEquals(Object.keys(v.roots).sort(), Object.keys(v.consistency).sort());
}

Deno.test(
  "Go and .ci/run's packages are present (these tests fail without them, never skip)",
  requireGo,
);

for (const size of SIZES) {
  Deno.test(`tlogvectors ${size}: tiles, root and proof lengths as C2SP and RFC 6962 define them`, async () => {
    checkVectors(size, await goTlogVectors(size));
  });
}

Deno.test("the expected tile sets follow the tlog-tiles examples (sizes 256 and 70,000)", () => {
  assertEquals(expectedTilePaths(256), ["tile/0/000", "tile/1/000.p/1"]);
  const tiles = expectedTilePaths(70_000);
  assertStrictEquals(tiles.filter((p) => /^tile\/0\/[^.]*$/.test(p)).length, 273);
  assert(tiles.includes("tile/0/273.p/112") && tiles.includes("tile/1/000"), tiles.join());
  assert(tiles.includes("tile/1/001.p/17") && tiles.includes("tile/2/000.p/1"), tiles.join());
  assertStrictEquals(tiles.length, 273 + 1 + 1 + 1 + 1);
  assertStrictEquals(encodeIndex(1234067), "x001/x234/067");
  assertEquals(parseTilePath("tile/3/x001/x234/067.p/9"), { level: 3, index: 1234067, width: 9 });
  assertStrictEquals(parseTilePath("tile/8/0/000"), undefined); // Go's path, with the height
  assertStrictEquals(parseTilePath("tile/0/000.p/256"), undefined);
});
