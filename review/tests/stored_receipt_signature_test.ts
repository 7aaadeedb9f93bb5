/**
 * Receipt signatures are made at intake and stored with their rows, and the
 * review tools report what the stored signature proves against the published key; they never
 * sign a receipt. Through the real server on a temporary database, the real `review show`, the
 * real console over HTTP, a database upgraded from version 8, and a real sqld.
 */
import { createClient } from "@libsql/client";
import { receiptSignatureOf, signReceipts, verifyReceipt } from "../../src/signing/receipt.ts";
import { hex } from "../../src/bytes.ts";
import {
  signatureColumns,
  signatureJoin,
  signedFieldsOf,
  storedSignatureOf,
} from "../../src/store/mod.ts";
import { encodeSeed, generateSeed, signingKeyFromSeed } from "../../src/signing/key.ts";
import { assert, assertEquals, assertMatch, assertRejects } from "../../tests/support/assert.ts";
import { serveBeacon } from "../../tests/support/in_process.ts";
import { rawSql as raw, review, startConsole } from "./support.ts";
import { migrateTo } from "../../tests/support/migrations.ts";
import { startSqld } from "../../tests/support/sqld.ts";

const KEY = encodeSeed(generateSeed());
/** The line for a row without a stored signature, as `show` may wrap it. */
const NONE = new RegExp(
  "no intake signature stored (a row written before this version, or not written through the Beacon)"
    .replace(/[()]/g, "\\$&").replaceAll(" ", "\\s+"),
);

/** A row as a database writer would insert it: plain SQL, never received. */
function forgedRow(url: string, id: string): Promise<void> {
  return raw(
    url,
    `INSERT INTO submissions (id, context_id, received_at, surface, kind, content_type, content,
      size, digest, source_hash) VALUES (?, 'ctx', '2026-01-01T00:00:00.000Z', 'native',
      'unstructured', 'text/plain; charset=utf-8', X'6869', 2,
      'sha256:8f434346648f6b96df89dda901c5176b10a6d83961dd3c1ac88b59b2dc327aa4', 'src')`,
    id,
  );
}

async function submit(url: string, body: string): Promise<Record<string, unknown>> {
  const response = await fetch(url + "/beacon/0.1/submissions", {
    method: "POST",
    headers: { "content-type": "text/plain; charset=utf-8" },
    body,
  });
  assertEquals(response.status, 202);
  return (await response.json()).receipt;
}

/** What a receipt carries of its signature: `signature`, and `batch` for a batch signature. */
function signatureOf(receipt: Record<string, unknown>): Record<string, unknown> {
  return receipt.batch === undefined
    ? { signature: receipt.signature }
    : { signature: receipt.signature, batch: receipt.batch };
}

/** The stored signature of `id`, in the receipt's own members. */
async function stored(
  query: (sql: string, args?: (string | number)[]) => Promise<Record<string, unknown>[]>,
  id: string,
): Promise<Record<string, unknown> | undefined> {
  const [row] = await query(
    `SELECT s.id, s.received_at, s.digest, s.size, s.kind, ${signatureColumns("s")} ` +
      `FROM submissions s ${signatureJoin("s")} WHERE s.id = ?`,
    [id],
  );
  const signature = row === undefined
    ? undefined
    : receiptSignatureOf(signedFieldsOf(row), storedSignatureOf(row));
  return signature === undefined ? undefined : { ...signature };
}

/** The rows that have a stored signature, and the batch rows holding them (migration 11). */
async function signedCounts(
  query: (sql: string, args?: (string | number)[]) => Promise<Record<string, unknown>[]>,
): Promise<{ rows: number; batches: number }> {
  const [{ rows, batches }] = await query(
    `SELECT (SELECT count(*) FROM submissions s ${signatureJoin("s")} WHERE ` +
      "receipt_signatures.seq IS NOT NULL OR receipt_batches.seq IS NOT NULL) AS rows, " +
      "(SELECT count(*) FROM receipt_batches) AS batches",
  );
  return { rows: Number(rows), batches: Number(batches) };
}

