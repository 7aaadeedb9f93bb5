import { assertEquals } from "../support/assert.ts";
import { hex, sha256, sha256Digest } from "../../src/intake/encoding.ts";

Deno.test("sha256() matches the FIPS 180-4 examples", () => {
  const text = (s: string) => new TextEncoder().encode(s);
  assertEquals(
    hex(sha256(text("abc"))),
    "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
  );
  assertEquals(
    hex(sha256(text("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"))),
    "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1",
  );
  assertEquals(
    hex(sha256(new Uint8Array(0))),
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
  );
});

Deno.test("sha256() agrees with crypto.subtle.digest at every padding boundary and beyond", async () => {
  const lengths = [...Array.from({ length: 200 }, (_, i) => i), 1000, 4095, 65_536, 65_537];
  for (const length of lengths) {
    const bytes = crypto.getRandomValues(new Uint8Array(Math.min(length, 65_536)));
    const big = length > 65_536 ? new Uint8Array(length) : bytes;
    const expected = new Uint8Array(await crypto.subtle.digest("SHA-256", big));
    assertEquals(sha256(big), expected, `length ${length}`);
  }
});

Deno.test("sha256() hashes a view of a larger buffer without reading outside it", async () => {
  const buffer = crypto.getRandomValues(new Uint8Array(300));
  const view = buffer.subarray(17, 230);
  const expected = new Uint8Array(await crypto.subtle.digest("SHA-256", view.slice()));
  assertEquals(sha256(view), expected);
});

Deno.test("sha256Digest() formats sha256:<hex>", () => {
  assertEquals(
    sha256Digest(new TextEncoder().encode("abc")),
    "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
  );
});
