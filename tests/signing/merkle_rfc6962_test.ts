/**
 * The RFC 6962 §2.1 Merkle tree: the published Certificate Transparency test vectors, the
 * streaming accumulator against the recursive definition for every size and prefix, and the
 * leaf data of a submission.
 */
import { hex, sha256 } from "../../src/bytes.ts";
import {
  leafHash,
  MerkleAccumulator,
  nodeHash,
  submissionLeafData,
  submissionLeafHash,
  treeRoot,
} from "../../src/signing/merkle.ts";
import { canonicalReceiptBytes, receiptLeafHash } from "../../src/signing/receipt.ts";
import { canonicalJson } from "../../src/json/canonical.ts";
import { assertEquals, assertStrictEquals, assertThrows } from "../support/assert.ts";

function fromHex(text: string): Uint8Array {
  return new Uint8Array((text.match(/../g) ?? []).map((pair) => parseInt(pair, 16)));
}

// The eight leaves of the Certificate Transparency reference tests (RFC 6962 test data).
const CT_LEAVES = [
  "",
  "00",
  "10",
  "2021",
  "3031",
  "40414243",
  "5051525354555657",
  "606162636465666768696a6b6c6d6e6f",
].map(fromHex);

// Root of the first n leaves, n = 0..8.
const CT_ROOTS = [
  "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
  "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
  "fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125",
  "aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77",
  "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
  "4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4",
  "76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef",
  "ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c",
  "5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328",
];

Deno.test("treeRoot([]) is SHA-256 of the empty string (RFC 6962 §2.1)", async () => {
  assertStrictEquals(hex(treeRoot([])), CT_ROOTS[0]);
  assertStrictEquals(hex(await treeRoot([])), CT_ROOTS[0]);
  assertStrictEquals(hex(await new MerkleAccumulator().root()), CT_ROOTS[0]);
});

Deno.test("leafHash() and nodeHash() prefix 0x00 and 0x01", async () => {
  const sha = async (bytes: number[]) =>
    hex(new Uint8Array(await crypto.subtle.digest("SHA-256", new Uint8Array(bytes))));
  assertStrictEquals(hex(await leafHash(new Uint8Array([7]))), await sha([0, 7]));
  assertStrictEquals(
    hex(await nodeHash(new Uint8Array([1, 2]), new Uint8Array([3]))),
    await sha([1, 1, 2, 3]),
  );
  // Domain separation: a node over two hashes differs from a leaf of their concatenation.
  const a = await leafHash(new Uint8Array([1]));
  const b = await leafHash(new Uint8Array([2]));
  const both = new Uint8Array([...a, ...b]);
  assertStrictEquals(hex(await nodeHash(a, b)) === hex(await leafHash(both)), false);
});

Deno.test("treeRoot() matches the Certificate Transparency reference roots", async () => {
  const leaves = await Promise.all(CT_LEAVES.map((leaf) => leafHash(leaf)));
  for (let n = 0; n <= 8; n++) {
    assertStrictEquals(hex(await treeRoot(leaves.slice(0, n))), CT_ROOTS[n], `size ${n}`);
  }
});

Deno.test("MerkleAccumulator gives the reference root of every prefix as leaves stream in", async () => {
  const tree = new MerkleAccumulator();
  assertStrictEquals(hex(await tree.root()), CT_ROOTS[0]);
  for (let n = 1; n <= 8; n++) {
    await tree.append(await leafHash(CT_LEAVES[n - 1]));
    assertStrictEquals(tree.size, n);
    assertStrictEquals(hex(await tree.root()), CT_ROOTS[n], `size ${n}`);
  }
});

Deno.test("MerkleAccumulator equals the recursive definition for sizes 0 to 70", async () => {
  const leaves = await Promise.all(
    Array.from({ length: 70 }, (_, i) => leafHash(new Uint8Array([i, i * 3 & 255]))),
  );
  const tree = new MerkleAccumulator();
  const roots = [hex(await tree.root())];
  for (const leaf of leaves) {
    await tree.append(leaf);
    roots.push(hex(await tree.root()));
  }
  const expected = [];
  for (let n = 0; n <= leaves.length; n++) expected.push(hex(await treeRoot(leaves.slice(0, n))));
  assertEquals(roots, expected);
  // Any change to one leaf changes every root that covers it, and none before it.
  const changed = [...leaves];
  changed[40] = await leafHash(new Uint8Array([255]));
  for (const n of [40, 41, 64, 70]) {
    const same: boolean = hex(await treeRoot(changed.slice(0, n))) === expected[n];
    assertStrictEquals(same, n <= 40, `size ${n}`);
  }
});