Deno.test("receipts of concurrent submissions are stored byte for byte as they were sent", async () => {
  const served = await serveBeacon({ signingKey: KEY });
  try {
    const lone = await submit(served.url, "a lone submission");
    const receipts = await Promise.all(
      Array.from({ length: 40 }, (_, i) => submit(served.url, `concurrent ${i}`)),
    );
    const all = [lone, ...receipts];
    assert(all.some((receipt) => receipt.batch !== undefined), "some were signed in a batch");
    assertEquals(lone.batch, undefined, "a lone receipt is in the single form");
    for (const receipt of all) {
      assertEquals(await stored(served.query, String(receipt.id)), signatureOf(receipt));
    }
    // One signature row per commit, not per receipt.
    const counts = await signedCounts(served.query);
    assertEquals(counts.rows, all.length);
    assert(counts.batches < all.length, `${counts.batches} batch rows for ${all.length} receipts`);
    assertEquals(await served.count("receipt_signatures"), 0);
    // The table is append-only: a stored signature cannot be changed or removed.
    await assertRejects(
      () => raw(served.databaseUrl, "UPDATE receipt_batches SET signature = 'x'"),
      Error,
      "append-only",
    );
    await assertRejects(
      () => raw(served.databaseUrl, "DELETE FROM receipt_batches"),
      Error,
      "append-only",
    );
  } finally {
    await served.close();
  }
});

Deno.test("on the writer thread too, each receipt's signature is stored with its row", async () => {
  const directory = await Deno.makeTempDir({ prefix: "beacon-test-" });
  const url = `file:${directory}/beacon.db`;
  try {
    const served = await serveBeacon({ signingKey: KEY, database: { url, writerThread: true } });
    let receipts: Record<string, unknown>[];
    try {
      receipts = await Promise.all(
        Array.from({ length: 30 }, (_, i) => submit(served.url, `threaded ${i}`)),
      );
    } finally {
      await served.close();
    }
    const reader = createClient({ url });
    try {
      const query = async (sql: string, args: (string | number)[] = []) =>
        (await reader.execute({ sql, args })).rows as unknown as Record<string, unknown>[];
      for (const receipt of receipts) {
        assertEquals(await stored(query, String(receipt.id)), signatureOf(receipt));
      }
    } finally {
      reader.close();
    }
  } finally {
    await Deno.remove(directory, { recursive: true }).catch(() => {});
  }
});

Deno.test("a replayed receipt carries the first receipt's stored signature", async () => {
  const served = await serveBeacon({ signingKey: KEY });
  try {
    const send = () =>
      fetch(served.url + "/beacon/0.1/submissions", {
        method: "POST",
        headers: { "content-type": "text/plain; charset=utf-8", "idempotency-key": "retry-1" },
        body: "sent twice",
      }).then((response) => response.json());
    const first = (await send()).receipt;
    const second = (await send()).receipt;
    assertEquals(second, first);
    assertEquals(await stored(served.query, String(first.id)), { signature: first.signature });
    assertEquals(await served.count("receipt_batches"), 1);
  } finally {
    await served.close();
  }
});

Deno.test("show and the console report a stored signature, a missing one and a forged one", async () => {
  const served = await serveBeacon({ signingKey: KEY });
  const discovery = await (await fetch(served.url + "/.well-known/autonomous-agent")).json();
  const publicKey = String(discovery.receiptSigning.publicKey);
  const genuine = await submit(served.url, "received through the Beacon");
  const url = served.databaseUrl;
  try {
    const unsigned = "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAA";
    const forged = "BBBBBBBBBBBBBBBBBBBBBBBBBBBBBB";
    // Never received: inserted with plain SQL, as a database writer would.
    await forgedRow(url, unsigned);
    await forgedRow(url, forged);
    // A signature for a row that has none, invented without the key: it does not verify.
    await raw(
      url,
      "INSERT INTO receipt_signatures (seq, signature) SELECT seq, ? FROM submissions WHERE id = ?",
      String(genuine.signature),
      forged,
    );
    const env = { BEACON_SIGNING_KEY: KEY };
    const good = await review(url, ["show", String(genuine.id)], env);
    assertEquals(good.code, 0, good.stderr);
    assertMatch(
      good.stdout,
      /receipt sig +signed at intake \(single form\); verifies against the published key\s+sha256:[0-9a-f]{64}/,
    );
    const none = await review(url, ["show", unsigned], env);
    assertEquals(none.code, 0, none.stderr);
    assertMatch(none.stdout, NONE);
    assert(!/verifies against/.test(none.stdout), "no signature is made up for it");
    const bad = await review(url, ["show", forged], env);
    assertMatch(bad.stdout, /does NOT verify against the published key/);
    // The published key given with --trust; without any key, the signature is not checked.
    assertMatch(
      (await review(url, ["show", String(genuine.id), "--trust", publicKey])).stdout,
      /verifies against/,
    );
    assertMatch(
      (await review(url, ["show", String(genuine.id), "--trust", "A".repeat(43)])).stdout,
      /does NOT verify/,
    );
    assertMatch(
      (await review(url, ["show", String(genuine.id)])).stdout,
      /not checked: no published key is known/,
    );

    const console = await startConsole(url, env);
    try {
      const item = async (id: string) => {
        const response = await fetch(`${console.origin}/api/item?id=${id}`, {
          headers: { authorization: `Bearer ${await console.session()}` },
        });
        assertEquals(response.status, 200);
        return (await response.json()).integrity;
      };
      const ok = await item(String(genuine.id));
      assertEquals([ok.signatureState, ok.signatureVerifies, ok.signature, ok.publicKey], [
        "verifies",
        true,
        genuine.signature,
        publicKey,
      ]);
      const missing = await item(unsigned);
      assertEquals([missing.signatureState, missing.signature, missing.signatureVerifies], [
        "none",
        null,
        null,
      ]);
      assertMatch(missing.signatureReport, NONE);
      const wrong = await item(forged);
      assertEquals([wrong.signatureState, wrong.signatureVerifies], ["does-not-verify", false]);
    } finally {
      await console.stop();
    }
  } finally {
    await served.close();
  }
});

