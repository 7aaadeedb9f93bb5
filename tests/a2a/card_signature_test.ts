/**
 * The signed agent card (A2A 1.0.1 §8.4), verified as a client would, with independent
 * implementations: npm `canonicalize` (RFC 8785) rebuilds the payload from the served card and
 * npm `jose` verifies the flattened JWS with the key from the served JWKS (RFC 7517). Nothing
 * of the Beacon's own signing or canonicalisation code takes part in verifying.
 */
import canonicalize from "canonicalize";
import * as jose from "jose";
import { assert, assertEquals, assertRejects, assertStrictEquals } from "../support/assert.ts";
import { startA2AServer } from "../support/a2a.ts";

const ORIGIN = "https://beacon.example.com";
const encoder = new TextEncoder();

// deno-lint-ignore no-explicit-any
type Json = any;

/** §8.4.1: no `signatures`; the served card has no empty optional arrays or objects to drop. */
function payloadOf(card: Json): string {
  const { signatures: _signatures, ...unsigned } = card;
  return canonicalize(unsigned)!;
}

/** A key as jose returns it (its CryptoKey type comes from node:crypto's declarations). */
type JoseKey = Parameters<typeof jose.flattenedVerify>[1];

async function verify(card: Json, key: JoseKey) {
  const [signature] = card.signatures;
  return await jose.flattenedVerify(
    {
      protected: signature.protected,
      payload: jose.base64url.encode(encoder.encode(payloadOf(card))),
      signature: signature.signature,
    },
    key,
    { algorithms: ["EdDSA"] },
  );
}

Deno.test("the served card verifies with jose and the published JWKS; a tampered one fails", async (t) => {
  const a2a = await startA2AServer({ BEACON_PUBLIC_URL: ORIGIN });
  try {
    const cardResponse = await fetch(a2a.url + "/.well-known/agent-card.json");
    const card = await cardResponse.json();
    const discovery = await (await fetch(a2a.url + "/.well-known/autonomous-agent")).json();
    assert(Array.isArray(card.signatures) && card.signatures.length === 1);
    const header = jose.decodeProtectedHeader(card.signatures[0]);

    await t.step("protected header: alg EdDSA, typ JOSE, kid the fingerprint, jku", () => {
      assertEquals(Object.keys(header).sort(), ["alg", "jku", "kid", "typ"]);
      assertStrictEquals(header.alg, "EdDSA");
      assertStrictEquals(header.typ, "JOSE");
      assertStrictEquals(header.kid, discovery.receiptSigning.fingerprint);
      assertStrictEquals(header.jku, `${ORIGIN}/.well-known/jwks.json`);
      assertStrictEquals(discovery.receiptSigning.jwks, header.jku);
      assertEquals(Object.keys(card.signatures[0]).sort(), ["protected", "signature"]);
    });

    // The JWKS as a client would fetch it from `jku` (here: the same path on the test server).
    const jwksResponse = await fetch(a2a.url + new URL(header.jku!).pathname);
    const jwks = await jwksResponse.json();

    await t.step("the JWKS: one OKP Ed25519 key, kid, use sig, alg EdDSA, cacheable, CORS", () => {
      assertStrictEquals(jwksResponse.status, 200);
      assertStrictEquals(jwksResponse.headers.get("content-type"), "application/jwk-set+json");
      assertStrictEquals(jwksResponse.headers.get("access-control-allow-origin"), "*");
      assert(/public, max-age=\d+/.test(jwksResponse.headers.get("cache-control") ?? ""));
      assert(jwksResponse.headers.get("etag") !== null);
      assertEquals(jwks, {
        keys: [{
          kty: "OKP",
          crv: "Ed25519",
          x: discovery.receiptSigning.publicKey,
          kid: header.kid,
          use: "sig",
          alg: "EdDSA",
        }],
      });
    });

    await t.step("jose verifies the flattened JWS over the JCS payload", async () => {
      const set = jose.createLocalJWKSet(jwks);
      const key = await set(header, { payload: "", signature: "" } as never);
      const verified = await verify(card, key as unknown as JoseKey);
      assertStrictEquals(new TextDecoder().decode(verified.payload), payloadOf(card));
    });

    await t.step("a tampered card, or another key, fails", async () => {
      const key = await jose.importJWK(jwks.keys[0], "EdDSA") as unknown as JoseKey;
      const tampered = structuredClone(card);
      tampered.description += " Now with replies.";
      await assertRejects(() => verify(tampered, key), jose.errors.JWSSignatureVerificationFailed);
      const widened = structuredClone(card);
      widened.capabilities.pushNotifications = true;
      await assertRejects(() => verify(widened, key), jose.errors.JWSSignatureVerificationFailed);
      const other = await jose.generateKeyPair("EdDSA", { crv: "Ed25519" });
      await assertRejects(
        () => verify(card, other.publicKey as unknown as JoseKey),
        jose.errors.JWSSignatureVerificationFailed,
      );
    });

    await t.step("signed once per origin: the bytes and the ETag do not change", async () => {
      const again = await fetch(a2a.url + "/.well-known/agent-card.json");
      assertStrictEquals(again.headers.get("etag"), cardResponse.headers.get("etag"));
      assertEquals(await again.json(), card);
    });
  } finally {
    await a2a.close();
  }
});

Deno.test("unsignedCard() applies §8.4.1: empty optional containers go, REQUIRED ones stay", async () => {
  const { unsignedCard } = await import("../../src/a2a/card_signature.ts");
  assertEquals(
    unsignedCard({
      name: "Example Agent",
      description: "",
      capabilities: { streaming: false, pushNotifications: false, extensions: [] },
      skills: [{ id: "s", tags: [], examples: [], inputModes: [] }],
      securitySchemes: {},
      signatures: [{ protected: "x", signature: "y" }],
    }),
    {
      name: "Example Agent",
      description: "",
      capabilities: { streaming: false, pushNotifications: false },
      skills: [{ id: "s", tags: [] }],
    },
  );
});
