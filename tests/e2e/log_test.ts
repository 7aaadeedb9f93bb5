/**
 * The signed log from outside, as a stranger checks it: the discovery document's `log`, the C2SP
 * checkpoint, the tiles, a receipt's status index and inclusion proof, and consistency between
 * checkpoints. Every check is made twice: with this project's WebCrypto-only code, and with an
 * implementation nobody here wrote, Go's `golang.org/x/mod/sumdb/note` and `sumdb/tlog`
 * (tests/go/tlogcheck), which fetches every tile over HTTP and authenticates it against the
 * checkpoint.
 *
 * Runs through a real Deno server restarted mid-log, two real Deno servers on one real sqld, and
 * workerd signing through its `scheduled` handler, as a Cron Trigger runs it.
 *
 * @module
 */
import { createClient } from "@libsql/client";
import { fromHex, hex } from "../../src/bytes.ts";
import { submissionLeafHash } from "../../src/signing/merkle.ts";
import { openCheckpointNote } from "../../src/signing/note.ts";
import { verifyInclusion } from "../../src/signing/tiles.ts";
import { startRuntime } from "../../scripts/runtimes.ts";
import { submitReceipt } from "../support/tree_heads.ts";
import { assert, assertEquals, assertMatch, assertStrictEquals } from "../support/assert.ts";
import { runTlogCheck } from "../support/go_tlog.ts";
import { startServer } from "../support/server.ts";
import { startSqld } from "../support/sqld.ts";

interface Receipt {
  id: string;
  receivedAt: string;
  digest: string;
}

interface LogFacts {
  url: string;
  origin: string;
  verifierKey: string;
  publicKey: string;
}

async function discover(url: string): Promise<LogFacts> {
  const document = await (await fetch(url + "/.well-known/autonomous-agent")).json();
  assertStrictEquals(document.endpoints.log, document.log.url);
  return { ...document.log, publicKey: document.receiptSigning.publicKey };
}

const submit = (url: string, text: string): Promise<Receipt> => submitReceipt(url, text);

