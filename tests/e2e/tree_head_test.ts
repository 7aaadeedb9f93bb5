/**
 * The server signs its own tree heads (src/transparency/; docs/protocol-0.1.md §6.5): through the
 * real server (`src/adapter/deno/server.ts` on a temporary database) and the real review CLI.
 *
 * - A default install: submit, stop gracefully, and `review verify --trust <the key from the
 *   discovery document>` exits 0; the published tree head verifies with WebCrypto alone and its
 *   root is the RFC 6962 root of the stored rows, computed here independently.
 * - Heads are signed every `BEACON_CHECKPOINT_INTERVAL` while the log grows, and at start when it
 *   grew; rows after the latest head are "not yet covered" and do not fail `verify`.
 * - Tampering still fails: a changed, inserted or deleted row under a head, a forged head, a store
 *   without any head. A server started on a damaged store signs nothing over the damage.
 * - Two servers on one database add one head per tree size; the timer never keeps a process alive.
 */
import { createClient } from "@libsql/client";
import { type Beacon, createBeacon } from "../../src/beacon.ts";
import { configFromEnvironment } from "../../src/start/config.ts";
import {
  encodeSeed,
  fromHex,
  signCheckpoint,
  signingKeyFromSeed,
  signReceipts,
  verifyConsistency,
} from "../../src/signing/mod.ts";
import { Database } from "../../src/store/database.ts";
import { SubmissionStore } from "../../src/store/store.ts";
import { LogSigner } from "../../src/transparency/signer.ts";
import { newSubmission } from "../support/rows.ts";
import type { SignedFields } from "../../src/store/rows.ts";
import { assert, assertEquals, assertMatch, assertStrictEquals } from "../support/assert.ts";
import { fill, review, type TempDatabase, tempDatabase, text } from "../../review/tests/support.ts";
import { type ServerProcess, startServer } from "../support/server.ts";
import { startSqld } from "../support/sqld.ts";
import { checkpointSizes, submitText as submit } from "../support/tree_heads.ts";

const encoder = new TextEncoder();

// --- An independent verifier: WebCrypto and the text of docs/protocol-0.1.md §6.5 only. ---

function fromBase64url(text: string): Uint8Array<ArrayBuffer> {
  const binary = atob(text.replace(/-/g, "+").replace(/_/g, "/"));
  return Uint8Array.from(binary, (c) => c.charCodeAt(0));
}

function toHex(bytes: Uint8Array): string {
  return Array.from(bytes, (byte) => byte.toString(16).padStart(2, "0")).join("");
}

async function sha256(...parts: Uint8Array[]): Promise<Uint8Array<ArrayBuffer>> {
  const all = new Uint8Array(parts.reduce((n, part) => n + part.length, 0));
  parts.reduce((at, part) => (all.set(part, at), at + part.length), 0);
  return new Uint8Array(await crypto.subtle.digest("SHA-256", all));
}

/** MTH (RFC 6962 §2.1) over leaf hashes. */
async function merkleRoot(leaves: Uint8Array[]): Promise<Uint8Array> {
  if (leaves.length === 0) return await sha256();
  if (leaves.length === 1) return leaves[0];
  let k = 1;
  while (k * 2 < leaves.length) k *= 2;
  return await sha256(
    new Uint8Array([1]),
    await merkleRoot(leaves.slice(0, k)),
    await merkleRoot(leaves.slice(k)),
  );
}

/** The root of the stored rows' leaves (`{digest,id,receivedAt,seq}` in JCS order). */
async function storedRoot(databaseUrl: string, size?: number): Promise<string> {
  const rows = await query(
    databaseUrl,
    "SELECT seq, id, received_at, digest FROM submissions ORDER BY seq",
  );
  const leaves = await Promise.all(
    rows.slice(0, size).map((row) =>
      sha256(
        new Uint8Array([0]),
        encoder.encode(JSON.stringify({
          digest: row.digest,
          id: row.id,
          receivedAt: row.received_at,
          seq: Number(row.seq),
        })),
      )
    ),
  );
  return toHex(await merkleRoot(leaves));
}

interface PublishedHead {
  algorithm: string;
  treeSize: number;
  rootHash: string;
  createdAt: string;
  publicKey: string;
  signature: string;
}

async function verifyHead(publicKey: string, head: PublishedHead): Promise<boolean> {
  const { createdAt, rootHash, treeSize } = head;
  const signed = encoder.encode(
    "beacon/0.1 checkpoint\n" + JSON.stringify({ createdAt, rootHash, treeSize }),
  );
  const key = await crypto.subtle.importKey(
    "raw",
    fromBase64url(publicKey),
    { name: "Ed25519" },
    false,
    ["verify"],
  );
  return await crypto.subtle.verify("Ed25519", key, fromBase64url(head.signature), signed);
}

// --- Helpers around the real server and database. ---

async function query(
  databaseUrl: string,
  sql: string,
  ...args: (string | number | Uint8Array)[]
): Promise<Record<string, unknown>[]> {
  const client = createClient({ url: databaseUrl, intMode: "number" });
  try {
    return (await client.execute({ sql, args })).rows as unknown as Record<string, unknown>[];
  } finally {
    client.close();
  }
}

async function discovery(server: ServerProcess): Promise<{ key: string; treeHead: string }> {
  const document = await (await fetch(server.url + "/.well-known/autonomous-agent")).json();
  return { key: document.receiptSigning.publicKey, treeHead: document.endpoints.treeHead };
}

