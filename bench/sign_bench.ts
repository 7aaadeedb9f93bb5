/**
 * Process CPU of receipt signing for one batch of 25 receipts (the group commit's usual size
 * under the bench's load), and of its parts: the 25 leaves (canonical bytes and SHA-256), the
 * RFC 6962 tree with every audit path, one Ed25519 signature by WebCrypto, and the same
 * signature by `node:crypto` (synchronous). Run with the server's V8 flags:
 * `deno run -A --v8-flags=--max-semi-space-size=16 bench/sign_bench.ts`.
 *
 * @module
 */
import process from "node:process";
import { createPrivateKey, sign } from "node:crypto";
import {
  canonicalReceiptBytes,
  leafHash,
  signingKeyFromSeed,
  signReceipts,
  treeWithPaths,
} from "../src/signing/mod.ts";

const seed = crypto.getRandomValues(new Uint8Array(32));
const key = await signingKeyFromSeed(seed);
const receipts = Array.from({ length: 25 }, (_, i) => ({
  id: "AZR1t2x1q4Xv3T0x0kq8T5bJm3V6e" + (i % 10),
  receivedAt: new Date().toISOString(),
  digest: "sha256:" + "ab".repeat(32),
  size: 600,
  kind: "unstructured",
}));

async function time(name: string, runs: number, work: () => unknown): Promise<void> {
  for (let i = 0; i < 50; i++) await work();
  const before = process.cpuUsage();
  for (let i = 0; i < runs; i++) await work();
  const spent = process.cpuUsage(before);
  console.log(`${name.padEnd(34)} ${((spent.user + spent.system) / runs).toFixed(1)} µs CPU`);
}

const leaves = receipts.map((receipt) => leafHash(canonicalReceiptBytes(receipt)));
const bytes = new Uint8Array(80);
// RFC 8410 PKCS #8 prefix of an Ed25519 seed.
const prefix = [0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x04];
const der = new Uint8Array([...prefix, 0x22, 0x04, 0x20, ...seed]);
const nodeKey = createPrivateKey({ key: der, format: "der", type: "pkcs8" });
await time("signReceipts, 25 receipts", 500, () => signReceipts(key, receipts));
await time(
  "25 leaves (bytes + SHA-256)",
  500,
  () => receipts.map((receipt) => leafHash(canonicalReceiptBytes(receipt))),
);
await time("tree and paths of 25 leaves", 500, () => treeWithPaths(leaves));
await time(
  "Ed25519 sign, WebCrypto",
  500,
  () => crypto.subtle.sign("Ed25519", key.privateKey, bytes),
);
await time("Ed25519 sign, node:crypto", 500, () => sign(null, bytes, nodeKey));
