/**
 * A store signed before the log had tiles (heads without a note or tiles, as schema version 11
 * left them): the first start tiles it once, in heads of at most `MAX_HEAD_LEAVES`, checks every
 * old head's root on the way, and from then on continues from the tiles. An old head that the
 * rows no longer give stops the tiling (`TreeHeadRefused`), never a head over it.
 */
import { createClient } from "@libsql/client";
import { createBeacon } from "../../src/beacon.ts";
import { encodeSeed, hex, signingKeyFromSeed } from "../../src/signing/mod.ts";
import { signCheckpoint } from "../../src/signing/checkpoint.ts";
import { submissionLeafHash, treeRoot } from "../../src/signing/merkle.ts";
import { assertEquals, assertStrictEquals } from "../support/assert.ts";
import { tempDatabase } from "../../review/tests/support.ts";

async function rows(url: string, sql: string, args: (string | number)[] = []) {
  const client = createClient({ url, intMode: "number" });
  try {
    return (await client.execute({ sql, args })).rows;
  } finally {
    client.close();
  }
}

/**
 * A Beacon on `url` under `seed` whose heads come only when asked (`signLog`), every reported
 * error's name pushed to `errors`.
 */
function signingBeacon(url: string, seed: Uint8Array, errors: string[]) {
  return createBeacon({
    database: { url },
    rateLimit: "off",
    signingKey: encodeSeed(seed),
    checkpointIntervalMs: 3_600_000,
    onError: (error) => errors.push((error as Error).name),
  });
}

/** Appends a head as a version-11 server did: the JSON head's signature, no note, no tiles. */
async function appendUntiledHead(url: string, seed: Uint8Array, size: number, root?: string) {
  const key = await signingKeyFromSeed(seed);
  const leaves =
    (await rows(url, "SELECT seq, id, received_at, digest FROM submissions ORDER BY seq"))
      .slice(0, size).map((row) =>
        submissionLeafHash({
          seq: Number(row.seq),
          id: String(row.id),
          receivedAt: String(row.received_at),
          digest: String(row.digest),
        })
      );
  const fields = {
    treeSize: size,
    rootHash: root ?? hex(treeRoot(leaves)),
    createdAt: new Date().toISOString(),
  };
  await rows(
    url,
    "INSERT INTO checkpoints (tree_size, root_hash, created_at, signature, public_key) " +
      "VALUES (?, ?, ?, ?, ?)",
    [
      fields.treeSize,
      fields.rootHash,
      fields.createdAt,
      await signCheckpoint(key, fields),
      key.publicKey,
    ],
  );
}

async function submitAll(beaconUrl: string, count: number, seedText: string) {
  const beacon = createBeacon({
    database: { url: beaconUrl },
    rateLimit: "off",
    signingKey: seedText,
    checkpointIntervalMs: "off",
  });
  try {
    await Promise.all(Array.from({ length: count }, async (_, i) => {
      const response = await beacon.fetch(
        new Request("http://127.0.0.1/beacon/0.1/submissions", {
          method: "POST",
          headers: { "content-type": "text/plain; charset=utf-8" },
          body: `old submission ${i}`,
        }),
        { remoteAddress: "192.0.2.1" },
      );
      assertStrictEquals(response.status, 202);
      await response.body?.cancel();
    }));
  } finally {
    await beacon.close();
  }
}

Deno.test("a store with heads from before tiles is tiled once, its old heads met on the way", async () => {
  const database = await tempDatabase();
  const seed = crypto.getRandomValues(new Uint8Array(32));
  try {
    await submitAll(database.url, 700, encodeSeed(seed));
    await appendUntiledHead(database.url, seed, 300);
    await appendUntiledHead(database.url, seed, 650);
    const errors: string[] = [];
    const beacon = signingBeacon(database.url, seed, errors);
    await beacon.ready();
    await beacon.signLog();
    const checkpoint = await beacon.fetch(
      new Request("http://127.0.0.1/beacon/0.1/log/checkpoint"),
      { remoteAddress: "192.0.2.1" },
    );
    const note = await checkpoint.text();
    assertStrictEquals(note.split("\n")[1], "700", note);
    await beacon.close();
    assertEquals(errors, []);
    const tiled = await rows(
      database.url,
      "SELECT from_size, tree_size FROM checkpoints WHERE note_signature IS NOT NULL ORDER BY seq",
    );
    assertEquals(tiled.map((row) => [Number(row.from_size), Number(row.tree_size)]), [[0, 700]]);
  } finally {
    await Deno.remove(database.directory, { recursive: true });
  }
});

Deno.test("an old head the rows no longer give stops the tiling: no head over it", async () => {
  const database = await tempDatabase();
  const seed = crypto.getRandomValues(new Uint8Array(32));
  try {
    await submitAll(database.url, 20, encodeSeed(seed));
    await appendUntiledHead(database.url, seed, 10, "ab".repeat(32)); // a root of other rows
    const errors: string[] = [];
    const beacon = signingBeacon(database.url, seed, errors);
    await beacon.ready();
    await beacon.signLog().catch((error) => errors.push(`signLog: ${(error as Error).name}`));
    await beacon.close();
    assertEquals(errors.filter((name) => name.includes("TreeHeadRefused")).length >= 1, true);
    const tiled = await rows(
      database.url,
      "SELECT count(*) AS n FROM checkpoints WHERE note_signature IS NOT NULL",
    );
    assertStrictEquals(Number(tiled[0].n), 0, "no head with tiles over the mismatch");
  } finally {
    await Deno.remove(database.directory, { recursive: true });
  }
});