/** The published head, asked for until it covers `size` rows (no clock: the test's own bound). */
async function headCovering(treeHeadUrl: string, size: number): Promise<PublishedHead> {
  while (true) {
    const response = await fetch(treeHeadUrl);
    if (response.status === 200) {
      const head = await response.json() as PublishedHead;
      if (head.treeSize >= size) return head;
    } else {
      assertStrictEquals(response.status, 404, "no head yet is a 404");
      await response.body?.cancel();
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** One plain-text submission through an in-process Beacon's handler; expects `202`. */
async function submitInProcess(beacon: Beacon, body: string): Promise<void> {
  const response = await beacon.fetch(
    new Request("http://127.0.0.1/beacon/0.1/submissions", {
      method: "POST",
      headers: { "content-type": "text/plain; charset=utf-8" },
      body,
    }),
    { remoteAddress: "192.0.2.1" },
  );
  const answer = await response.text();
  assertStrictEquals(response.status, 202, answer);
}

/** Heads of one key: one per tree size, in growing order, including every size in `sizes`. */
function assertGrowing(actual: number[], sizes: number[]): void {
  assert(actual.every((size, i) => i === 0 || size > actual[i - 1]), `one per size: ${actual}`);
  for (const size of sizes) assert(actual.includes(size), `a head for ${size}: ${actual}`);
}

Deno.test("a default install: submit, stop gracefully, verify --trust the published key exits 0", async () => {
  const server = await startServer({ env: { BEACON_LOG: "off" } });
  try {
    const { key, treeHead } = await discovery(server);
    assertStrictEquals(treeHead, server.url + "/beacon/0.1/tree-head");
    // An empty log at start: the empty tree's head (RFC 9162 §2.1.1), signed by the first start.
    const first = await fetch(treeHead);
    assertStrictEquals(first.status, 200, "a head from the first request on");
    const empty = await first.json() as PublishedHead;
    assertStrictEquals(empty.treeSize, 0);
    assertStrictEquals(empty.rootHash, await storedRoot(server.databaseUrl, 0));
    assert(await verifyHead(key, empty));
    for (const body of ["first", "second", "third"]) await submit(server.url, body);
    assertStrictEquals((await server.stop("SIGTERM")).code, 0);

    const run = await review(server.databaseUrl, ["verify", "--trust", key]);
    assertStrictEquals(run.code, 0, run.stdout + run.stderr);
    assertMatch(
      run.stdout,
      /^checked 3 submissions .* and (\d+) checkpoints \(\1 roots matched\)$/m,
    );
    assertMatch(run.stdout, /^no problems found$/m);

    // Restarted without growth: the same head, published; nothing new signed.
    const again = await startServer({ directory: server.directory, env: { BEACON_LOG: "off" } });
    try {
      const response = await fetch(treeHead.replace(server.url, again.url));
      assertStrictEquals(response.status, 200);
      assertStrictEquals(response.headers.get("content-type"), "application/json");
      assertStrictEquals(response.headers.get("cache-control"), "public, max-age=60");
      const etag = response.headers.get("etag");
      assertMatch(etag ?? "", /^"[0-9a-f]{32}"$/);
      const head = await response.json() as PublishedHead;
      assertEquals(Object.keys(head), [
        "algorithm",
        "treeSize",
        "rootHash",
        "createdAt",
        "publicKey",
        "signature",
      ]);
      assertStrictEquals(head.algorithm, "Ed25519");
      assertStrictEquals(head.publicKey, key, "signed by the key the discovery document names");
      assertStrictEquals(head.treeSize, 3);
      assertStrictEquals(head.rootHash, await storedRoot(server.databaseUrl));
      assert(await verifyHead(key, head), "the head verifies with WebCrypto alone");
      assert(!await verifyHead(key, { ...head, treeSize: 2 }), "a changed size does not");
      assertStrictEquals(
        response.headers.get("last-modified"),
        new Date(head.createdAt).toUTCString(),
      );
      const revalidated = await fetch(treeHead.replace(server.url, again.url), {
        headers: { "if-none-match": etag! },
      });
      assertStrictEquals(revalidated.status, 304);
      await revalidated.body?.cancel();
    } finally {
      assertStrictEquals((await again.stop("SIGTERM")).code, 0);
    }
    // The empty tree from the first start, then growing heads up to 3; the restart without
    // growth signed nothing new.
    const sizes = await checkpointSizes(server.databaseUrl);
    assertEquals([sizes[0], sizes.at(-1), new Set(sizes).size], [0, 3, sizes.length]);
  } finally {
    await Deno.remove(server.directory, { recursive: true });
  }
});

Deno.test("heads every interval while the log grows, at start when it grew; later rows are not yet covered", async () => {
  const server = await startServer({
    env: { BEACON_LOG: "off", BEACON_CHECKPOINT_INTERVAL: "1s" },
  });
  const { directory, databaseUrl } = server;
  try {
    const { key, treeHead } = await discovery(server);
    await submit(server.url, "one");
    await submit(server.url, "two");
    const two = await headCovering(treeHead, 2);
    assertStrictEquals(two.treeSize, 2);
    assertStrictEquals(two.rootHash, await storedRoot(databaseUrl, 2));
    assert(await verifyHead(key, two));
    await submit(server.url, "three");
    const three = await headCovering(treeHead, 3);
    assertStrictEquals(three.rootHash, await storedRoot(databaseUrl, 3));
    assert(Date.parse(three.createdAt) >= Date.parse(two.createdAt));
    assertStrictEquals((await server.stop("SIGTERM")).code, 0);
    // A tick may also have fallen between the first two submissions; heads only ever grow.
    assertGrowing(await checkpointSizes(databaseUrl), [2, 3]);

    // A server killed before its next head leaves a row uncovered: reported, not a failure.
    const killed = await startServer({
      directory,
      env: { BEACON_LOG: "off", BEACON_CHECKPOINT_INTERVAL: "24h" },
    });
    // Its start found nothing new to sign (and it is open: it serves the head it has).
    assertStrictEquals(
      (await headCovering(treeHead.replace(server.url, killed.url), 3)).treeSize,
      3,
    );
    await submit(killed.url, "four");
    await killed.stop("SIGKILL");
    const uncovered = await review(databaseUrl, ["verify", "--trust", key]);
    assertStrictEquals(uncovered.code, 0, uncovered.stdout + uncovered.stderr);
    assertMatch(
      uncovered.stdout,
      /^no problems found; 1 submission after the latest checkpoint not yet covered/m,
    );

    // The next start covers it.
    const next = await startServer({ directory, env: { BEACON_LOG: "off" } });
    try {
      const four = await headCovering(treeHead.replace(server.url, next.url), 4);
      assertStrictEquals(four.treeSize, 4);
      assertStrictEquals(four.rootHash, await storedRoot(databaseUrl));
    } finally {
      assertStrictEquals((await next.stop("SIGTERM")).code, 0);
    }
    const covered = await review(databaseUrl, ["verify", "--trust", key]);
    assertStrictEquals(covered.code, 0, covered.stdout);
    assertMatch(covered.stdout, /and (\d+) checkpoints \(\1 roots matched\)/);
    assertMatch(covered.stdout, /^no problems found$/m);
  } finally {
    await Deno.remove(directory, { recursive: true });
  }
});

/** Three rows under one server-signed head (the real handler in process), and the key. */
async function signedStore(): Promise<{ database: TempDatabase; key: string; seed: string }> {
  const database = await tempDatabase();
  const seed = encodeSeed(crypto.getRandomValues(new Uint8Array(32)));
  await fill(database, [text("first"), text("second"), text("third")], {
    signingKey: seed,
    treeHeads: true,
  });
  const key = (await signingKeyFromSeed(fromBase64url(seed))).publicKey;
  const sizes = await checkpointSizes(database.url);
  assertEquals(
    [sizes[0], sizes.at(-1)],
    [0, 3],
    "the first start signed the empty tree, close() all three",
  );
  const clean = await review(database, ["verify", "--trust", key]);
  assertStrictEquals(clean.code, 0, clean.stdout + clean.stderr);
  return { database, key, seed };
}

/** Runs one statement with the append-only triggers dropped, as a database writer could. */
async function tamper(database: TempDatabase, sql: string, ...args: (string | number)[]) {
  for (const trigger of ["submissions_only_redaction", "submissions_no_delete"]) {
    await query(database.url, `DROP TRIGGER IF EXISTS ${trigger}`);
  }
  // As `sqlite3` would run it: foreign keys are off there by default, so a row can go without its
  // stored receipt signature (migration 9).
  const client = createClient({ url: database.url, intMode: "number" });
  try {
    await client.execute("PRAGMA foreign_keys = OFF");
    await client.execute({ sql, args });
  } finally {
    client.close();
  }
}

Deno.test("tampering under a server-signed head still fails verify", async () => {
  const cases: {
    name: string;
    change: (database: TempDatabase) => Promise<void>;
    expect: RegExp;
  }[] = [
    {
      name: "a changed row",
      change: (database) =>
        tamper(database, "UPDATE submissions SET received_at = ? WHERE seq = 2", "2020-01-01"),
      expect: /^PROBLEM: checkpoint \d+ \(tree size 3, \S+\): recorded root [0-9a-f]{64} but/m,
    },
    {
      name: "a deleted row",
      change: (database) => tamper(database, "DELETE FROM submissions WHERE seq = 3"),
      expect: /^PROBLEM: checkpoint \d+ .*: covers 3 submissions but only 2 exist/m,
    },
    {
      name: "an inserted row (a row replaced by another, renumbered)",
      change: async (database) => {
        await tamper(database, "DELETE FROM submissions WHERE seq = 3");
        await query(
          database.url,
          "INSERT INTO submissions (seq, id, context_id, received_at, kind, surface, " +
            "content_type, content, size, digest, source_hash) SELECT 3, " +
            "'AAAAAAAAAAAAAAAAAAAAAAAAAAAAAA', context_id, received_at, kind, surface, " +
            "content_type, content, size, digest, source_hash " +
            "FROM submissions WHERE seq = 2",
        );
      },
      expect: /^PROBLEM: checkpoint \d+ .*: recorded root [0-9a-f]{64} but the first 3/m,
    },
    {
      name: "a head forged by another key",
      change: async (database) => {
        const other = await signingKeyFromSeed(new Uint8Array(32).fill(7));
        const head = {
          treeSize: 3,
          rootHash: await storedRoot(database.url),
          createdAt: new Date().toISOString(),
        };
        await query(
          database.url,
          "INSERT INTO checkpoints (tree_size, root_hash, created_at, signature, public_key) " +
            "VALUES (?, ?, ?, ?, ?)",
          head.treeSize,
          head.rootHash,
          head.createdAt,
          await signCheckpoint(other, head),
          other.publicKey,
        );
      },
      expect: /^PROBLEM: checkpoint \d+ .*: signed by [\w-]{43}, not a key trusted by --trust$/m,
    },
    {
      name: "a head with the Beacon's key but a forged signature",
      change: async (database) => {
        const [row] = await query(database.url, "SELECT * FROM checkpoints");
        await query(
          database.url,
          "INSERT INTO checkpoints (tree_size, root_hash, created_at, signature, public_key) " +
            "VALUES (?, ?, ?, ?, ?)",
          4,
          "0".repeat(64),
          String(row.created_at),
          String(row.signature),
          String(row.public_key),
        );
      },
      expect: /^PROBLEM: checkpoint \d+ \(tree size 4, \S+\): the signature does not verify$/m,
    },
  ];
  for (const { name, change, expect } of cases) {
    const { database, key } = await signedStore();
    try {
      await change(database);
      const run = await review(database, ["verify", "--trust", key]);
      assertStrictEquals(run.code, 1, `${name}: ${run.stdout}`);
      assertMatch(run.stdout, expect, name);
    } finally {
      await Deno.remove(database.directory, { recursive: true });
    }
  }
});

Deno.test("a store without any head fails verify, and --trust alone does not change that", async () => {
  const database = await tempDatabase();
  try {
    const seed = encodeSeed(crypto.getRandomValues(new Uint8Array(32)));
    await fill(database, [text("unsigned")], { signingKey: seed }); // tree heads off
    const key = (await signingKeyFromSeed(fromBase64url(seed))).publicKey;
    const run = await review(database, ["verify", "--trust", key]);
    assertStrictEquals(run.code, 1, run.stdout);
    assertMatch(run.stdout, /^FAILED: no checkpoint and no --root covers these submissions/m);
  } finally {
    await Deno.remove(database.directory, { recursive: true });
  }
});

Deno.test("a server started on a damaged store keeps the log as signed, and verify names the damage", async () => {
  const { database, key, seed } = await signedStore();
  try {
    await tamper(database, "UPDATE submissions SET received_at = ? WHERE seq = 1", "2020-01-01");
    const errors: string[] = [];
    const beacon = createBeacon({
      database: { url: database.url },
      rateLimit: "off",
      signingKey: seed,
      onError: (error) => errors.push((error as Error).name),
    });
    await beacon.ready();
    await submitInProcess(beacon, "after the damage"); // the intake keeps working
    await beacon.close();
    // The log continues from its stored tiles, which hold row 1 as it was signed: the next head
    // extends the last one and vouches for nothing the writer changed.
    assertEquals(errors, []);
    assertStrictEquals((await checkpointSizes(database.url)).at(-1), 4);
    const run = await review(database, ["verify", "--trust", key]);
    assertStrictEquals(run.code, 1, run.stdout);
    assertMatch(run.stdout, /^PROBLEM: .*recorded root [0-9a-f]{64} but/m);
  } finally {
    await Deno.remove(database.directory, { recursive: true });
  }
});

Deno.test("two servers on one database add one head per tree size", async () => {
  const first = await startServer({ env: { BEACON_LOG: "off" } });
  const second = await startServer({ directory: first.directory, env: { BEACON_LOG: "off" } });
  try {
    await submit(first.url, "to the first");
    await submit(second.url, "to the second");
    await submit(first.url, "to the first again");
    // Both stop at once: both sign a final head over the same three rows.
    const [a, b] = await Promise.all([first.stop("SIGTERM"), second.stop("SIGTERM")]);
    assertEquals([a.code, b.code], [0, 0]);
    // The second start may have found the first row unsigned and signed it: heads only grow.
    assertGrowing(await checkpointSizes(first.databaseUrl), [3]);
    const { key } = await (async () => {
      const rows = await query(first.databaseUrl, "SELECT public_key FROM checkpoints");
      return { key: String(rows[0].public_key) };
    })();
    const run = await review(first.databaseUrl, ["verify", "--trust", key]);
    assertStrictEquals(run.code, 0, run.stdout + run.stderr);
  } finally {
    await Deno.remove(first.directory, { recursive: true });
  }
});

Deno.test("on a real sqld, two Beacons sign heads that verify, one per tree size", async () => {
  const sqld = await startSqld();
  try {
    const seed = encodeSeed(crypto.getRandomValues(new Uint8Array(32)));
    const open = () =>
      createBeacon({ database: { url: sqld.url }, rateLimit: "off", signingKey: seed });
    // One after the other: two first starts migrating one fresh sqld at once race (see report).
    const first = open();
    await first.ready();
    const second = open();
    await second.ready();
    for (const [beacon, body] of [[first, "a"], [second, "b"], [first, "c"]] as const) {
      await submitInProcess(beacon, body);
    }
    await Promise.all([first.close(), second.close()]);
    // The second start may have found the first row unsigned and signed it: heads only grow.
    assertGrowing(await checkpointSizes(sqld.url), [3]);
    const [head] = await query(sqld.url, "SELECT root_hash FROM checkpoints WHERE tree_size = 3");
    assertStrictEquals(head.root_hash, await storedRoot(sqld.url));
    const key = (await signingKeyFromSeed(fromBase64url(seed))).publicKey;
    const run = await review(sqld.url, ["verify", "--trust", key]);
    assertStrictEquals(run.code, 0, run.stdout + run.stderr);
    assertMatch(run.stdout, /^no problems found$/m);
  } finally {
    await sqld.close();
  }
});

Deno.test("the tree-head timer never keeps a process alive", async () => {
  const directory = await Deno.makeTempDir({ prefix: "beacon-tree-head-" });
  try {
    // A Beacon opened and never closed, with a signing interval: the process must end by itself.
    const program = `
      import { createBeacon } from "./mod.ts";
      const beacon = createBeacon({
        database: { url: "file:${directory}/beacon.db" },
        checkpointIntervalMs: 1000,
      });
      await beacon.ready();
      console.log("ready");
    `;
    const child = new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", "-"],
      cwd: new URL("../../", import.meta.url).pathname,
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    const writer = child.stdin.getWriter();
    await writer.write(encoder.encode(program));
    await writer.close();
    // Only a guard against hanging the suite, not a measurement: the process ends long before.
    const guard = setTimeout(() => child.kill("SIGKILL"), 120_000);
    const output = await child.output();
    clearTimeout(guard);
    assertStrictEquals(output.code, 0, new TextDecoder().decode(output.stderr));
    assertStrictEquals(new TextDecoder().decode(output.stdout).trim(), "ready");
  } finally {
    await Deno.remove(directory, { recursive: true });
  }
});

Deno.test("the tree head is a status read: it spends the status budget, and HEAD works", async () => {
  const database = await tempDatabase();
  try {
    await fill(database, [text("one")], { treeHeads: true });
    const beacon = createBeacon({
      database: { url: database.url },
      rateLimit: "off",
      statusRateLimit: "1/1m",
    });
    try {
      const get = (method: string) =>
        beacon.fetch(new Request("http://127.0.0.1/beacon/0.1/tree-head", { method }), {
          remoteAddress: "192.0.2.9",
        });
      const head = await get("HEAD");
      assertStrictEquals(head.status, 200);
      assertStrictEquals(head.body, null);
      const limited = await get("GET");
      assertStrictEquals(limited.status, 429);
      assertStrictEquals((await limited.json()).error.budget, "status");
      const post = await get("POST");
      assertStrictEquals(post.status, 405);
      await post.body?.cancel();
    } finally {
      await beacon.close();
    }
  } finally {
    await Deno.remove(database.directory, { recursive: true });
  }
});

Deno.test("BEACON_CHECKPOINT_INTERVAL: durations from 1s to 24h, or off; anything else refused", () => {
  const interval = (value: string) =>
    configFromEnvironment((name) => name === "BEACON_CHECKPOINT_INTERVAL" ? value : undefined)
      .options.checkpointIntervalMs;
  assertStrictEquals(interval(""), undefined, "unset: the 2-second default");
  assertStrictEquals(interval("30s"), 30_000);
  assertStrictEquals(interval("5m"), 300_000);
  assertStrictEquals(interval("24h"), 86_400_000);
  assertStrictEquals(interval("off"), "off");
  for (const bad of ["0s", "25h", "5", "5 minutes", "1.5m", "-1m", "1d", "5M"]) {
    let message = "";
    try {
      interval(bad);
    } catch (error) {
      message = (error as Error).message;
    }
    assertMatch(message, /^Cannot start: BEACON_CHECKPOINT_INTERVAL must be "off" or a duration/);
  }
});

Deno.test("a database writer's rows in checkpoints: an older genuine head appended again or a garbage head is never served, and signing goes on across restarts", async () => {
  const env = { BEACON_LOG: "off", BEACON_CHECKPOINT_INTERVAL: "1s" };
  let server = await startServer({ env });
  const { directory, databaseUrl } = server;
  try {
    const { key, treeHead } = await discovery(server);
    await submit(server.url, "one");
    const one = await headCovering(treeHead, 1);
    await submit(server.url, "two");
    await submit(server.url, "three");
    const three = await headCovering(treeHead, 3);
    assertStrictEquals(three.treeSize, 3);
    // A rollback: the genuine head of size 1, appended again (the newest row now).
    const [old] = await query(
      databaseUrl,
      "SELECT * FROM checkpoints WHERE tree_size = ? ORDER BY seq LIMIT 1",
      one.treeSize,
    );
    await query(
      databaseUrl,
      "INSERT INTO checkpoints (tree_size, root_hash, created_at, signature, public_key) " +
        "VALUES (?, ?, ?, ?, ?)",
      Number(old.tree_size),
      String(old.root_hash),
      String(old.created_at),
      String(old.signature),
      String(old.public_key),
    );
    // Garbage under the Beacon's own key, more rows than any fixed number of candidates: huge
    // sizes, a zero root, random signatures of the right length.
    for (let i = 0; i < 40; i++) {
      const signature = btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(64))))
        .replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
      await query(
        databaseUrl,
        "INSERT INTO checkpoints (tree_size, root_hash, created_at, signature, public_key) " +
          "VALUES (?, ?, ?, ?, ?)",
        999999 + i,
        "0".repeat(64),
        new Date().toISOString(),
        i === 0 ? "AAAA" : signature,
        key,
      );
    }
    const served = await (await fetch(treeHead)).json() as PublishedHead;
    assertStrictEquals(served.treeSize, 3, "the largest head that verifies, not the newest row");
    assert(await verifyHead(key, served));
    assertStrictEquals((await server.stop("SIGTERM")).code, 0);

    // After a restart the garbage is still there, and the Beacon still signs past it.
    server = await startServer({ directory, env });
    const restarted = treeHead.replace(/^http:\/\/[^/]+/, server.url);
    await submit(server.url, "four");
    const four = await headCovering(restarted, 4);
    assertStrictEquals(four.treeSize, 4);
    assertStrictEquals(four.rootHash, await storedRoot(databaseUrl));
    assert(await verifyHead(key, four));
    assertStrictEquals(server.stderr().split('"TreeHeadIgnored"').length - 1, 40, "each once");
    assert(!server.stderr().includes("TreeHeadRefused"), server.stderr());
    assertStrictEquals((await server.stop("SIGTERM")).code, 0);
  } finally {
    await Deno.remove(directory, { recursive: true }).catch(() => {});
  }
});

