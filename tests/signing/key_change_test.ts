/** A key change is refused at start (src/signing/key_change.ts). */
import { SubmissionStore } from "../../src/store/store.ts";
import { LogRows } from "../../src/store/log_rows.ts";
import { signingKeyFromSeed } from "../../src/signing/key.ts";
import {
  refuseKeyChange,
  refuseNewKeyForSignedStore,
  SigningKeyChanged,
  SigningKeyNotFound,
} from "../../src/signing/key_change.ts";
import { loadSigningKey } from "../../src/signing/key.ts";
import { signCheckpoint } from "../../src/signing/checkpoint.ts";
import type { SigningKey } from "../../src/signing/key.ts";
import { assertRejects, assertStrictEquals } from "../support/assert.ts";

const seed = (byte: number) => new Uint8Array(32).fill(byte);

async function appendHead(store: SubmissionStore, key: SigningKey, signature?: string) {
  const head = {
    treeSize: 0,
    rootHash: "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    createdAt: new Date(0).toISOString(),
  };
  await store.database.client.execute({
    sql: "INSERT INTO checkpoints (tree_size, root_hash, created_at, signature, public_key) " +
      "VALUES (?, ?, ?, ?, ?)",
    args: [
      head.treeSize,
      head.rootHash,
      head.createdAt,
      signature ?? await signCheckpoint(key, head),
      key.publicKey,
    ],
  });
}

Deno.test("refuseKeyChange() passes a new store and the key of the latest head", async () => {
  const store = await SubmissionStore.open({ url: ":memory:" });
  try {
    const a = await signingKeyFromSeed(seed(1));
    await refuseKeyChange(new LogRows(store.database.statements), a);
    await appendHead(store, a);
    await refuseKeyChange(new LogRows(store.database.statements), a);
  } finally {
    await store.close();
  }
});

Deno.test("refuseKeyChange() names the previous key's fingerprint and the setting, also going back", async () => {
  const store = await SubmissionStore.open({ url: ":memory:" });
  try {
    const [a, b] = [await signingKeyFromSeed(seed(1)), await signingKeyFromSeed(seed(2))];
    await appendHead(store, a);
    const refused = (previous: SigningKey) => (error: Error) =>
      error instanceof SigningKeyChanged && error.previousFingerprint === previous.fingerprint &&
      error.message.includes(previous.fingerprint) &&
      error.message.includes("BEACON_PREVIOUS_SIGNING_KEYS") && !error.message.includes("\n");
    await assertRejects(
      () => refuseKeyChange(new LogRows(store.database.statements), b),
      refused(a),
    );
    // Heads under B after A's: going back to A is a change too.
    await appendHead(store, b);
    await assertRejects(
      () => refuseKeyChange(new LogRows(store.database.statements), a),
      refused(b),
    );
    // A head whose signature does not verify under the key it names is a writer's, not a key's.
    await appendHead(store, a, "A".repeat(86));
    await assertRejects(
      () => refuseKeyChange(new LogRows(store.database.statements), a),
      refused(b),
    );
    await refuseKeyChange(new LogRows(store.database.statements), b);
    assertStrictEquals(a.fingerprint === b.fingerprint, false);
  } finally {
    await store.close();
  }
});

Deno.test("no new key is made for a store whose heads a key signed", async () => {
  const store = await SubmissionStore.open({ url: ":memory:" });
  try {
    await refuseNewKeyForSignedStore(new LogRows(store.database.statements));
    const a = await signingKeyFromSeed(seed(1));
    await appendHead(store, a);
    const refused = (error: Error) =>
      error instanceof SigningKeyNotFound && error.message.includes(a.fingerprint);
    await assertRejects(
      () => refuseNewKeyForSignedStore(new LogRows(store.database.statements)),
      refused,
    );
    // Through loadSigningKey: the refusal comes before anything is kept.
    await assertRejects(
      () =>
        loadSigningKey(
          store.database,
          Date.now,
          undefined,
          "database",
          () => refuseNewKeyForSignedStore(new LogRows(store.database.statements)),
        ),
      refused,
    );
    assertStrictEquals(await store.database.storedSecret("signing-key"), undefined);
  } finally {
    await store.close();
  }
});
