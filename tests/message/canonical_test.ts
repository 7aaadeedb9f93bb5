import { assert, assertEquals, assertStrictEquals } from "../support/assert.ts";
import { canonicalMessageBytes, SIGNING_CONTEXT } from "../../src/message/canonical.ts";
import type { BeaconMessage } from "../../src/message/schema.ts";

const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes);

function signedMessage(): BeaconMessage {
  return {
    beacon: "0.1",
    subject: "Hi",
    body: "Hello",
    intent: "other",
    sender: { name: "A" },
    identity: {
      algorithm: "Ed25519",
      publicKey: "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo",
      signature: "A".repeat(86),
    },
  };
}

Deno.test("canonicalMessageBytes: is the context line then JCS without identity.signature", () => {
  const bytes = canonicalMessageBytes(signedMessage());
  assertStrictEquals(
    text(bytes),
    "beacon/0.1 message\n" +
      '{"beacon":"0.1","body":"Hello","identity":{"algorithm":"Ed25519",' +
      '"publicKey":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"},"intent":"other",' +
      '"sender":{"name":"A"},"subject":"Hi"}',
  );
  assertStrictEquals(SIGNING_CONTEXT, "beacon/0.1 message\n");
});

Deno.test("canonicalMessageBytes: matches the example in the module documentation", () => {
  const bytes = canonicalMessageBytes({
    beacon: "0.1",
    subject: "Hi",
    body: "Hello",
    intent: "other",
    sender: { name: "A" },
  });
  assertStrictEquals(
    text(bytes),
    'beacon/0.1 message\n{"beacon":"0.1","body":"Hello","intent":"other","sender":{"name":"A"},"subject":"Hi"}',
  );
});

Deno.test("canonicalMessageBytes: does not depend on member order or on the signature", () => {
  const message = signedMessage();
  const reordered: BeaconMessage = {
    identity: {
      signature: "B".repeat(86),
      publicKey: message.identity!.publicKey,
      algorithm: "Ed25519",
    },
    sender: { name: "A" },
    intent: "other",
    body: "Hello",
    subject: "Hi",
    beacon: "0.1",
  };
  assertEquals(canonicalMessageBytes(reordered), canonicalMessageBytes(message));
});

Deno.test("canonicalMessageBytes: binds the public key and every optional field", () => {
  const base = canonicalMessageBytes(signedMessage());
  const otherKey = signedMessage();
  otherKey.identity!.publicKey = "A".repeat(43);
  assert(text(canonicalMessageBytes(otherKey)) !== text(base));
  const withLanguage = { ...signedMessage(), language: "en" };
  assert(text(canonicalMessageBytes(withLanguage)) !== text(base));
});

Deno.test("canonicalMessageBytes: encodes as UTF-8 and leaves the input untouched", () => {
  const message = { ...signedMessage(), body: "é\u2028😀" };
  const bytes = canonicalMessageBytes(message);
  const expected = new TextEncoder().encode('"body":"é\u2028😀"');
  const hex = (b: Uint8Array) => Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
  assert(hex(bytes).includes(hex(expected)));
  assert(hex(expected).includes("c3a9e280a8f09f9880"));
  assertStrictEquals(message.identity?.signature, "A".repeat(86));
});