/** Waits (bounded by the test's own timeout) until `stderr()` names `event`. */
async function logged(stderr: () => string, event: string): Promise<void> {
  while (!stderr().includes(event)) await new Promise((resolve) => setTimeout(resolve, 50));
}

Deno.test("a row the server never received: no head covers it or anything after it, the log names it, verify --trust names it, across a restart", async () => {
  const env = { BEACON_LOG: "off", BEACON_CHECKPOINT_INTERVAL: "1s" };
  let server = await startServer({ env });
  const { directory, databaseUrl } = server;
  try {
    const { key, treeHead } = await discovery(server);
    for (const body of ["one", "two", "three"]) await submit(server.url, body);
    await headCovering(treeHead, 3);
    // A database writer (plain SQL on the file) appends a row with a true digest of its bytes.
    const forged = encoder.encode("a submission nobody sent");
    await query(
      databaseUrl,
      "INSERT INTO submissions (id, context_id, received_at, surface, kind, content_type, " +
        "content, size, digest, source_hash) VALUES ('AZforgedforgedforgedforgedfo', 'c', ?, " +
        "'native', 'unstructured', 'text/plain; charset=utf-8', ?, ?, ?, 'x')",
      new Date().toISOString(),
      forged,
      forged.length,
      "sha256:" + toHex(await sha256(forged)),
    );
    await submit(server.url, "five, genuine, after the forged row");
    await logged(() => server.stderr(), '"TreeHeadWithheld"');
    assertMatch(
      server.stderr(),
      /^\{"event":"error","name":"TreeHeadWithheld","seq":4,"cause":"[^"]+","time":"[^"]+","count":1\}$/m,
    );
    const served = await (await fetch(treeHead)).json() as PublishedHead;
    assertStrictEquals(served.treeSize, 3, "the head stops before the forged row");
    assertStrictEquals((await server.stop("SIGTERM")).code, 0);
    assertStrictEquals(Math.max(...await checkpointSizes(databaseUrl)), 3, "not at the stop");
    assertStrictEquals(server.stderr().split('"TreeHeadWithheld"').length - 1, 1, "logged once");

    server = await startServer({ directory, env });
    await submit(server.url, "six");
    await logged(() => server.stderr(), '"TreeHeadWithheld"');
    assertStrictEquals((await server.stop("SIGTERM")).code, 0);
    assertStrictEquals(Math.max(...await checkpointSizes(databaseUrl)), 3, "nor after a restart");
    const run = await review({ url: databaseUrl, directory } as TempDatabase, [
      "verify",
      "--trust",
      key,
    ]);
    assertStrictEquals(run.code, 1, run.stdout);
    assertMatch(
      run.stdout,
      /^PROBLEM: row 4 \(receipt AZforgedforgedforgedforgedfo\): no intake signature is stored/m,
    );
    assertMatch(run.stdout, /^1 problem found$/m, "rows 5 and 6 carry their own signatures");
  } finally {
    await Deno.remove(directory, { recursive: true }).catch(() => {});
  }
});

