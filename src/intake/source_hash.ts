/**
 * Salted hashes of source keys: what the database keeps instead of addresses (the submission's
 * `source_hash`, the shared rate limiter's keys). 128 bits of HMAC-SHA-256 (RFC 2104) under the
 * Beacon's source salt, hex. Without the salt a stored hash cannot be tested against guessed
 * addresses; the IPv4 space is small enough to try whole.
 *
 * @module
 */
import { hmac } from "@noble/hashes/hmac.js";
import { sha256 } from "@noble/hashes/sha2.js";
import { hex } from "../bytes.ts";

/** Hashes source keys under one salt; recent sources are remembered (a bounded map). */
export class SourceHasher {
  readonly #salt: Uint8Array;
  readonly #known = new Map<string, string>();

  /** `salt`: the source salt (at least 16 bytes; `BEACON_SOURCE_SALT` or the stored one). */
  constructor(salt: Uint8Array) {
    this.#salt = salt;
  }

  /**
   * The hash of `source`, 32 hex digits.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { SourceHasher } from "./source_hash.ts";
   *
   * const hasher = new SourceHasher(new Uint8Array(32));
   * assert.equal(hasher.hash("ip:192.0.2.1").length, 32);
   * assert.equal(hasher.hash("ip:192.0.2.1"), hasher.hash("ip:192.0.2.1"));
   * assert.notEqual(hasher.hash("ip:192.0.2.1"), hasher.hash("ip:192.0.2.2"));
   * ```
   */
  hash(source: string): string {
    const known = this.#known.get(source);
    if (known !== undefined) return known;
    const hash = hex(hmac(sha256, this.#salt, new TextEncoder().encode(source)).subarray(0, 16));
    if (this.#known.size >= 10_000) this.#known.clear();
    this.#known.set(source, hash);
    return hash;
  }
}
