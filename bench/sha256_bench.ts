/**
 * Micro-benchmark for the one SHA-256 (`src/bytes.ts`): `@noble/hashes` in JavaScript against
 * `node:crypto`'s native `createHash`, at the sizes the submission path hashes: a Merkle node
 * (65 bytes: 0x01 and two hashes, RFC 6962 §2.1), a receipt leaf (about 150 bytes), the
 * 600-byte body and canonical A2A message of the bench's `SendMessage`, and a 4 KiB body. The
 * crossover decides `NATIVE_SHA256_MIN_BYTES`. Run with `deno bench bench/sha256_bench.ts`.
 *
 * @module
 */
import { createHash, hash } from "node:crypto";
import { sha256 as nobleSha256 } from "@noble/hashes/sha2.js";
import { sha256 } from "../src/bytes.ts";

for (const size of [65, 96, 128, 150, 600, 4096]) {
  const input = crypto.getRandomValues(new Uint8Array(size));
  const group = `${size} bytes`;
  Deno.bench(`noble ${size}`, { group, baseline: true }, () => {
    nobleSha256(input);
  });
  Deno.bench(`node:crypto ${size}`, { group }, () => {
    createHash("sha256").update(input).digest();
  });
  Deno.bench(`node:crypto hash() ${size}`, { group }, () => {
    hash("sha256", input, "buffer");
  });
  Deno.bench(`bytes.ts sha256 ${size}`, { group }, () => {
    sha256(input);
  });
}
