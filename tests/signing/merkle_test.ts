import { assert, assertEquals } from "../support/assert.ts";
import {
  leafHash,
  MerkleAccumulator,
  rootFromPath,
  treeRoot,
  treeWithPaths,
} from "../../src/signing/merkle.ts";

const data = (n: number) =>
  Array.from({ length: n }, (_, i) => new TextEncoder().encode(`leaf ${i}`));

Deno.test("treeRoot() agrees with the streaming MerkleAccumulator for 0 to 70 leaves", () => {
  const tree = new MerkleAccumulator();
  const leaves = data(70).map(leafHash);
  for (let n = 0; n <= 70; n++) {
    assertEquals(treeRoot(leaves.slice(0, n)), tree.root(), `${n} leaves`);
    if (n < 70) tree.append(leaves[n]);
  }
});

Deno.test("treeWithPaths() gives every leaf a path that leads to the root, and only from its index", () => {
  for (let n = 1; n <= 40; n++) {
    const leaves = data(n).map(leafHash);
    const { root, paths } = treeWithPaths(leaves);
    assertEquals(root, treeRoot(leaves));
    assertEquals(paths.length, n);
    paths.forEach((path, index) => {
      assertEquals(rootFromPath(leaves[index], index, n, path), root, `leaf ${index} of ${n}`);
      const elsewhere = rootFromPath(leaves[index], (index + 1) % n, n, path);
      if (n > 1) assert(elsewhere === undefined || elsewhere.some((b, i) => b !== root[i]));
    });
  }
});

Deno.test("rootFromPath() refuses an index outside the tree and a path of the wrong length", () => {
  const leaves = data(5).map(leafHash);
  const { paths } = treeWithPaths(leaves);
  assertEquals(rootFromPath(leaves[0], 5, 5, paths[0]), undefined);
  assertEquals(rootFromPath(leaves[0], -1, 5, paths[0]), undefined);
  assertEquals(rootFromPath(leaves[0], 0, 5, paths[0].slice(1)), undefined);
  assertEquals(rootFromPath(leaves[0], 0, 5, [...paths[0], leaves[1]]), undefined);
});