/** The newest checkpoint, once one covers `size` leaves, verified under the log's key. */
async function checkpointCovering(log: LogFacts, base: string, size: number) {
  while (true) {
    const response = await fetch(base + "/beacon/0.1/log/checkpoint");
    if (response.status === 200) {
      assertStrictEquals(response.headers.get("content-type"), "text/plain; charset=utf-8");
      assertMatch(response.headers.get("cache-control") ?? "", /max-age=5/);
      const note = await response.text();
      const opened = await openCheckpointNote(note, log.origin, log.publicKey);
      assert(opened !== undefined, `a checkpoint that verifies: ${note}`);
      if (opened.size >= size) return { ...opened, note };
    } else {
      assertStrictEquals(response.status, 404);
      await response.body?.cancel();
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** The leaf of a receipt at an index: the receipt's three members and its position. */
function leafOf(receipt: Receipt, index: number): Uint8Array {
  return submissionLeafHash({
    seq: index + 1,
    id: receipt.id,
    receivedAt: receipt.receivedAt,
    digest: receipt.digest,
  });
}

/**
 * Checks receipts against the log at `base` as a submitter would (status index, inclusion proof
 * against the newest checkpoint, verified with WebCrypto), then hands the same proofs, a
 * consistency proof from `earlier`, and the whole log's tiles to Go.
 */
async function checkLog(
  base: string,
  log: LogFacts,
  receipts: Receipt[],
  earlier: { size: number; root: Uint8Array },
) {
  const checkpoint = await checkpointCovering(log, base, receipts.length);
  const picks = [0, 1, Math.floor(receipts.length / 2), receipts.length - 1];
  const inclusion = [];
  for (const at of picks) {
    const receipt = receipts[at];
    const status = await (await fetch(`${base}/beacon/0.1/submissions/${receipt.id}`)).json();
    const index = status.log.index;
    const response = await fetch(
      `${base}/beacon/0.1/submissions/${receipt.id}/inclusion?size=${checkpoint.size}`,
    );
    const answer = await response.json();
    assertStrictEquals(response.status, 200, JSON.stringify(answer));
    assertEquals([answer.index, answer.treeSize], [index, checkpoint.size]);
    const leaf = leafOf(receipt, index);
    const proof = answer.proof.map((hash: string) => fromHex(hash)!);
    assert(verifyInclusion(index, checkpoint.size, leaf, proof, checkpoint.root));
    inclusion.push({
      index,
      treeSize: checkpoint.size,
      leafHash: hex(leaf),
      proof: answer.proof,
    });
  }
  const consistency = await (await fetch(
    `${base}/beacon/0.1/tree-head/consistency?first=${earlier.size}&second=${checkpoint.size}`,
  )).json();
  const go = await runTlogCheck({
    prefix: log.url.replace(/^https?:\/\/[^/]+/, base),
    verifierKey: log.verifierKey,
    inclusion,
    consistency: [{
      first: earlier.size,
      firstRoot: hex(earlier.root),
      second: checkpoint.size,
      proof: consistency.proof,
    }],
  });
  assertStrictEquals(go.code, 0, go.stdout + go.stderr);
  assertMatch(go.stdout, new RegExp(`tree hash over ${checkpoint.size} leaves matches`));
  return checkpoint;
}

/** The tiled heads' `(from_size, tree_size)` in order: one chain, never two heads for a size. */
async function chain(databaseUrl: string): Promise<[number, number][]> {
  const client = createClient({ url: databaseUrl, intMode: "number" });
  try {
    const rows = (await client.execute(
      "SELECT from_size, tree_size FROM checkpoints WHERE note_signature IS NOT NULL " +
        "ORDER BY tree_size",
    )).rows;
    const heads = rows.map((row) =>
      [Number(row.from_size), Number(row.tree_size)] as [number, number]
    );
    for (let i = 1; i < heads.length; i++) {
      assertStrictEquals(heads[i][0], heads[i - 1][1], `head ${i} extends the one before`);
    }
    return heads;
  } finally {
    client.close();
  }
}

const FAST_HEADS = { BEACON_CHECKPOINT_INTERVAL: "1s", BEACON_LOG: "off" };

Deno.test("a receipt checks against the checkpoint, the tiles verify with Go's tlog, and a restarted server continues the log from its tiles", async () => {
  let server = await startServer({ env: FAST_HEADS });
  const { directory } = server;
  try {
    const log = await discover(server.url);
    assertMatch(log.origin, /^[0-9a-f]{16}\.beacon\.invalid\/beacon\/0\.1\/log$/);
    const receipts: Receipt[] = [];
    for (let i = 0; i < 10; i++) receipts.push(await submit(server.url, `early ${i}`));
    const early = await checkpointCovering(log, server.url, 10);
    // Past one full tile, so that a level-1 tile exists.
    for (let i = 10; i < 300; i++) receipts.push(await submit(server.url, `submission ${i}`));
    await checkLog(server.url, log, receipts, early);

    // Another process: it continues from the newest head's tiles (a full reread would find the
    // same root, so the chain of heads is what shows it: each new head starts where one ended).
    assertStrictEquals((await server.stop("SIGTERM")).code, 0);
    server = await startServer({ directory, env: FAST_HEADS });
    const again = await discover(server.url);
    assertEquals(again.origin, log.origin, "the origin is the log's, recorded once");
    for (let i = 300; i < 320; i++) receipts.push(await submit(server.url, `after restart ${i}`));
    await checkLog(server.url, log, receipts, early);
    const heads = await chain(server.databaseUrl);
    assertEquals(heads.at(-1)![1], 320);
    // A tile named with another spelling, or not yet covered, is no tile.
    for (
      const path of ["tile/0/0", "tile/0/x000/001", "tile/0/001.p/65", "tile/0/002", "tile/9/000"]
    ) {
      const response = await fetch(`${server.url}/beacon/0.1/log/${path}`);
      assertStrictEquals(response.status, 404, path);
      await response.body?.cancel();
    }
    const tile = await fetch(`${server.url}/beacon/0.1/log/tile/0/000`);
    assertStrictEquals(tile.headers.get("content-type"), "application/octet-stream");
    assertMatch(tile.headers.get("cache-control") ?? "", /immutable/);
    assertStrictEquals((await tile.arrayBuffer()).byteLength, 256 * 32);
  } finally {
    await server.stop("SIGTERM");
    await Deno.remove(directory, { recursive: true }).catch(() => {});
  }
});

Deno.test("two servers on one sqld keep one chain of heads, and Go verifies the log", async () => {
  const sqld = await startSqld();
  const env = {
    ...FAST_HEADS,
    BEACON_DATABASE_URL: sqld.url,
    BEACON_PUBLIC_URL: "https://beacon.example",
  };
  const servers = [await startServer({ env }), await startServer({ env })];
  try {
    const log = await discover(servers[0].url);
    assertStrictEquals(log.origin, "beacon.example/beacon/0.1/log");
    const receipts: Receipt[] = [];
    for (let i = 0; i < 4; i++) receipts.push(await submit(servers[i % 2].url, `first ${i}`));
    const early = await checkpointCovering(log, servers[1].url, 4);
    for (let i = 4; i < 280; i++) receipts.push(await submit(servers[i % 2].url, `both ${i}`));
    for (const server of servers) await checkLog(server.url, log, receipts, early);
    const heads = await chain(sqld.url);
    assertEquals(new Set(heads.map(([, size]) => size)).size, heads.length, "one head per size");
  } finally {
    for (const server of servers) await server.stop("SIGTERM");
    for (const server of servers) await Deno.remove(server.directory, { recursive: true });
    await sqld.close();
  }
});

Deno.test("workerd signs the log when its scheduled handler runs, continuing from the stored head", async () => {
  const sqld = await startSqld();
  try {
    const server = await startRuntime("workers", {
      PORT: "0",
      BEACON_HOSTNAME: "127.0.0.1",
      BEACON_DATABASE_URL: sqld.url,
      BEACON_RATE_LIMIT: "off",
      BEACON_STATUS_RATE_LIMIT: "off",
      BEACON_LOG: "off",
    });
    try {
      const log = await discover(server.url);
      const receipts: Receipt[] = [];
      for (let i = 0; i < 3; i++) receipts.push(await submit(server.url, `worker ${i}`));
      const none = await fetch(server.url + "/beacon/0.1/log/checkpoint");
      assertStrictEquals(none.status, 404, "nothing signs between scheduled runs");
      await none.body?.cancel();
      const run = async () => {
        const answer = await fetch(server.url + "/cdn-cgi/handler/scheduled");
        assertStrictEquals(answer.status, 200, await answer.text());
      };
      await run();
      const early = await checkpointCovering(log, server.url, 3);
      for (let i = 3; i < 260; i++) receipts.push(await submit(server.url, `worker ${i}`));
      await run();
      await checkLog(server.url, log, receipts, early);
      assertEquals((await chain(sqld.url)).map(([, size]) => size), [3, 260]);
    } finally {
      await server.stop("SIGTERM");
    }
  } finally {
    await sqld.close();
  }
});