Deno.test("migration 9 upgrades a version-8 store: old rows have no intake signature", async () => {
  const directory = await Deno.makeTempDir({ prefix: "beacon-test-" });
  const url = `file:${directory}/beacon.db`;
  try {
    const client = createClient({ url });
    await migrateTo(client, 8);
    client.close();
    await forgedRow(url, "CCCCCCCCCCCCCCCCCCCCCCCCCCCCCC");
    const served = await serveBeacon({ signingKey: KEY, database: { url } });
    let receipt: Record<string, unknown>;
    try {
      receipt = await submit(served.url, "after the upgrade");
    } finally {
      await served.close(); // removes its own folder, not this one
    }
    const reader = createClient({ url });
    try {
      const query = async (sql: string, args: (string | number)[] = []) =>
        (await reader.execute({ sql, args })).rows as unknown as Record<string, unknown>[];
      assertEquals(await stored(query, String(receipt.id)), { signature: receipt.signature });
    } finally {
      reader.close();
    }
    const old = await review(url, ["show", "CCCCCCCCCCCC"], { BEACON_SIGNING_KEY: KEY });
    assertEquals(old.code, 0, old.stderr);
    assertMatch(old.stdout, NONE);
  } finally {
    await Deno.remove(directory, { recursive: true }).catch(() => {});
  }
});

Deno.test("a remote store (sqld) stores each receipt signature in the commit of its row", async () => {
  const sqld = await startSqld();
  try {
    const served = await serveBeacon({ signingKey: KEY, database: { url: sqld.url } });
    try {
      const discovery = await (await fetch(served.url + "/.well-known/autonomous-agent")).json();
      const publicKey = String(discovery.receiptSigning.publicKey);
      const keyed = () =>
        fetch(served.url + "/beacon/0.1/submissions", {
          method: "POST",
          headers: { "content-type": "text/plain; charset=utf-8", "idempotency-key": "remote" },
          body: "keyed",
        }).then((response) => response.json());
      const first = (await keyed()).receipt;
      const receipts = await Promise.all(
        Array.from({ length: 20 }, (_, i) => submit(served.url, `remote ${i}`)),
      );
      assertEquals((await keyed()).receipt, first, "a replay carries the stored signature");
      const client = createClient({ url: sqld.url });
      try {
        const query = async (sql: string, args: (string | number)[] = []) =>
          (await client.execute({ sql, args })).rows as unknown as Record<string, unknown>[];
        for (const receipt of [first, ...receipts]) {
          assertEquals(await stored(query, String(receipt.id)), signatureOf(receipt));
          assert(
            await verifyReceipt(
              publicKey,
              receipt as never,
              String(receipt.signature),
              receipt.batch as never,
            ),
            "the stored signature verifies",
          );
        }
        assertEquals((await signedCounts(query)).rows, 21);
      } finally {
        client.close();
      }
    } finally {
      await served.close();
    }
  } finally {
    await sqld.close();
  }
});

