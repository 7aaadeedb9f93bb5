import { assertEquals } from "../support/assert.ts";
import { SourceHasher } from "../../src/intake/source_hash.ts";

Deno.test("SourceHasher.hash() is the first 128 bits of WebCrypto's HMAC-SHA-256, so stored hashes keep their meaning", async () => {
  const salt = crypto.getRandomValues(new Uint8Array(32));
  const key = await crypto.subtle.importKey("raw", salt, { name: "HMAC", hash: "SHA-256" }, false, [
    "sign",
  ]);
  const hasher = new SourceHasher(salt);
  for (const source of ["ip:192.0.2.1", "ip6:2001:db8::/64", "unknown", "é"]) {
    const mac = new Uint8Array(
      await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(source)),
    );
    const expected = Array.from(mac.subarray(0, 16), (b) => b.toString(16).padStart(2, "0")).join(
      "",
    );
    assertEquals(hasher.hash(source), expected);
  }
});
