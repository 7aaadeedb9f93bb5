/**
 * Signed receipts, checked the way a submitter would check them offline: with nothing but the
 * public key from the discovery document and WebCrypto. The canonical bytes are rebuilt here from
 * the specification in docs/protocol-0.1.md, not with the Beacon's own code.
 */
import { assert, assertEquals } from "../support/assert.ts";
import { serveBeacon } from "../support/serve.ts";

function fromBase64url(text: string): Uint8Array<ArrayBuffer> {
  const binary = atob(text.replaceAll("-", "+").replaceAll("_", "/"));
  return Uint8Array.from(binary, (c) => c.charCodeAt(0));
}

/** "beacon/0.1 receipt\n" + JCS of {digest, id, kind, receivedAt, size} (sorted keys). */
function canonical(receipt: Record<string, unknown>): Uint8Array<ArrayBuffer> {
  const { digest, id, kind, receivedAt, size } = receipt;
  return new TextEncoder().encode(
    "beacon/0.1 receipt\n" + JSON.stringify({ digest, id, kind, receivedAt, size }),
  );
}

async function verify(publicKey: string, receipt: Record<string, unknown>): Promise<boolean> {
  const key = await crypto.subtle.importKey("raw", fromBase64url(publicKey), "Ed25519", false, [
    "verify",
  ]);
  return await crypto.subtle.verify(
    "Ed25519",
    key,
    fromBase64url(String(receipt.signature)),
    canonical(receipt),
  );
}

Deno.test("native and A2A receipts verify offline with the published key", async () => {
  const served = await serveBeacon({});
  try {
    const discovery = await (await fetch(served.url + "/.well-known/autonomous-agent")).json();
    assertEquals(discovery.receiptSigning.algorithm, "Ed25519");
    const publicKey = String(discovery.receiptSigning.publicKey);
    assertEquals(publicKey.length, 43);

    const native = await (await fetch(served.url + "/beacon/0.1/submissions", {
      method: "POST",
      headers: { "content-type": "text/plain; charset=utf-8" },
      body: "Please keep this receipt.",
    })).json();
    assert(await verify(publicKey, native.receipt), "native receipt verifies");

    const a2a = await (await fetch(served.url + "/a2a/v1", {
      method: "POST",
      headers: { "content-type": "application/json", "a2a-version": "1.0" },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "SendMessage",
        params: { message: { messageId: "sig-1", role: "ROLE_USER", parts: [{ text: "hi" }] } },
      }),
    })).json();
    const receipt = a2a.result.task.metadata.receipt;
    assert(await verify(publicKey, receipt), "A2A receipt verifies");

    // Any change to a signed field breaks the signature.
    assertEquals(await verify(publicKey, { ...receipt, size: receipt.size + 1 }), false);
    assertEquals(await verify(publicKey, { ...receipt, digest: native.receipt.digest }), false);
  } finally {
    await served.close();
  }
});

Deno.test("a configured signing key is used as given", async () => {
  const seed = "nWGxne_9WmC6hEr0kuwsxERJxWl7MmkZcDusAxyuf2A"; // RFC 8032 §7.1 TEST 1 secret key
  const served = await serveBeacon({ signingKey: seed });
  try {
    const discovery = await (await fetch(served.url + "/.well-known/autonomous-agent")).json();
    // RFC 8032 §7.1 TEST 1 public key, base64url.
    assertEquals(discovery.receiptSigning.publicKey, "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo");
  } finally {
    await served.close();
  }
});

Deno.test("a generated signing key is stored once and reused after a restart", async () => {
  const { createBeacon } = await import("../../mod.ts");
  const directory = await Deno.makeTempDir({ prefix: "beacon-key-" });
  const publicKey = async () => {
    const beacon = createBeacon({ database: { url: `file:${directory}/beacon.db` } });
    try {
      const response = await beacon.fetch(
        new Request("http://127.0.0.1/.well-known/autonomous-agent"),
      );
      return (await response.json()).receiptSigning.publicKey;
    } finally {
      await beacon.close();
    }
  };
  try {
    const first = await publicKey();
    assertEquals(await publicKey(), first);
  } finally {
    await Deno.remove(directory, { recursive: true });
  }
});