Deno.test("submissionLeafData() is the RFC 8785 form of seq, id, receivedAt and digest", () => {
  const data = submissionLeafData({
    seq: 12,
    id: "AZR1t2x1q4Xv3T0x0kq8T5bJm3V6eA",
    receivedAt: "2025-06-01T12:00:03.123Z",
    digest: "sha256:" + "ab".repeat(32),
  });
  assertStrictEquals(
    new TextDecoder().decode(data),
    `{"digest":"sha256:${"ab".repeat(32)}","id":"AZR1t2x1q4Xv3T0x0kq8T5bJm3V6eA",` +
      `"receivedAt":"2025-06-01T12:00:03.123Z","seq":12}`,
  );
  assertThrows(() => submissionLeafData({ seq: 1.5, id: "a", receivedAt: "b", digest: "c" }));
  assertThrows(() => submissionLeafData({ seq: 1, id: "\uD800", receivedAt: "b", digest: "c" }));
  // Written out by hand: the same bytes as the generic RFC 8785 serialiser, escapes and all.
  for (
    const text of [
      "",
      'a"b\\c',
      "\u0000\u001f\u007f",
      "line\nbreak\t",
      "é✓😀",
      "\u2028\u2029",
      "</x>",
    ]
  ) {
    for (const seq of [0, 1, 2 ** 53 - 1]) {
      const row = { seq, id: text, receivedAt: text + "Z", digest: "sha256:" + text };
      assertStrictEquals(
        new TextDecoder().decode(submissionLeafData(row)),
        canonicalJson({ digest: row.digest, id: row.id, receivedAt: row.receivedAt, seq }),
      );
    }
  }
});

Deno.test("a leaf hashed from text is the leaf of its UTF-8, at every length and for any code point; nodes of any size too", () => {
  const encoder = new TextEncoder();
  // Independent of leafHash: SHA-256 over a fresh array holding the prefix and the bytes.
  const expected = (prefix: number, ...parts: Uint8Array[]) => {
    const input = new Uint8Array(1 + parts.reduce((n, part) => n + part.length, 0));
    input[0] = prefix;
    let at = 1;
    for (const part of parts) {
      input.set(part, at);
      at += part.length;
    }
    return hex(sha256(input));
  };
  const texts = [
    "",
    "a",
    "ä€😀 and an unpaired \uD800 surrogate",
    "x".repeat(1364), // three bytes a code unit would still fit the shared buffer
    "€".repeat(1365), // 4095 bytes: the most that fits
    "€".repeat(1366), // one more code unit: an array of its own
    "y".repeat(100_000),
  ];
  for (const text of texts) {
    const bytes = encoder.encode(text);
    assertEquals(hex(leafHash(text)), expected(0, bytes), `text of ${text.length}`);
    assertEquals(hex(leafHash(bytes)), expected(0, bytes), `bytes of ${bytes.length}`);
  }
  for (const size of [32, 2047, 2048, 5000]) {
    const left = new Uint8Array(size).fill(1);
    const right = new Uint8Array(size).fill(2);
    assertEquals(hex(nodeHash(left, right)), expected(1, left, right), `node of ${size}`);
  }
  const row = { seq: 7, id: "ä", receivedAt: "2025-06-01T00:00:00.000Z", digest: "sha256:00" };
  assertEquals(hex(submissionLeafHash(row)), hex(leafHash(submissionLeafData(row))));
  const receipt = {
    id: "é".repeat(40),
    receivedAt: "2025-06-01T00:00:00.000Z",
    digest: "sha256:00",
    size: 3,
    kind: "structured",
  };
  assertEquals(hex(receiptLeafHash(receipt)), hex(leafHash(canonicalReceiptBytes(receipt))));
});
