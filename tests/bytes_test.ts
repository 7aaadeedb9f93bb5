/** The project's byte encodings (RFC 4648 base64url, hex) and its one SHA-256. */
import { assert, assertEquals, assertStrictEquals } from "./support/assert.ts";
import {
  base64,
  base64url,
  fromBase64,
  fromBase64url,
  fromHex,
  hex,
  NATIVE_SHA256_MIN_BYTES,
  sha256,
  sha256Digest,
} from "../src/bytes.ts";

Deno.test("fromBase64url() decodes canonical unpadded base64url", () => {
  assertEquals(fromBase64url(""), new Uint8Array([]));
  assertEquals(fromBase64url("AQ"), new Uint8Array([1]));
  assertEquals(fromBase64url("AQI"), new Uint8Array([1, 2]));
  assertEquals(fromBase64url("AQID"), new Uint8Array([1, 2, 3]));
  assertEquals(fromBase64url("-_8"), new Uint8Array([251, 255]));
});

Deno.test("fromBase64url() refuses padding, foreign characters and non-zero spare bits", () => {
  for (const text of ["AQ==", "AQI=", "A", "AQIDB", "+_8", "/_8", "AQ I", "AQ\n", "AÉ", "AR"]) {
    assertStrictEquals(fromBase64url(text), undefined, text);
  }
});

Deno.test("base64url() round-trips every length through fromBase64url()", () => {
  const bytes = crypto.getRandomValues(new Uint8Array(70));
  for (let length = 0; length <= bytes.length; length++) {
    const slice = bytes.slice(0, length);
    const text = base64url(slice);
    assert(/^[A-Za-z0-9_-]*$/.test(text));
    assertEquals(fromBase64url(text), slice);
  }
});

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
  // Both implementations: the lengths cross the one where node:crypto takes over, and the result
  // is a plain Uint8Array either way (a Buffer would fail the strict comparison).
  const threshold = NATIVE_SHA256_MIN_BYTES;
  const lengths = [
    ...Array.from({ length: 200 }, (_, i) => i),
    ...Array.from({ length: 130 }, (_, i) => threshold - 65 + i),
    1000,
    4095,
    65_536,
    65_537,
  ];
  assert(lengths.includes(threshold - 1) && lengths.includes(threshold));
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

Deno.test("fromHex() decodes even-length hex of either case and refuses anything else", () => {
  assertEquals(fromHex("00ffAb"), new Uint8Array([0, 255, 171]));
  assertEquals(fromHex(""), new Uint8Array([]));
  for (const text of ["0", "0g", " 00", "0x00"]) assertEquals(fromHex(text), undefined, text);
});

Deno.test("base64() is standard padded base64, as btoa writes it", () => {
  assertEquals(base64(new Uint8Array([0xff, 0xfe])), "//4=");
  const big = new Uint8Array(100_000).map((_, i) => i * 7);
  assertEquals(atob(base64(big)).length, big.length);
});

Deno.test("fromBase64() reads what base64() writes and refuses foreign characters", () => {
  for (let length = 0; length < 8; length++) {
    const bytes = new Uint8Array(length).map((_, i) => 0xf0 + i);
    assertEquals(fromBase64(base64(bytes)), bytes);
  }
  for (const bad of ["//4", "-_4=", " //4=", "//4=\n", "/=/4", "//4=="]) {
    assertStrictEquals(fromBase64(bad), undefined, bad);
  }
});
