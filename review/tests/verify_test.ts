/**
 * `review verify` against real databases: clean stores pass and gain signed checkpoints;
 * tampered rows and checkpoints are reported with their row or checkpoint and exit status 1.
 * Tampering goes through a raw `libsql` connection, dropping the append-only triggers first
 * where the change needs it, as an attacker with file access could.
 */
import { createClient, type InValue } from "@libsql/client";
import { hex } from "../../src/bytes.ts";
import { leafHash, submissionLeafData, treeRoot } from "../../src/signing/merkle.ts";
import { signCheckpoint, verifyCheckpoint } from "../../src/signing/checkpoint.ts";
import { encodeSeed, parseSigningKey, signingKeyFromSeed } from "../../src/signing/key.ts";
import { assert, assertMatch, assertStrictEquals } from "../../tests/support/assert.ts";
import { assertRunInert, fill, review, type TempDatabase, tempDatabase, text } from "./support.ts";

/** The key the server of these tests is configured with, given to verify on purpose. */
const KEY = encodeSeed(crypto.getRandomValues(new Uint8Array(32)));
const SIGNED = { BEACON_SIGNING_KEY: KEY };

async function threeRows(
  signingKey: string = KEY,
): Promise<{ database: TempDatabase; ids: string[] }> {
  const database = await tempDatabase();
  const receipts = await fill(database, [text("first"), text("second"), text("third")], {
    signingKey,
  });
  return { database, ids: receipts.map((receipt) => String(receipt.id)) };
}

/**
 * Runs one statement on a raw connection of its own: the libSQL client straight on the file,
 * none of the Beacon's code in between, with foreign keys off as in `sqlite3` (so a row can be
 * deleted without its stored receipt signature, migration 9).
 */
async function raw(database: TempDatabase, sql: string, ...args: InValue[]): Promise<void> {
  const client = createClient({ url: database.url });
  try {
    await client.execute("PRAGMA foreign_keys = OFF");
    await client.execute({ sql, args });
  } finally {
    client.close();
  }
}

async function query(database: TempDatabase, sql: string): Promise<Record<string, unknown>[]> {
  const client = createClient({ url: database.url, intMode: "number" });
  try {
    return (await client.execute(sql)).rows as unknown as Record<string, unknown>[];
  } finally {
    client.close();
  }
}

async function checkpointCount(database: TempDatabase): Promise<number> {
  return Number((await query(database, "SELECT count(*) AS n FROM checkpoints"))[0].n);
}

/**
 * A database writer deletes the newest row (seq 3) and the Beacon then stores a new one, through
 * its own key: SQLite hands the freed seq out again, so the new row takes 3 with no gap to see.
 */
async function replaceNewestRow(database: TempDatabase, ids: readonly string[]): Promise<void> {
  await raw(database, "DROP TRIGGER submissions_no_delete");
  await raw(database, "DELETE FROM submissions WHERE seq = 3");
  // Through the Beacon under its own key: another key would be refused at its start.
  const [replacement] = await fill(database, [text("replacement")], { signingKey: KEY });
  const seq = await query(database, `SELECT seq FROM submissions WHERE id = '${replacement.id}'`);
  assertStrictEquals(seq[0].seq, 3);
  assert(replacement.id !== ids[2]);
}

