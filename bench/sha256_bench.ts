/**
 * Micro-benchmark for the one SHA-256 (`src/bytes.ts`): `@noble/hashes` in JavaScript against
 * `node:crypto`'s native `createHash` and one-shot `hash`, at the sizes the submission path
 * hashes: a Merkle node (65 bytes: 0x01 and two hashes, RFC 6962 §2.1), a receipt leaf (about
 * 171 bytes), 300 and 512 bytes, the 600-byte body and canonical A2A message of the bench's
 * `SendMessage`, and 4 KiB. It reports process CPU (user + system, all threads, so garbage
 * collection counts) per hash, the median of 9 interleaved rounds, under the server's V8 flags
 * when run as below. The crossover decides `NATIVE_SHA256_MIN_BYTES`. Then the two leaves every
 * durable submission hashes (its receipt's and, in the tree-head signer, its log leaf), hashed
 * from their text as `src/signing/` does against encoding the text to a new array first.
 *
 * Run with `deno run -A --v8-flags=--max-semi-space-size=16 bench/sha256_bench.ts`.
 *
 * @module
 */
import { createHash, hash } from "node:crypto";
import process from "node:process";
import { sha256 as nobleSha256 } from "@noble/hashes/sha2.js";
import {
  canonicalReceiptBytes,
  leafHash,
  receiptLeafHash,
  sha256,
  submissionLeafData,
  submissionLeafHash,
} from "../src/signing/mod.ts";

const candidates: Record<string, (input: Uint8Array) => unknown> = {
  "noble": (input) => nobleSha256(input),
  "node:crypto createHash": (input) => new Uint8Array(createHash("sha256").update(input).digest()),
  "node:crypto hash": (input) => new Uint8Array(hash("sha256", input, "buffer")),
  "bytes.ts sha256": (input) => sha256(input),
};

const ROUNDS = 9;
const CALLS = 20_000;
const median = (values: number[]) => values.sort((a, b) => a - b)[values.length >> 1];

/** CPU µs per call of each candidate, the median of interleaved rounds. */
function measure(runs: readonly (() => unknown)[]): number[] {
  const samples: number[][] = runs.map(() => []);
  for (let round = 0; round < ROUNDS; round++) {
    runs.forEach((run, index) => {
      const before = process.cpuUsage();
      for (let call = 0; call < CALLS; call++) run();
      const spent = process.cpuUsage(before);
      samples[index].push((spent.user + spent.system) / CALLS);
    });
  }
  return samples.map(median);
}

console.log(`size   ${Object.keys(candidates).join(" | ")}   (CPU µs per hash)`);
for (const size of [65, 171, 300, 512, 600, 4096]) {
  const input = crypto.getRandomValues(new Uint8Array(size));
  const spent = measure(Object.values(candidates).map((run) => () => run(input)));
  console.log(`${String(size).padStart(4)}   ${spent.map((us) => us.toFixed(2)).join(" | ")}`);
}

const row = {
  seq: 123_456,
  id: "AZR1t2x1q4Xv3T0x0kq8T5bJm3V6eA",
  receivedAt: "2026-12-03T08:00:00.000Z",
  digest: "sha256:" + "a".repeat(64),
};
const receipt = { ...row, size: 612, kind: "structured" };
console.log(
  "\nleaf                 from its text | from a new array of its UTF-8   (CPU µs per leaf)",
);
for (
  const [name, fromText, fromBytes] of [
    ["submission (log)", () => submissionLeafHash(row), () => leafHash(submissionLeafData(row))],
    ["receipt", () => receiptLeafHash(receipt), () => leafHash(canonicalReceiptBytes(receipt))],
  ] as const
) {
  const [text, bytes] = measure([fromText, fromBytes]);
  console.log(`${name.padEnd(20)} ${text.toFixed(2)} | ${bytes.toFixed(2)}`);
}