Deno.test("a seq handed out again after a writer deleted the newest row: intake goes on, and the new row's own batch is the one read", async () => {
  const served = await serveBeacon({ signingKey: KEY });
  try {
    await submit(served.url, "first");
    await submit(served.url, "second, then deleted");
    // As `sqlite3` would: foreign keys off, the trigger dropped, the row deleted, its signature kept.
    const writer = createClient({ url: served.databaseUrl });
    try {
      await writer.execute("PRAGMA foreign_keys = OFF");
      await writer.execute("DROP TRIGGER submissions_no_delete");
      await writer.execute("DELETE FROM submissions WHERE seq = 2");
    } finally {
      writer.close();
    }
    // SQLite hands seq 2 out again; the submission is still accepted, and of the two batch rows
    // whose range holds seq 2, the newer one (its own) is read: the stale one is not.
    const next = await submit(served.url, "third, under the reused seq");
    assertEquals(await served.count("receipt_batches"), 3);
    assertEquals(await stored(served.query, String(next.id)), { signature: next.signature });
    const show = await review(served.databaseUrl, ["show", String(next.id)], {
      BEACON_SIGNING_KEY: KEY,
    });
    assertEquals(show.code, 0, show.stderr);
    assertMatch(show.stdout, /verifies against the published key/);
  } finally {
    await served.close();
  }
});

Deno.test("a store written at version 10 (a signature row per receipt) upgraded to 11 verifies whole: old rows by their own, new rows by their batch", async () => {
  const directory = await Deno.makeTempDir({ prefix: "beacon-test-" });
  const url = `file:${directory}/beacon.db`;
  const seed = generateSeed();
  const key = await signingKeyFromSeed(seed);
  try {
    // As version 10 stored them: each receipt's own signature and proof in `receipt_signatures`.
    const client = createClient({ url });
    try {
      await migrateTo(client, 10);
      const receipts = [1, 2, 3].map((n) => {
        const content = new TextEncoder().encode(`stored by version 10, number ${n}`);
        return { n, content, id: `AZversion10receipt${n}`.padEnd(30, "x") };
      });
      const fields = await Promise.all(receipts.map(async ({ content, id }) => ({
        id,
        receivedAt: "2026-01-01T00:00:00.000Z",
        digest: "sha256:" + hex(new Uint8Array(await crypto.subtle.digest("SHA-256", content))),
        size: content.length,
        kind: "unstructured" as const,
      })));
      const signed = (await signReceipts(key, fields)).receipts;
      for (const [i, { n, content }] of receipts.entries()) {
        await client.execute({
          sql: "INSERT INTO submissions (seq, id, context_id, received_at, surface, kind, " +
            "content_type, content, size, digest, source_hash) VALUES (?, ?, 'ctx', ?, " +
            "'native', 'unstructured', 'text/plain; charset=utf-8', ?, ?, ?, 'src')",
          args: [n, fields[i].id, fields[i].receivedAt, content, fields[i].size, fields[i].digest],
        });
        const batch = signed[i].batch!;
        await client.execute({
          sql: "INSERT INTO receipt_signatures (seq, signature, batch_size, batch_index, " +
            "batch_path) VALUES (?, ?, ?, ?, ?)",
          args: [n, signed[i].signature, batch.size, batch.index, JSON.stringify(batch.path)],
        });
      }
    } finally {
      client.close();
    }
    const served = await serveBeacon({ signingKey: encodeSeed(seed), database: { url } });
    let receipts: Record<string, unknown>[];
    try {
      receipts = await Promise.all(
        Array.from({ length: 12 }, (_, i) => submit(served.url, `after the upgrade ${i}`)),
      );
    } finally {
      await served.close(); // its final head covers all 15 rows
    }
    const reader = createClient({ url });
    try {
      const query = async (sql: string, args: (string | number)[] = []) =>
        (await reader.execute({ sql, args })).rows as unknown as Record<string, unknown>[];
      assertEquals((await query("SELECT count(*) AS n FROM receipt_signatures"))[0].n, 3);
      for (const receipt of receipts) {
        assertEquals(await stored(query, String(receipt.id)), signatureOf(receipt));
      }
    } finally {
      reader.close();
    }
    const run = await review(url, ["verify", "--trust", key.publicKey]);
    assertEquals(run.code, 0, run.stdout + run.stderr);
    assertMatch(run.stdout, /checked 15 submissions/);
    assert(!/PROBLEM/.test(run.stdout), run.stdout);
  } finally {
    await Deno.remove(directory, { recursive: true }).catch(() => {});
  }
});