Deno.test("verify passes a clean store and appends a signed checkpoint over all rows", async () => {
  const { database } = await threeRows();
  const first = await review(database, ["verify"], SIGNED);
  assertStrictEquals(first.code, 0, first.stdout + first.stderr);
  assertRunInert(first);
  assertMatch(
    first.stdout,
    /^checked 3 submissions \(0 digest mismatches, 0 redacted\) and 0 checkpoints/m,
  );
  assertMatch(
    first.stdout,
    /^no problems found; appended checkpoint 1 \(tree size 3, \S+Z\)\nsigned by key [\w-]{43}$/m,
  );
  const second = await review(database, ["verify"], SIGNED);
  assertStrictEquals(second.code, 0, second.stdout);
  assertMatch(second.stdout, /and 1 checkpoint \(1 root matched\)/);
  // Nothing new since checkpoint 1: nothing appended.
  assertMatch(second.stdout, /no checkpoint appended: the log has not grown since checkpoint 1/);
  assertStrictEquals(await checkpointCount(database), 1);
  await fill(database, [text("fourth")], { signingKey: KEY });
  const third = await review(database, ["verify"], SIGNED);
  assertStrictEquals(third.code, 0, third.stdout);
  assertMatch(third.stdout, /checked 4 submissions .* and 1 checkpoint \(1 root matched\)/);
  assertMatch(third.stdout, /appended checkpoint 2 \(tree size 4/);

  // The checkpoint is exactly the RFC 6962 root over the rows' leaf data, signed by the key
  // stored as the Beacon's secret.
  const rows = await query(
    database,
    "SELECT seq, id, received_at, digest FROM submissions ORDER BY seq",
  );
  const leaves = await Promise.all(rows.map((row) =>
    leafHash(submissionLeafData({
      seq: Number(row.seq),
      id: String(row.id),
      receivedAt: String(row.received_at),
      digest: String(row.digest),
    }))
  ));
  const checkpoints = await query(database, "SELECT * FROM checkpoints ORDER BY seq");
  assertStrictEquals(checkpoints.length, 2);
  const last = checkpoints[1];
  assertStrictEquals(Number(last.tree_size), 4);
  assertStrictEquals(last.root_hash, hex(await treeRoot(leaves)));
  assertStrictEquals(checkpoints[0].root_hash, hex(await treeRoot(leaves.slice(0, 3))));
  const key = await signingKeyFromSeed(parseSigningKey(KEY));
  assertStrictEquals(last.public_key, key.publicKey);
  assert(
    await verifyCheckpoint(String(last.public_key), {
      treeSize: 4,
      rootHash: String(last.root_hash),
      createdAt: String(last.created_at),
    }, String(last.signature)),
  );
});

Deno.test("verify of an empty store records the RFC 6962 empty root", async () => {
  const database = await tempDatabase();
  await fill(database, []);
  const run = await review(database, ["verify"], SIGNED);
  assertStrictEquals(run.code, 0, run.stdout + run.stderr);
  assertMatch(
    run.stdout,
    /tree size 0, root e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855/,
  );
  assertStrictEquals((await review(database, ["verify"], SIGNED)).code, 0);
});

Deno.test("verify reports a row whose content was changed behind the digest", async () => {
  const { database, ids } = await threeRows();
  await raw(database, "DROP TRIGGER submissions_only_redaction");
  await raw(
    database,
    "UPDATE submissions SET content = ? WHERE seq = 2",
    new TextEncoder().encode("forged"),
  );
  const run = await review(database, ["verify"], SIGNED);
  assertStrictEquals(run.code, 1);
  assertRunInert(run);
  assertMatch(
    run.stdout,
    new RegExp(
      `^PROBLEM: row 2 \\(receipt ${ids[1]}\\): stored digest sha256:[0-9a-f]{64} but the ` +
        "content hashes to sha256:[0-9a-f]{64}$",
      "m",
    ),
  );
  assertMatch(run.stdout, /^1 problem found; no checkpoint appended/m);
  assertStrictEquals(await checkpointCount(database), 0, "no checkpoint over a damaged store");
  const show = await review(database, ["show", ids[1]]);
  assertMatch(show.stdout, /^digest +sha256:[0-9a-f]{64} \(MISMATCH:\n +content is sha256:/m);
});

Deno.test("verify reports a checkpoint whose rows were rewritten consistently", async () => {
  const { database } = await threeRows();
  assertStrictEquals((await review(database, ["verify"], SIGNED)).code, 0);
  // An attacker who also recomputes the digest passes the row check, not the checkpoint.
  const forged = new TextEncoder().encode("forged");
  const digest = "sha256:" +
    hex(new Uint8Array(await crypto.subtle.digest("SHA-256", forged)));
  await raw(database, "DROP TRIGGER submissions_only_redaction");
  await raw(
    database,
    "UPDATE submissions SET content = ?, size = ?, digest = ? WHERE seq = 1",
    forged,
    forged.length,
    digest,
  );
  const run = await review(database, ["verify"], SIGNED);
  assertStrictEquals(run.code, 1);
  assertMatch(
    run.stdout,
    /^PROBLEM: checkpoint 1 \(tree size 3, \S+Z\): recorded root [0-9a-f]{64} but the first 3 submissions now give [0-9a-f]{64}$/m,
  );
  // The stored intake signature covers the digest and size the Beacon acknowledged.
  assertMatch(
    run.stdout,
    /^PROBLEM: row 1 \(receipt [\w-]+\): its stored intake signature does not verify under a key trusted by BEACON_SIGNING_KEY \(the Beacon did not acknowledge this row as it is/m,
  );
  assertMatch(run.stdout, /^2 problems found; no checkpoint appended/m);
  assertStrictEquals(await checkpointCount(database), 1);
});

Deno.test("verify --root checks tree heads kept outside the database", async () => {
  const { database } = await threeRows();
  const clean = await review(database, ["verify", "--no-checkpoint"], SIGNED);
  const root = /^tree size 3, root ([0-9a-f]{64})$/m.exec(clean.stdout)![1];
  const ok = await review(database, ["verify", "--no-checkpoint", "--root", `3:${root}`], SIGNED);
  assertStrictEquals(ok.code, 0, ok.stdout);
  assertMatch(ok.stdout, /^1 of 1 roots given with --root matched$/m);
  // An attacker rewrites a row and its digest, and removes every checkpoint: only the root
  // kept elsewhere still shows it.
  const forged = new TextEncoder().encode("forged");
  const digest = "sha256:" + hex(new Uint8Array(await crypto.subtle.digest("SHA-256", forged)));
  await raw(database, "DROP TRIGGER submissions_only_redaction");
  await raw(
    database,
    "UPDATE submissions SET content = ?, size = 6, digest = ? WHERE seq = 2",
    forged,
    digest,
  );
  const run = await review(database, ["verify", "--root", `3:${root}`], SIGNED);
  assertStrictEquals(run.code, 1);
  assertMatch(
    run.stdout,
    new RegExp(`^PROBLEM: root given with --root for tree size 3: recorded root ${root} but`, "m"),
  );
  const longer = await review(
    database,
    ["verify", "--no-checkpoint", "--root", `9:${root}`],
    SIGNED,
  );
  assertMatch(longer.stdout, /^PROBLEM: root given with --root for tree size 9: covers 9/m);
  const bad = await review(database, ["verify", "--root", "3:XYZ"], SIGNED);
  assertStrictEquals(bad.code, 2);
});

Deno.test("verify reports an inserted row with a wrong digest", async () => {
  const { database } = await threeRows();
  await raw(
    database,
    "INSERT INTO submissions (id, context_id, received_at, surface, kind, content_type, content, " +
      "size, digest, source_hash) VALUES ('smuggled', 'c', '2025-01-01T00:00:00.000Z', 'native', " +
      "'unstructured', 'text/plain', ?, 3, ?, 'x')",
    new TextEncoder().encode("abc"),
    "sha256:" + "0".repeat(64),
  );
  const run = await review(database, ["verify", "--no-checkpoint"], SIGNED);
  assertStrictEquals(run.code, 1);
  assertMatch(run.stdout, /^PROBLEM: row 4 \(receipt smuggled\): stored digest sha256:0{64} but/m);
  assertMatch(
    run.stdout,
    /^PROBLEM: row 4 \(receipt smuggled\): no intake signature is stored \(the Beacon did not acknowledge this row/m,
  );
  assertMatch(run.stdout, /^2 problems found$/m);
});

Deno.test("verify reports a deleted row: the gap, and the checkpoint that covered it", async () => {
  const { database } = await threeRows();
  assertStrictEquals((await review(database, ["verify"], SIGNED)).code, 0);
  await raw(database, "DROP TRIGGER submissions_no_delete");
  await raw(database, "DELETE FROM submissions WHERE seq = 2");
  const run = await review(database, ["verify"], SIGNED);
  assertStrictEquals(run.code, 1);
  assertMatch(run.stdout, /^PROBLEM: row 2 is missing \(deleted\?\)$/m);
  assertMatch(
    run.stdout,
    /^PROBLEM: checkpoint 1 \(tree size 3, \S+\): covers 3 submissions but only 2 exist/m,
  );
  assertMatch(run.stdout, /^2 problems found; no checkpoint appended/m);
});

Deno.test("verify reports a deleted last row replaced by a new one (rowid reused)", async () => {
  const { database, ids } = await threeRows();
  assertStrictEquals((await review(database, ["verify"], SIGNED)).code, 0);
  // No gap to see: only the checkpoint shows that the third entry of the log changed.
  await replaceNewestRow(database, ids);
  const run = await review(database, ["verify"], SIGNED);
  assertStrictEquals(run.code, 1);
  assert(!run.stdout.includes("missing"));
  assertMatch(run.stdout, /^PROBLEM: checkpoint 1 .*: recorded root [0-9a-f]{64} but the first 3/m);
});

Deno.test("verify reports a deleted newest row whose seq a later row took, before any checkpoint covers it", async () => {
  const { database, ids } = await threeRows();
  // No gap, no checkpoint, and the new row carries a valid signature of its own: only the stale
  // batch row, which still names seq 3 with the deleted receipt's leaf, shows the deletion.
  await replaceNewestRow(database, ids);
  assertStrictEquals(await checkpointCount(database), 0);
  const run = await review(database, ["verify"], SIGNED);
  assertStrictEquals(run.code, 1, run.stdout + run.stderr);
  assert(!run.stdout.includes("missing"));
  assertMatch(
    run.stdout,
    /^PROBLEM: receipt batch 3 \(row 3\) signed other receipts than row 3 now holds, which carries a valid signature of its own: rows in that range were deleted and their seqs reused \(by a database writer\?\)$/m,
  );
  assertMatch(run.stdout, /^1 problem found; no checkpoint appended/m);
  assertStrictEquals(await checkpointCount(database), 0);
});

Deno.test("verify reports tampered and foreign checkpoints", async () => {
  const { database } = await threeRows();
  assertStrictEquals((await review(database, ["verify"], SIGNED)).code, 0);
  // 1. A recorded root changed after signing: the signature no longer matches it.
  await raw(database, "DROP TRIGGER checkpoints_no_update");
  await raw(database, "UPDATE checkpoints SET root_hash = ? WHERE seq = 1", "0".repeat(64));
  let run = await review(database, ["verify"], SIGNED);
  assertStrictEquals(run.code, 1);
  assertMatch(
    run.stdout,
    /^PROBLEM: checkpoint 1 \(tree size 3, \S+\): the signature does not verify$/m,
  );
  assertMatch(run.stdout, /^PROBLEM: checkpoint 1 .*: recorded root 0{64} but/m);

  // 2. A well-signed checkpoint by some other key, claiming a root for the current rows.
  const { database: other } = await threeRows();
  assertStrictEquals((await review(other, ["verify"], SIGNED)).code, 0);
  const foreign = await signingKeyFromSeed(crypto.getRandomValues(new Uint8Array(32)));
  const head = {
    treeSize: 3,
    rootHash: String((await query(other, "SELECT root_hash FROM checkpoints"))[0].root_hash),
    createdAt: new Date().toISOString(),
  };
  await raw(
    other,
    "INSERT INTO checkpoints (tree_size, root_hash, created_at, signature, public_key) " +
      "VALUES (?, ?, ?, ?, ?)",
    head.treeSize,
    head.rootHash,
    head.createdAt,
    await signCheckpoint(foreign, head),
    foreign.publicKey,
  );
  run = await review(other, ["verify"], SIGNED);
  assertStrictEquals(run.code, 1);
  assertMatch(
    run.stdout,
    new RegExp(
      `^PROBLEM: checkpoint 2 \\(tree size 3, \\S+\\): signed by ${foreign.publicKey}, not a key trusted by BEACON_SIGNING_KEY$`,
      "m",
    ),
  );
  // Trusting both keys explicitly makes both checkpoints acceptable.
  const beacon = String(
    (await query(other, "SELECT public_key FROM checkpoints WHERE seq = 1"))[0].public_key,
  );
  run = await review(other, [
    "verify",
    "--no-checkpoint",
    "--trust",
    beacon,
    "--trust",
    foreign.publicKey,
  ]);
  assertStrictEquals(run.code, 0, run.stdout + run.stderr);
  assertMatch(run.stdout, /2 roots matched/);
  const bad = await review(other, ["verify", "--trust", "not-a-key"], SIGNED);
  assertStrictEquals(bad.code, 2);
});

Deno.test("verify without the key writes nothing, and fails when no checkpoint covers the store", async () => {
  // A Beacon with a configured key stores none, so any stored key would be verify's doing.
  const { database } = await threeRows();
  for (const args of [["verify"], ["verify", "--no-checkpoint"]]) {
    const run = await review(database, args);
    assertStrictEquals(run.code, 1, run.stdout + run.stderr);
    assertMatch(run.stdout, /^FAILED: no checkpoint and no --root covers these submissions/m);
  }
  assertStrictEquals(await checkpointCount(database), 0);
  assertStrictEquals(
    (await query(database, "SELECT count(*) AS n FROM secrets WHERE name = 'signing-key'"))[0].n,
    0,
  );
  // Once the key's holder has signed a checkpoint, anyone can verify against its public key.
  assertStrictEquals((await review(database, ["verify"], SIGNED)).code, 0);
  const publicKey = (await signingKeyFromSeed(parseSigningKey(KEY))).publicKey;
  await fill(database, [text("fourth")], { signingKey: KEY });
  const trusted = await review(database, ["verify", "--trust", publicKey]);
  assertStrictEquals(trusted.code, 0, trusted.stdout + trusted.stderr);
  assertMatch(
    trusted.stdout,
    /no problems found; 1 submission after the latest checkpoint not yet covered \(no\s+checkpoint\s+appended:\s+BEACON_SIGNING_KEY\s+is\s+not\s+given\)/,
  );
  assertStrictEquals(await checkpointCount(database), 1);
});

Deno.test("verify never makes up a key: a store whose key and checkpoints were dropped fails", async () => {
  // The server stores its own key; its holder signs a first checkpoint on purpose.
  const database = await tempDatabase();
  const ids = (await fill(database, [text("one"), text("two")])).map((r) => String(r.id));
  const seed = (await query(database, "SELECT value FROM secrets WHERE name = 'signing-key'"))[0]
    .value as ArrayBuffer;
  const stored = encodeSeed(new Uint8Array(seed));
  const first = await review(database, ["verify"], { BEACON_SIGNING_KEY: stored });
  assertStrictEquals(first.code, 0, first.stdout);
  // Checked against the stored key's public half, without any key in the environment.
  const plain = await review(database, ["verify"]);
  assertStrictEquals(plain.code, 0, plain.stdout + plain.stderr);
  // An attacker drops the key and every checkpoint and rewrites a row consistently.
  for (
    const trigger of [
      "secrets_no_delete_but_signing_key",
      "checkpoints_no_delete",
      "submissions_only_redaction",
    ]
  ) {
    await raw(database, `DROP TRIGGER ${trigger}`);
  }
  await raw(database, "DELETE FROM secrets");
  await raw(database, "DELETE FROM checkpoints");
  const forged = new TextEncoder().encode("forged");
  await raw(
    database,
    "UPDATE submissions SET content = ?, size = 6, digest = ? WHERE id = ?",
    forged,
    "sha256:" + hex(new Uint8Array(await crypto.subtle.digest("SHA-256", forged))),
    ids[0],
  );
  const run = await review(database, ["verify"]);
  assertStrictEquals(run.code, 1, run.stdout);
  assertMatch(run.stdout, /^FAILED: no checkpoint and no --root covers these submissions/m);
  assertStrictEquals(await checkpointCount(database), 0);
  assertStrictEquals(Number((await query(database, "SELECT count(*) AS n FROM secrets"))[0].n), 0);
});

Deno.test("verify signs with BEACON_SIGNING_KEY when configured, storing no key", async () => {
  const seed = crypto.getRandomValues(new Uint8Array(32));
  const { database } = await threeRows(encodeSeed(seed));
  const key = await signingKeyFromSeed(seed);
  const env = { BEACON_SIGNING_KEY: encodeSeed(seed) };
  const run = await review(database, ["verify"], env);
  assertStrictEquals(run.code, 0, run.stdout + run.stderr);
  assertStrictEquals(
    (await query(database, "SELECT public_key FROM checkpoints"))[0].public_key,
    key.publicKey,
  );
  assertStrictEquals(
    (await query(database, "SELECT count(*) AS n FROM secrets WHERE name = 'signing-key'"))[0].n,
    0,
  );
  assertStrictEquals((await review(database, ["verify", "--no-checkpoint"], env)).code, 0);
  // Without the configured key, the tool cannot trust that checkpoint.
  const without = await review(database, ["verify", "--no-checkpoint"]);
  assertStrictEquals(without.code, 1);
  assertMatch(without.stderr, /Cannot verify the checkpoints: there is no key to trust/);
  const wrong = await review(database, ["verify"], { BEACON_SIGNING_KEY: "short" });
  assertStrictEquals(wrong.code, 1);
  assertMatch(wrong.stderr, /Cannot use BEACON_SIGNING_KEY/);
  assert(!wrong.stderr.includes("short"), "the secret is never echoed");
});
