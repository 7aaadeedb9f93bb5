/** Signed checkpoints (src/signing/checkpoint.ts). */
import {
  canonicalCheckpointBytes,
  CHECKPOINT_CONTEXT,
  signCheckpoint,
  verifyCheckpoint,
} from "../../src/signing/checkpoint.ts";
import { signingKeyFromSeed } from "../../src/signing/key.ts";
import { assert, assertStrictEquals, assertThrows } from "../support/assert.ts";

const EMPTY_ROOT = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
const HEAD = { treeSize: 0, rootHash: EMPTY_ROOT, createdAt: "2025-06-01T12:00:03.123Z" };

Deno.test("canonicalCheckpointBytes() is the prefix line and the JCS of the three members", () => {
  assertStrictEquals(CHECKPOINT_CONTEXT, "beacon/0.1 checkpoint\n");
  assertStrictEquals(
    new TextDecoder().decode(canonicalCheckpointBytes(HEAD)),
    'beacon/0.1 checkpoint\n{"createdAt":"2025-06-01T12:00:03.123Z","rootHash":"' + EMPTY_ROOT +
      '","treeSize":0}',
  );
  assertThrows(() => canonicalCheckpointBytes({ ...HEAD, treeSize: -1 }), /treeSize/);
  assertThrows(
    () => canonicalCheckpointBytes({ ...HEAD, rootHash: EMPTY_ROOT.toUpperCase() }),
    /rootHash/,
  );
  assertThrows(
    () => canonicalCheckpointBytes({ ...HEAD, rootHash: "sha256:" + EMPTY_ROOT }),
    /rootHash/,
  );
});

Deno.test("signCheckpoint() and verifyCheckpoint() round-trip; any change breaks it", async () => {
  const key = await signingKeyFromSeed(crypto.getRandomValues(new Uint8Array(32)));
  const signature = await signCheckpoint(key, HEAD);
  assert(await verifyCheckpoint(key.publicKey, HEAD, signature));
  assertStrictEquals(
    await verifyCheckpoint(key.publicKey, { ...HEAD, treeSize: 1 }, signature),
    false,
  );
  assertStrictEquals(
    await verifyCheckpoint(key.publicKey, { ...HEAD, rootHash: "0".repeat(64) }, signature),
    false,
  );
  assertStrictEquals(
    await verifyCheckpoint(
      key.publicKey,
      { ...HEAD, createdAt: "2025-06-01T12:00:03.124Z" },
      signature,
    ),
    false,
  );
  assertStrictEquals(
    await verifyCheckpoint(key.publicKey, { ...HEAD, treeSize: 0.5 }, signature),
    false,
  );
});
