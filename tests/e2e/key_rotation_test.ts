/**
 * Key rotation through the real server and the real review tool (docs/keys.md, "Rotating the
 * key"):
 *
 * - a start under a new key naming the previous one's seed in `BEACON_PREVIOUS_SIGNING_KEYS`
 *   records one rotation statement signed by both keys, the heads then cover every row, old and
 *   new, under the new key (checked by Go's tlog too), discovery and JWKS publish the previous
 *   key with its rows, old receipts still verify, a restart continues without the setting, and
 *   `review verify --trust <old key>` follows the statement;
 * - a row signed by the retired key past its boundary is withheld and named by the server, and
 *   named by `review verify`, as is a head it signs past its boundary (never served), and a retry
 *   of such a row is not answered with its receipt;
 * - on two instances of one sqld, a rotation naming only the previous public key: one statement,
 *   signed by the new key alone, heads over every row; `--trust <new key>` covers the whole log,
 *   `--trust <old key>` cannot follow a statement the old key did not sign;
 * - a retired key never signs again: a start under it is refused in one line.
 */
import { createClient } from "@libsql/client";
import { submitReceipt } from "../support/tree_heads.ts";
import { assert, assertEquals, assertMatch, assertStrictEquals } from "../support/assert.ts";
import { refusedStart, type ServerProcess, startServer } from "../support/server.ts";
import { startSqld } from "../support/sqld.ts";
import { submitText } from "../support/tree_heads.ts";
import { runTlogCheck } from "../support/go_tlog.ts";
import {
  encodeSeed,
  openCheckpointNote,
  type ReceiptSignature,
  sha256Digest,
  signCheckpoint,
  signingKeyFromSeed,
  signReceipts,
  verifyReceipt,
} from "../../src/signing/mod.ts";
import { review } from "../../review/tests/support.ts";

const seedOf = (byte: number) => new Uint8Array(32).fill(byte);

interface Receipt {
  id: string;
  receivedAt: string;
  digest: string;
  size: number;
  kind: string;
  signature: string;
  batch?: ReceiptSignature["batch"];
}

const submit = (url: string, text: string): Promise<Receipt> => submitReceipt(url, text);

