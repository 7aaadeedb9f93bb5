/** The project's one base64url codec (RFC 4648 §5, unpadded, canonical only). */
import { assert, assertEquals, assertStrictEquals } from "../support/assert.ts";
import { base64url, fromBase64url } from "../../src/intake/encoding.ts";

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