Deno.test("a fork: rows and their heads replaced by a writer are never signed again, and verify --trust names each", async () => {
  const { database, key, seed } = await signedStore();
  try {
    const beacon = createBeacon({
      database: { url: database.url },
      rateLimit: "off",
      signingKey: seed,
    });
    await beacon.ready();
    for (const body of ["four", "five", "six"]) await submitInProcess(beacon, body);
    await beacon.close();
    assertStrictEquals(Math.max(...await checkpointSizes(database.url)), 6);
    // The writer drops the triggers, deletes rows 4 to 6, their signatures and every head over
    // them, and inserts three rows of its own.
    for (const table of ["submissions", "checkpoints", "receipt_signatures", "receipt_batches"]) {
      await query(database.url, `DROP TRIGGER IF EXISTS ${table}_no_delete`);
    }
    await query(database.url, "DELETE FROM checkpoints WHERE tree_size > 3");
    await query(database.url, "DELETE FROM receipt_signatures WHERE seq > 3");
    await query(database.url, "DELETE FROM receipt_batches WHERE last_seq > 3");
    await query(database.url, "DELETE FROM submissions WHERE seq > 3");
    for (const n of [4, 5, 6]) {
      const bytes = encoder.encode(`other ${n}`);
      await query(
        database.url,
        "INSERT INTO submissions (seq, id, context_id, received_at, surface, kind, content_type, " +
          "content, size, digest, source_hash) VALUES (?, ?, 'c', ?, 'native', 'unstructured', " +
          "'text/plain; charset=utf-8', ?, ?, ?, 'x')",
        n,
        `AZother${n}`.padEnd(28, "x"),
        new Date().toISOString(),
        bytes,
        bytes.length,
        "sha256:" + toHex(await sha256(bytes)),
      );
    }
    const errors: string[] = [];
    const restarted = createBeacon({
      database: { url: database.url },
      rateLimit: "off",
      signingKey: seed,
      onError: (error) => errors.push((error as Error).name),
    });
    await restarted.ready();
    await restarted.close();
    assertEquals(errors, ["TreeHeadWithheld"]);
    assertStrictEquals(
      Math.max(...await checkpointSizes(database.url)),
      3,
      "no second size-6 root",
    );
    const run = await review(database, ["verify", "--trust", key]);
    assertStrictEquals(run.code, 1, run.stdout);
    for (const n of [4, 5, 6]) {
      assertMatch(
        run.stdout,
        new RegExp(`^PROBLEM: row ${n} \\(receipt AZother${n}x+\\): no intake`, "m"),
      );
    }
  } finally {
    await Deno.remove(database.directory, { recursive: true });
  }
});