/** Polls the published head until one of `publicKey` covers `size` rows (the test's timeout bounds it). */
async function headCovering(url: string, publicKey: string, size: number) {
  while (true) {
    const response = await fetch(url + "/beacon/0.1/tree-head");
    if (response.status === 200) {
      const head = await response.json();
      if (head.publicKey === publicKey && head.treeSize >= size) return head;
    } else await response.body?.cancel();
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Waits until the server printed an error line (stderr) matching `predicate`. */
async function printedError(
  server: ServerProcess,
  predicate: (line: Record<string, unknown>) => boolean,
): Promise<Record<string, unknown>> {
  while (true) {
    const found = server.stderr().split("\n").filter((line) => line.startsWith("{"))
      .map((line) => JSON.parse(line) as Record<string, unknown>).find(predicate);
    if (found !== undefined) return found;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function rotations(databaseUrl: string): Promise<Record<string, unknown>[]> {
  const client = createClient({ url: databaseUrl, intMode: "number" });
  try {
    return (await client.execute("SELECT * FROM key_rotations ORDER BY seq")).rows.map((row) => ({
      ...row,
    }));
  } finally {
    client.close();
  }
}

/** The text of the forged row, and the idempotency key it is stored under. */
const FORGED_TEXT = "made with a copy of the retired key";
const FORGED_KEY = "forged-retry";

/**
 * What a holder of a copy of the retired key does with plain SQL: a row past the boundary with a
 * receipt signature the retired key made, stored as the intake stores one (a batch of one), under
 * an idempotency key of a genuine client's source, to have a retry answered with it.
 */
async function forgeUnderRetiredKey(databaseUrl: string, seed: Uint8Array): Promise<number> {
  const key = await signingKeyFromSeed(seed);
  const client = createClient({ url: databaseUrl, intMode: "number" });
  try {
    const [{ source_hash: sourceHash }] = (await client.execute(
      "SELECT source_hash FROM submissions ORDER BY seq LIMIT 1",
    )).rows;
    const content = new TextEncoder().encode(FORGED_TEXT);
    const fields = {
      id: "forged-" + crypto.randomUUID(),
      receivedAt: new Date().toISOString(),
      digest: sha256Digest(content),
      size: content.length,
      kind: "unstructured",
    };
    const signed = await signReceipts(key, [fields]);
    const inserted = await client.execute({
      sql: "INSERT INTO submissions (id, context_id, received_at, surface, kind, content_type, " +
        "content, size, digest, source_hash, idempotency_key) VALUES (?, 'c', ?, 'native', " +
        "'unstructured', 'text/plain; charset=utf-8', ?, ?, ?, ?, ?) RETURNING seq",
      args: [
        fields.id,
        fields.receivedAt,
        content,
        fields.size,
        fields.digest,
        String(sourceHash),
        // As the intake stores a key: `<surface>:<key>` (src/intake/accept.ts).
        `native:${FORGED_KEY}`,
      ],
    });
    const seq = Number(inserted.rows[0].seq);
    await client.execute({
      sql:
        "INSERT INTO receipt_batches (first_seq, last_seq, leaves, signature) VALUES (?, ?, ?, ?)",
      args: [seq, seq, signed.leaves, signed.signature],
    });
    return seq;
  } finally {
    client.close();
  }
}

Deno.test("a rotation with the previous seed: one chain across keys, old receipts verify, a leaked key's row is withheld", async () => {
  const [seedA, seedB] = [seedOf(21), seedOf(22)];
  const [a, b] = await Promise.all([signingKeyFromSeed(seedA), signingKeyFromSeed(seedB)]);
  const first = await startServer({ env: { BEACON_SIGNING_KEY: encodeSeed(seedA) } });
  const { directory, databaseUrl } = first;
  let server: ServerProcess | undefined;
  try {
    const old: Receipt[] = [];
    for (const text of ["one", "two", "three"]) old.push(await submit(first.url, text));
    await headCovering(first.url, a.publicKey, 3);
    assertStrictEquals((await first.stop()).code, 0);

    // The new key, naming the previous one's seed: the statement is signed by both.
    server = await startServer({
      directory,
      env: {
        BEACON_SIGNING_KEY: encodeSeed(seedB),
        BEACON_PREVIOUS_SIGNING_KEYS: encodeSeed(seedA),
      },
    });
    // The ready line says which key the log rotated from, and its last row.
    let ready = server.lines.find((line) => line.state === "ready");
    while (ready === undefined) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      ready = server.lines.find((line) => line.state === "ready");
    }
    assertEquals(ready.previousSigningKeys, [{ fingerprint: a.fingerprint, lastSeq: 3 }]);
    const recorded = await rotations(databaseUrl);
    assertStrictEquals(recorded.length, 1);
    assertEquals(
      [recorded[0].previous_key, recorded[0].new_key, recorded[0].last_seq],
      [a.publicKey, b.publicKey, 3],
    );
    assert(typeof recorded[0].previous_signature === "string", "co-signed by the previous key");
    for (const text of ["four", "five", "six"]) await submit(server.url, text);
    const head = await headCovering(server.url, b.publicKey, 6);
    assertStrictEquals(head.treeSize, 6);

    // Discovery and JWKS: the current key, and the previous one with the rows it vouches for.
    const discovery = await (await fetch(server.url + "/.well-known/autonomous-agent")).json();
    assertStrictEquals(discovery.receiptSigning.publicKey, b.publicKey);
    assertEquals(
      discovery.receiptSigning.previousKeys.map((key: Record<string, unknown>) => [
        key.publicKey,
        key.fingerprint,
        key.rows,
      ]),
      [[a.publicKey, a.fingerprint, { first: 1, last: 3 }]],
    );
    const jwks = await (await fetch(discovery.receiptSigning.jwks)).json();
    assertEquals(jwks.keys.map((key: Record<string, unknown>) => key.x), [
      b.publicKey,
      a.publicKey,
    ]);
    // An old receipt verifies under the previous key the documents publish.
    const previous = discovery.receiptSigning.previousKeys[0].publicKey;
    for (const receipt of old) {
      assert(await verifyReceipt(previous, receipt, receipt.signature, receipt.batch));
    }
    // The checkpoint note is under the new key, and Go's tlog checks the whole log's tiles.
    const note = await (await fetch(discovery.log.url + "/checkpoint")).text();
    const opened = await openCheckpointNote(note, discovery.log.origin, b.publicKey);
    assert(opened !== undefined && opened.size === 6, note);
    const go = await runTlogCheck({
      prefix: discovery.log.url,
      verifierKey: discovery.log.verifierKey,
      consistency: [],
    });
    assertStrictEquals(go.code, 0, go.stdout + go.stderr);
    assertMatch(go.stdout, /tree hash over 6 leaves matches/);
    assertStrictEquals((await server.stop()).code, 0);

    // A restart under the new key needs the setting no more; nothing is recorded twice.
    server = await startServer({ directory, env: { BEACON_SIGNING_KEY: encodeSeed(seedB) } });
    await submit(server.url, "seven");
    const seven = await headCovering(server.url, b.publicKey, 7);
    assertStrictEquals((await rotations(databaseUrl)).length, 1);

    // The old key followed through the statement it signed; the new key covers the whole log.
    for (const trusted of [a.publicKey, b.publicKey]) {
      const run = await review(databaseUrl, ["verify", "--no-checkpoint", "--trust", trusted]);
      assertStrictEquals(run.code, 0, run.stdout + run.stderr);
      assertMatch(run.stdout, /^no problems found/m);
    }
    const followed = await review(databaseUrl, [
      "verify",
      "--no-checkpoint",
      "--trust",
      a.publicKey,
    ]);
    assert(
      // `say` lines wrap at the terminal width: compare with the whitespace folded.
      followed.stdout.replace(/\s+/g, " ").includes(
        `followed the rotation statement signed by the trusted key ${a.publicKey} to ${b.publicKey}`,
      ),
      followed.stdout,
    );

    // A copy of the retired key signs a head past its boundary: not a head of the log.
    const pastBoundary = { treeSize: 7, rootHash: seven.rootHash, createdAt: seven.createdAt };
    const client = createClient({ url: databaseUrl, intMode: "number" });
    await client.execute({
      sql: "INSERT INTO checkpoints (tree_size, root_hash, created_at, signature, public_key) " +
        "VALUES (?, ?, ?, ?, ?)",
      args: [
        7,
        seven.rootHash,
        seven.createdAt,
        await signCheckpoint(a, pastBoundary),
        a.publicKey,
      ],
    });
    client.close();
    // And appends a row past its boundary: withheld and named.
    const forged = await forgeUnderRetiredKey(databaseUrl, seedA);
    await submit(server.url, "after the forgery");
    const withheld = await printedError(server, (line) => line.name === "TreeHeadWithheld");
    assertEquals([withheld.seq, withheld.retiredKey], [forged, a.publicKey]);
    // A retry of it is not answered with the retired key's receipt: the row is not the Beacon's.
    const retry = await fetch(server.url + "/beacon/0.1/submissions", {
      method: "POST",
      headers: { "content-type": "text/plain; charset=utf-8", "idempotency-key": FORGED_KEY },
      body: FORGED_TEXT,
    });
    assertStrictEquals(retry.status, 500, await retry.text());
    const named = await review(databaseUrl, ["verify", "--no-checkpoint", "--trust", b.publicKey]);
    assertStrictEquals(named.code, 1, named.stdout);
    assertMatch(
      named.stdout,
      new RegExp(`^PROBLEM: row ${forged} .*intake signature is by the retired key`, "m"),
    );
    assertMatch(
      named.stdout,
      /^PROBLEM: checkpoint \d+ \(tree size 7, .*signed by the retired key .* past its rotation boundary/m,
    );
    assertStrictEquals(
      (await (await fetch(server.url + "/beacon/0.1/tree-head")).json()).publicKey,
      b.publicKey,
      "the retired key's head is never served",
    );
    assertStrictEquals((await server.stop()).code, 0);
    server = undefined;

    // A retired key never signs again: a start under it is refused in one line.
    const back = await refusedStart({
      BEACON_DATABASE_URL: databaseUrl,
      BEACON_SIGNING_KEY: encodeSeed(seedA),
      BEACON_PREVIOUS_SIGNING_KEYS: b.publicKey,
    });
    assertStrictEquals(back.code, 2, back.lines.join("\n"));
    assertStrictEquals(back.lines.length, 1, back.lines.join("\n"));
    assertMatch(back.lines[0], /^Cannot start: the signing key changed: .*retired/);
  } finally {
    await server?.stop().catch(() => {});
    await Deno.remove(directory, { recursive: true }).catch(() => {});
  }
});

Deno.test("a rotation naming only the previous public key, on two instances of one sqld", async () => {
  const [seedA, seedB, seedC] = [seedOf(31), seedOf(32), seedOf(33)];
  const [a, b] = await Promise.all([signingKeyFromSeed(seedA), signingKeyFromSeed(seedB)]);
  const sqld = await startSqld();
  const servers: ServerProcess[] = [];
  const start = async (env: Record<string, string>) => {
    const server = await startServer({ env: { BEACON_DATABASE_URL: sqld.url, ...env } });
    servers.push(server);
    return server;
  };
  const stopAll = async () => {
    for (const server of servers.splice(0)) {
      assertStrictEquals((await server.stop()).code, 0);
      await Deno.remove(server.directory, { recursive: true }).catch(() => {});
    }
  };
  try {
    const before = [
      await start({ BEACON_SIGNING_KEY: encodeSeed(seedA) }),
      await start({ BEACON_SIGNING_KEY: encodeSeed(seedA) }),
    ];
    for (const [i, server] of before.entries()) {
      await submitText(server.url, `old ${i} a`);
      await submitText(server.url, `old ${i} b`);
    }
    await headCovering(before[0].url, a.publicKey, 4);
    await stopAll();

    // Without the setting: refused, naming it and the previous key.
    const refused = await refusedStart({
      BEACON_DATABASE_URL: sqld.url,
      BEACON_SIGNING_KEY: encodeSeed(seedB),
    });
    assertStrictEquals(refused.code, 2, refused.lines.join("\n"));
    assertStrictEquals(refused.lines.length, 1, refused.lines.join("\n"));
    assert(refused.lines[0].includes(a.fingerprint), refused.lines[0]);
    assert(refused.lines[0].includes("BEACON_PREVIOUS_SIGNING_KEYS"), refused.lines[0]);
    // Naming a key that is not the previous one is refused too.
    const wrong = await refusedStart({
      BEACON_DATABASE_URL: sqld.url,
      BEACON_SIGNING_KEY: encodeSeed(seedB),
      BEACON_PREVIOUS_SIGNING_KEYS: (await signingKeyFromSeed(seedC)).publicKey,
    });
    assertStrictEquals(wrong.code, 2, wrong.lines.join("\n"));
    assertMatch(wrong.lines[0], /BEACON_PREVIOUS_SIGNING_KEYS does not name it/);

    // Both instances start under the new key, naming only the previous public key.
    const env = {
      BEACON_SIGNING_KEY: encodeSeed(seedB),
      BEACON_PREVIOUS_SIGNING_KEYS: a.publicKey,
    };
    const after = [await start(env), await start(env)];
    const recorded = await rotations(sqld.url);
    assertStrictEquals(recorded.length, 1, "one statement for two instances");
    assertEquals([recorded[0].last_seq, recorded[0].previous_signature], [4, null]);
    for (const [i, server] of after.entries()) {
      await submitText(server.url, `new ${i} a`);
      await submitText(server.url, `new ${i} b`);
    }
    for (const server of after) await headCovering(server.url, b.publicKey, 8);
    await stopAll();

    const whole = await review(sqld.url, ["verify", "--no-checkpoint", "--trust", b.publicKey]);
    assertStrictEquals(whole.code, 0, whole.stdout + whole.stderr);
    assertMatch(whole.stdout, /^checked 8 submissions/m);
    // The old key did not sign the statement: pinning it alone cannot reach the new rows.
    const pinnedOld = await review(sqld.url, ["verify", "--no-checkpoint", "--trust", a.publicKey]);
    assertStrictEquals(pinnedOld.code, 1, pinnedOld.stdout);
    assertMatch(pinnedOld.stdout, /^PROBLEM: row 5 /m);
  } finally {
    for (const server of servers) await server.stop().catch(() => {});
    await sqld.close();
  }
});

Deno.test("a rotation of a store no head was signed over yet: the named key that signed the last row", async () => {
  const [seedA, seedB] = [seedOf(41), seedOf(42)];
  const [a, b] = await Promise.all([signingKeyFromSeed(seedA), signingKeyFromSeed(seedB)]);
  const first = await startServer({
    env: { BEACON_SIGNING_KEY: encodeSeed(seedA), BEACON_CHECKPOINT_INTERVAL: "off" },
  });
  const { directory, databaseUrl } = first;
  let server: ServerProcess | undefined;
  try {
    for (const text of ["one", "two"]) await submitText(first.url, text);
    assertStrictEquals((await first.stop()).code, 0);
    server = await startServer({
      directory,
      env: { BEACON_SIGNING_KEY: encodeSeed(seedB), BEACON_PREVIOUS_SIGNING_KEYS: a.publicKey },
    });
    const recorded = await rotations(databaseUrl);
    assertEquals(
      recorded.map((row) => [row.previous_key, row.new_key, row.last_seq]),
      [[a.publicKey, b.publicKey, 2]],
    );
    await submitText(server.url, "three");
    await headCovering(server.url, b.publicKey, 3);
    assertStrictEquals((await server.stop()).code, 0);
    server = undefined;
    const run = await review(databaseUrl, ["verify", "--no-checkpoint", "--trust", b.publicKey]);
    assertStrictEquals(run.code, 0, run.stdout + run.stderr);
  } finally {
    await server?.stop().catch(() => {});
    await Deno.remove(directory, { recursive: true }).catch(() => {});
  }
});
