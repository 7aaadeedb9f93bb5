/**
 * src/signing/tiles.ts against an implementation nobody here wrote: Go's `golang.org/x/mod/sumdb/
 * tlog` (the checksum database's), through tests/go/tlogvectors. For logs of `leaf 0`, `leaf 1`,
 * … the TypeScript log must give Go's root, Go's tiles byte for byte at every path, and Go's
 * inclusion and consistency proofs, read from its own tiles; and a log continued from its right
 * edge alone must agree with one that appended every leaf.
 */
import { fromHex, hex } from "../../src/bytes.ts";
import { consistencyProof } from "../../src/signing/log_audit.ts";
import { leafHash } from "../../src/signing/merkle.ts";
import {
  entriesAt,
  inclusionProof,
  rangeHash,
  type Tile,
  TILE_WIDTH,
  TileLog,
  tilePath,
  verifyInclusion,
} from "../../src/signing/tiles.ts";
import { assert, assertEquals } from "../support/assert.ts";
import { goTlogVectors } from "../support/go_tlog.ts";

/** A log of `size` leaves with every entry it completed kept per level, as the store keeps them. */
function build(size: number) {
  const log = new TileLog();
  const levels: Uint8Array[][] = [];
  for (let i = 0; i < size; i++) {
    log.append(leafHash(`leaf ${i}`));
    // Taken in uneven steps, as heads of different sizes take them.
    if (i % 7 === 3 || i === size - 1) {
      for (const [level, added] of log.takeAdded().entries()) {
        levels[level] ??= [];
        assertEquals(added.first, levels[level].length, "entries are taken in order");
        levels[level].push(...added.entries);
      }
    }
  }
  const tile = ({ level, index, width }: Tile) =>
    Promise.resolve(levels[level]?.slice(index * TILE_WIDTH, index * TILE_WIDTH + width) ?? []);
  return { log, levels, tile };
}

for (const size of [1, 2, 3, 7, 255, 256, 257, 511, 512, 513, 1000, 65_539]) {
  Deno.test(`TileLog over ${size} leaves: Go's root, tiles and proofs`, async () => {
    const go = await goTlogVectors(size);
    const { log, levels, tile } = build(size);
    assertEquals(hex(log.root()), go.root);
    // Every tile Go names, at its path, byte for byte; and no tile Go does not name.
    const ours: Record<string, string> = {};
    for (let level = 0; level < levels.length; level++) {
      const entries = entriesAt(size, level);
      for (let index = 0; index * TILE_WIDTH < entries; index++) {
        const width = Math.min(TILE_WIDTH, entries - index * TILE_WIDTH);
        const bytes = (await tile({ level, index, width })).map(hex).join("");
        ours[tilePath({ level, index, width })] = bytes;
      }
    }
    assertEquals(ours, go.tiles);
    for (const [index, proof] of Object.entries(go.inclusion)) {
      const ourProof = await inclusionProof(Number(index), size, tile);
      assertEquals(ourProof.map(hex), proof, `inclusion of ${index}`);
      assert(
        verifyInclusion(Number(index), size, fromHex(go.leafHashes[index])!, ourProof, log.root()),
      );
    }
    for (const [first, proof] of Object.entries(go.consistency)) {
      const ourProof = await consistencyProof(Number(first), size, (s, e) => rangeHash(s, e, tile));
      assertEquals(ourProof.map(hex), proof, `consistency from ${first}`);
      assertEquals(hex(await rangeHash(0, Number(first), tile)), go.roots[first]);
    }
    // A process that kept nothing continues from the newest tile of every level.
    const edge = await Promise.all(
      levels.map((_, level) => {
        const entries = entriesAt(size, level);
        const width = entries % TILE_WIDTH;
        return width === 0 ? [] : tile({ level, index: Math.floor(entries / TILE_WIDTH), width });
      }),
    );
    const continued = TileLog.fromEdge(size, edge.map((entries) => [...entries]));
    assertEquals(hex(continued.root()), go.root);
    continued.append(leafHash(`leaf ${size}`));
    log.append(leafHash(`leaf ${size}`));
    assertEquals(hex(continued.root()), hex(log.root()));
  });
}

Deno.test("verifyInclusion() refuses a proof for another index, size or leaf", async () => {
  const { log, tile } = build(300);
  const proof = await inclusionProof(200, 300, tile);
  const leaf = leafHash("leaf 200");
  assert(verifyInclusion(200, 300, leaf, proof, log.root()));
  assert(!verifyInclusion(201, 300, leaf, proof, log.root()));
  assert(!verifyInclusion(200, 201, leaf, proof, log.root()));
  assert(!verifyInclusion(200, 600, leaf, proof, log.root()));
  assert(!verifyInclusion(200, 300, leafHash("leaf 201"), proof, log.root()));
  assert(!verifyInclusion(200, 300, leaf, proof.slice(1), log.root()));
  assert(!verifyInclusion(200, 300, leaf, [...proof, leaf], log.root()));
});
