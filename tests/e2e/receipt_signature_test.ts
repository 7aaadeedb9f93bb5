/**
 * Signed receipts, checked the way a submitter would check them offline: with nothing but the
 * public key from the discovery document and WebCrypto. The canonical bytes are rebuilt here from
 * the specification in docs/protocol-0.1.md, not with the Beacon's own code.
 */
import { assert, assertEquals } from "../support/assert.ts";
import { serveBeacon } from "../support/in_process.ts";
import { sendMessageRequest } from "../support/requests.ts";

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

/** Whether `receipt.signature` is the published key's Ed25519 signature of `signed`. */
async function signedBy(
  publicKey: string,
  receipt: Record<string, unknown>,
  signed: Uint8Array<ArrayBuffer>,
): Promise<boolean> {
  const key = await crypto.subtle.importKey("raw", fromBase64url(publicKey), "Ed25519", false, [
    "verify",
  ]);
  return await crypto.subtle.verify(
    "Ed25519",
    key,
    fromBase64url(String(receipt.signature)),
    signed,
  );
}

function verify(publicKey: string, receipt: Record<string, unknown>): Promise<boolean> {
  return signedBy(publicKey, receipt, canonical(receipt));
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

    const a2a = await (await fetch(sendMessageRequest(served.url, { messageId: "sig-1" }))).json();
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
  const { createBeacon } = await import("../../src/beacon.ts");
  const directory = await Deno.makeTempDir({ prefix: "beacon-key-" });
  const publicKey = async () => {
    const beacon = createBeacon({ database: { url: `file:${directory}/beacon.db` } });
    try {
      const response = await beacon.fetch(
        new Request("http://127.0.0.1/.well-known/autonomous-agent"),
        { remoteAddress: null },
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

/** SHA-256 with WebCrypto alone. */
async function digest(...parts: Uint8Array[]): Promise<Uint8Array<ArrayBuffer>> {
  const bytes = new Uint8Array(parts.reduce((n, part) => n + part.length, 0));
  let at = 0;
  for (const part of parts) {
    bytes.set(part, at);
    at += part.length;
  }
  return new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
}

/**
 * A batch receipt, verified from docs/protocol-0.1.md with WebCrypto alone: the leaf is
 * SHA-256(0x00 || single-form bytes), the path folds into the root (RFC 9162 §2.1.3.2), and the
 * signature covers "beacon/0.1 receipt batch\n" + JCS({root, size}).
 */
async function verifyBatch(publicKey: string, receipt: Record<string, unknown>): Promise<boolean> {
  const batch = receipt.batch as { size: number; index: number; path: string[] };
  let hash = await digest(new Uint8Array([0]), canonical(receipt));
  let fn = batch.index;
  let sn = batch.size - 1;
  for (const sibling of batch.path.map(fromBase64url)) {
    if (fn % 2 === 1 || fn === sn) {
      hash = await digest(new Uint8Array([1]), sibling, hash);
      while (fn % 2 === 0 && fn !== 0) {
        fn >>= 1;
        sn >>= 1;
      }
    } else {
      hash = await digest(new Uint8Array([1]), hash, sibling);
    }
    fn >>= 1;
    sn >>= 1;
  }
  if (sn !== 0) return false;
  const root = btoa(String.fromCharCode(...hash)).replaceAll("+", "-").replaceAll("/", "_")
    .replace(/=+$/, "");
  const signed = new TextEncoder().encode(
    "beacon/0.1 receipt batch\n" + JSON.stringify({ root, size: batch.size }),
  );
  return await signedBy(publicKey, receipt, signed);
}

Deno.test("receipts committed together share one batch signature, and each verifies offline with its proof", async () => {
  const served = await serveBeacon({});
  try {
    const discovery = await (await fetch(served.url + "/.well-known/autonomous-agent")).json();
    const publicKey = String(discovery.receiptSigning.publicKey);
    const receipts: Record<string, unknown>[] = [];
    // Rounds of concurrent submissions until some commits carried several rows.
    for (let round = 0; round < 20 && !receipts.some((r) => r.batch !== undefined); round++) {
      receipts.push(
        ...await Promise.all(Array.from({ length: 40 }, async (_, i) => {
          const response = await fetch(served.url + "/beacon/0.1/submissions", {
            method: "POST",
            headers: { "content-type": "text/plain; charset=utf-8" },
            body: `round ${round} message ${i}`,
          });
          assertEquals(response.status, 202);
          return (await response.json()).receipt;
        })),
      );
    }
    const batched = receipts.filter((receipt) => receipt.batch !== undefined);
    assert(batched.length > 0, "no receipt was signed in a batch");
    for (const receipt of receipts) {
      const valid = receipt.batch === undefined
        ? await verify(publicKey, receipt)
        : await verifyBatch(publicKey, receipt);
      assert(valid, "every receipt verifies");
    }
    const sample = batched[0];
    assertEquals(await verifyBatch(publicKey, { ...sample, size: Number(sample.size) + 1 }), false);
    const batch = sample.batch as { size: number; index: number; path: string[] };
    assertEquals(
      await verifyBatch(publicKey, { ...sample, batch: { ...batch, index: batch.index ^ 1 } }),
      false,
    );
  } finally {
    await served.close();
  }
});