Deno.test("consistency proofs: every pair of heads a monitor saw verifies over HTTP, across tiles; a changed row changes no proof", async () => {
  const database = await tempDatabase();
  const seed = encodeSeed(crypto.getRandomValues(new Uint8Array(32)));
  const beacon = createBeacon({
    database: { url: database.url },
    rateLimit: "off",
    statusRateLimit: "off",
    signingKey: seed,
    checkpointIntervalMs: 20,
  });
  const get = (path: string) =>
    beacon.fetch(new Request("http://127.0.0.1" + path), { remoteAddress: "192.0.2.9" });
  const headAt = async (size: number): Promise<PublishedHead> => {
    while (true) {
      const response = await get("/beacon/0.1/tree-head");
      if (response.status === 200) {
        const head = await response.json() as PublishedHead;
        if (head.treeSize === size) return head;
      } else await response.body?.cancel();
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  };
  try {
    await beacon.ready();
    const heads: PublishedHead[] = [];
    const key = (await signingKeyFromSeed(fromBase64url(seed))).publicKey;
    // Heads at sizes 0 (the first start), 1, 3, 256, 300: a chunk of 256 is complete at 256.
    heads.push(await headAt(0));
    let size = 0;
    for (const target of [1, 3, 256, 300]) {
      while (size < target) await submitInProcess(beacon, `submission ${++size}`);
      heads.push(await headAt(target));
    }
    assertEquals(heads.map((head) => head.treeSize), [0, 1, 3, 256, 300]);
    for (const head of heads) assert(await verifyHead(key, head));
    const document = await (await get("/.well-known/autonomous-agent")).json();
    assertStrictEquals(
      document.endpoints.treeHeadConsistency,
      "http://127.0.0.1/beacon/0.1/tree-head/consistency",
    );
    for (const older of heads) {
      for (const newer of heads.filter((head) => head.treeSize >= older.treeSize)) {
        const response = await get(
          `/beacon/0.1/tree-head/consistency?first=${older.treeSize}&second=${newer.treeSize}`,
        );
        assertStrictEquals(response.status, 200);
        const proof = await response.json();
        assertEquals(Object.keys(proof), ["first", "second", "proof"]);
        assert(
          verifyConsistency(
            older.treeSize,
            newer.treeSize,
            fromHex(older.rootHash)!,
            fromHex(newer.rootHash)!,
            proof.proof.map((hash: string) => fromHex(hash)!),
          ),
          `${older.treeSize} → ${newer.treeSize}`,
        );
      }
    }
    for (
      const query of [
        "first=1&second=301",
        "first=4&second=3",
        "first=01&second=3",
        "second=3",
        "first=-1&second=3",
        "first=1&first=2&second=3",
        "first=1&second=3&second=3",
      ]
    ) {
      const response = await get(`/beacon/0.1/tree-head/consistency?${query}`);
      assertStrictEquals(response.status, 404, query);
      assertStrictEquals((await response.json()).error.code, "not_found");
    }
    // A writer changes a row in the first chunk: the server no longer has a true proof to give.
    await query(database.url, "DROP TRIGGER submissions_only_redaction");
    await query(
      database.url,
      "UPDATE submissions SET digest = ? WHERE seq = 10",
      "sha256:" + "1".repeat(64),
    );
    // Proofs come from the tiles the heads were signed with: still true of the signed tree.
    const changed = await get("/beacon/0.1/tree-head/consistency?first=3&second=300");
    assertStrictEquals(changed.status, 200);
    const [three, last] = [heads[2], heads[4]];
    assert(
      verifyConsistency(
        3,
        300,
        fromHex(three.rootHash)!,
        fromHex(last.rootHash)!,
        (await changed.json()).proof.map((hash: string) => fromHex(hash)!),
      ),
    );
  } finally {
    await beacon.close();
    await Deno.remove(database.directory, { recursive: true });
  }
});

Deno.test("a row this process acknowledged and a writer then changed is not covered: the comparison with what was committed holds it back", async () => {
  const database = await tempDatabase();
  const seed = encodeSeed(crypto.getRandomValues(new Uint8Array(32)));
  const errors: string[] = [];
  // Heads only at the start (the empty tree) and at close: the change lands between the two.
  const beacon = createBeacon({
    database: { url: database.url },
    rateLimit: "off",
    signingKey: seed,
    checkpointIntervalMs: 3_600_000,
    onError: (error) => errors.push((error as Error).name),
  });
  try {
    await beacon.ready();
    for (const body of ["one", "two", "three"]) await submitInProcess(beacon, body);
    await query(database.url, "DROP TRIGGER submissions_only_redaction");
    await query(
      database.url,
      "UPDATE submissions SET received_at = ? WHERE seq = 2",
      "2020-01-01T00:00:00.000Z",
    );
    await beacon.close();
    assertEquals(errors, ["TreeHeadWithheld"]);
    assertEquals(await checkpointSizes(database.url), [0, 1], "the head stops before row 2");
  } finally {
    await Deno.remove(database.directory, { recursive: true });
  }
});

Deno.test("rows a batch committed around rows the key check skipped are each compared with their own committed members", async () => {
  const database = await tempDatabase();
  const db = await Database.open({ url: database.url });
  const key = await signingKeyFromSeed(crypto.getRandomValues(new Uint8Array(32)));
  const committed: SignedFields[] = [];
  const store = new SubmissionStore(db, {
    signReceipts: (receipts) => signReceipts(key, receipts),
    onCommitted: (_seqs, receipts) => committed.push(...receipts),
  });
  try {
    // Four rows, one commit each: seqs 1 to 4 with their receipts' members.
    for (const id of ["a", "b", "c", "d"]) await store.append(newSubmission(id));
    const [one, two, three, four] = committed;
    const skipped = { ...one, id: "skipped" }; // a row the key check skipped was signed too
    const signer = (told: [number[], SignedFields[]][]) => {
      const errors: string[] = [];
      const made = new LogSigner({
        origin: "test.beacon.invalid/beacon/0.1/log",
        statements: db.statements,
        key,
        now: Date.now,
        onIgnored: (error) => errors.push(`${error.name} ${error.seq}`),
      });
      for (const [seqs, receipts] of told) made.committed(seqs, receipts);
      return { made, errors };
    };
    // Told the receipts out of place, a signer judges the rows that read otherwise by their
    // stored signatures, as the plain path does: the same verdicts, only slower.
    const wrong = signer([[[1, 2], [two, one]]]);
    assertEquals((await wrong.made.sign())?.treeSize, 4);
    assertEquals(wrong.errors, []);
    // Each run of a batch starts at its own row's members, whatever was skipped before it.
    const right = signer([
      [[0, 1, 0, 2, 3], [skipped, one, skipped, two, three]],
      [[0, 4], [skipped, four]],
    ]);
    assertEquals(await right.made.sign(), undefined, "head 4 is signed already");
    assertEquals((await right.made.latest())?.treeSize, 4);
    assertEquals(right.errors, []);
  } finally {
    await store.close();
    await Deno.remove(database.directory, { recursive: true });
  }
});

Deno.test("a row dated in the future is covered by no head until its time, even when its signature verifies", async () => {
  const database = await tempDatabase();
  const db = await Database.open({ url: database.url });
  const key = await signingKeyFromSeed(crypto.getRandomValues(new Uint8Array(32)));
  const store = new SubmissionStore(db, {
    signReceipts: (receipts) => signReceipts(key, receipts),
  });
  try {
    const future = Date.now() + 365 * 24 * 3600_000;
    await store.append(newSubmission("a", { receivedAt: new Date().toISOString() }));
    // Signed as the intake signs, by a process whose clock ran a year ahead.
    await store.append(newSubmission("b", { receivedAt: new Date(future).toISOString() }));
    const signerAt = (now: number) => {
      const errors: string[] = [];
      const signer = new LogSigner({
        origin: "test.beacon.invalid/beacon/0.1/log",
        statements: db.statements,
        key,
        now: () => now,
        onIgnored: (error) => errors.push(`${error.name} ${error.seq} ${error.message}`),
      });
      return { signer, errors };
    };
    const today = signerAt(Date.now());
    assertEquals((await today.signer.sign())?.treeSize, 1, "the head stops before row 2");
    assertEquals(today.errors.length, 1);
    assertMatch(today.errors[0], /^TreeHeadWithheld 2 .*dated in the future/);
    const then = signerAt(future);
    assertEquals((await then.signer.sign())?.treeSize, 2, "covered once its time has come");
    assertEquals(then.errors, []);
  } finally {
    await store.close();
    await Deno.remove(database.directory, { recursive: true });
  }
});

Deno.test("a genuine row that takes the seq of a row a writer deleted is covered: it is judged by its own signature", async () => {
  const database = await tempDatabase();
  const seed = encodeSeed(crypto.getRandomValues(new Uint8Array(32)));
  const errors: string[] = [];
  // Heads only at the start (the empty tree) and at close: the deletion lands between the two.
  const beacon = createBeacon({
    database: { url: database.url },
    rateLimit: "off",
    signingKey: seed,
    checkpointIntervalMs: 3_600_000,
    onError: (error) => errors.push((error as Error).name),
  });
  try {
    await beacon.ready();
    for (const body of ["one", "two", "three"]) await submitInProcess(beacon, body);
    await query(database.url, "DROP TRIGGER submissions_no_delete");
    await query(database.url, "DELETE FROM submissions WHERE seq = 3");
    // SQLite numbers the next row max(seq) + 1: the deleted row's seq, now a genuine row's.
    await submitInProcess(beacon, "four, stored as row 3");
    const [row] = await query(database.url, "SELECT seq FROM submissions WHERE seq = 3");
    assertStrictEquals(Number(row.seq), 3);
    await beacon.close();
    assertEquals(errors, []);
    assertEquals(await checkpointSizes(database.url), [0, 3], "the final head covers row 3");
  } finally {
    await Deno.remove(database.directory, { recursive: true });
  }
});
