/**
 * Migration 8: the idempotency index on an integer hash. On a store written before it, a retry of
 * an old keyed submission is still found (the old rows keep their index, now partial), new rows
 * carry the hash and are found by it, and the key checks use the two partial indexes, never a
 * scan of the table. Through the real store on a real file, and through a real sqld for the
 * remote insert.
 */
import Database from "libsql";
import { createClient } from "@libsql/client";
import { assert, assertEquals, assertRejects } from "../support/assert.ts";
import { startSqld } from "../support/sqld.ts";
import { tempDatabase } from "../../review/tests/support.ts";
import { migrate } from "../../src/store/migrations.ts";
import { migrateTo } from "../support/migrations.ts";
import {
  FIND_BY_IDEMPOTENCY_KEY,
  idempotencyHash,
  keyCheckArgs,
  type NewSubmission,
} from "../../src/store/rows.ts";
import { INSERT_ROW_UNLESS_KEY_USED } from "../../src/store/connection/embedded/sql.ts";
import { INSERT_BATCH_JSON } from "../../src/store/connection/remote/sql.ts";
import { SubmissionStore } from "../../src/store/store.ts";
import { newSubmission, storedSignatures } from "../support/rows.ts";
import { signingKeyFromSeed, signReceipts, verifyReceipt } from "../../src/signing/mod.ts";

const SINCE = new Date(0).toISOString();

function submission(id: string, idempotencyKey: string, sourceHash = "source-a"): NewSubmission {
  return newSubmission(id, {
    receivedAt: new Date(1_000).toISOString(),
    idempotencyKey,
    sourceHash,
  });
}

/** A database file as versions 1 to 5 left it, holding one keyed submission. */
async function storeBeforeMigration9(): Promise<{ url: string; path: string }> {
  const database = await tempDatabase();
  const client = createClient({ url: database.url });
  try {
    await migrateTo(client, 5);
    await client.execute(
      "INSERT INTO submissions (id, context_id, received_at, surface, kind, content_type, " +
        "content, size, digest, source_hash, idempotency_key) VALUES ('old', 'ctx-old', " +
        `'${new Date(500).toISOString()}', 'native', 'unstructured', 'text/plain', X'6869', 2, ` +
        "'sha256:x', 'source-a', 'native:k-old')",
    );
  } finally {
    client.close();
  }
  return database;
}

function query(path: string, sql: string, args: unknown[] = []): Record<string, unknown>[] {
  const reader = new Database(path);
  try {
    return reader.prepare(sql).all(...args) as Record<string, unknown>[];
  } finally {
    reader.close();
  }
}

Deno.test("migration 8 on an existing store: old keys still replay, new keys use the hash", async () => {
  const database = await storeBeforeMigration9();
  const store = await SubmissionStore.open({ url: database.url });
  try {
    // The row stored before the upgrade has no hash, and its key is still taken.
    assertEquals(await store.append(submission("retry-of-old", "native:k-old"), SINCE), false);
    assertEquals((await store.findByIdempotencyKey("source-a", "native:k-old", SINCE))?.id, "old");
    // The same key from another source is another key.
    assert(await store.append(submission("other-source", "native:k-old", "source-b"), SINCE));
    // A new key: stored with its hash, then taken.
    assert(await store.append(submission("new", "native:k-new"), SINCE));
    assertEquals(await store.append(submission("retry-of-new", "native:k-new"), SINCE), false);
    assertEquals((await store.findByIdempotencyKey("source-a", "native:k-new", SINCE))?.id, "new");
    // Outside the window nothing is found, and the key may be used again.
    const later = new Date(2_000).toISOString();
    assertEquals(await store.findByIdempotencyKey("source-a", "native:k-new", later), undefined);
  } finally {
    await store.close();
  }
  const rows = query(
    database.path,
    "SELECT id, idempotency_hash FROM submissions ORDER BY seq",
  );
  assertEquals(rows, [
    { id: "old", idempotency_hash: null },
    { id: "other-source", idempotency_hash: idempotencyHash("source-b", "native:k-old") },
    { id: "new", idempotency_hash: idempotencyHash("source-a", "native:k-new") },
  ]);
  const indexes = query(
    database.path,
    "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'submissions' " +
      "AND sql IS NOT NULL ORDER BY name",
  ).map((row) => row.name);
  assertEquals(indexes, ["submissions_idempotency_hash", "submissions_idempotency_unhashed"]);
});

Deno.test("migration 8 keeps submissions append-only: the hash is not writable, redaction is", async () => {
  const database = await storeBeforeMigration9();
  const client = createClient({ url: database.url });
  try {
    await migrate(client);
    await assertRejects(
      () => client.execute("UPDATE submissions SET idempotency_hash = 1"),
      /append-only/,
    );
    await assertRejects(() => client.execute("DELETE FROM submissions"), /append-only/);
    await client.execute(
      "INSERT INTO redactions (submission_id, reason, redacted_by, created_at) " +
        "VALUES ('old', 'court order', 'ops', 't')",
    );
    await assertRejects(
      () => client.execute("UPDATE submissions SET content = X'', idempotency_hash = 1"),
      /append-only/,
    );
    await client.execute("UPDATE submissions SET content = X'' WHERE id = 'old'");
    const row = (await client.execute(
      "SELECT length(content) AS n, idempotency_hash AS h " +
        "FROM submissions WHERE id = 'old'",
    )).rows[0];
    assertEquals({ n: row.n, h: row.h }, { n: 0, h: null });
  } finally {
    client.close();
  }
});

Deno.test("the key checks search the two partial indexes, never the whole table", async () => {
  const database = await storeBeforeMigration9();
  const client = createClient({ url: database.url });
  await migrate(client);
  client.close();
  const args = keyCheckArgs("source-a", "native:k", SINCE);
  const values = Array.from({ length: 14 }, () => null);
  for (
    // The insert names the row's own values in its key check, then the window start.
    const [sql, params] of [
      [INSERT_ROW_UNLESS_KEY_USED, [...values, SINCE]],
      [FIND_BY_IDEMPOTENCY_KEY, [...args]],
      // The remote batch: the same two probes for each element of its JSON array.
      [INSERT_BATCH_JSON, ["[]"]],
    ] as const
  ) {
    const plan = query(database.path, "EXPLAIN QUERY PLAN " + sql, [...params])
      .map((row) => String(row.detail)).join("\n");
    assert(plan.includes("submissions_idempotency_hash (idempotency_hash=?)"), plan);
    assert(
      plan.includes("submissions_idempotency_unhashed (source_hash=? AND idempotency_key=?)"),
      plan,
    );
    assert(!/SCAN submissions\b(?! USING)/.test(plan), plan);
  }
});

Deno.test("a remote store (sqld) checks keys with the same hash in its one-statement insert", async () => {
  const sqld = await startSqld();
  try {
    const store = await SubmissionStore.open({ url: sqld.url });
    try {
      const stored = await Promise.all([
        store.append(submission("a", "native:k"), SINCE),
        store.append(submission("b", "native:other"), SINCE),
      ]);
      assertEquals(stored.map((appended) => appended !== false), [true, true]);
      assertEquals(await store.append(submission("c", "native:k"), SINCE), false);
      assertEquals((await store.findByIdempotencyKey("source-a", "native:k", SINCE))?.id, "a");
    } finally {
      await store.close();
    }
    const client = createClient({ url: sqld.url });
    try {
      const rows = (await client.execute(
        "SELECT id, idempotency_hash AS hash FROM submissions ORDER BY seq",
      )).rows.map((row) => ({ id: row.id, hash: Number(row.hash) }));
      assertEquals(rows, [
        { id: "a", hash: idempotencyHash("source-a", "native:k") },
        { id: "b", hash: idempotencyHash("source-a", "native:other") },
      ]);
    } finally {
      client.close();
    }
  } finally {
    await sqld.close();
  }
});

Deno.test("a row the key check skips inside a commit gets no stored signature, and the row beside it keeps the one it was sent (embedded and sqld)", async () => {
  const key = await signingKeyFromSeed(new Uint8Array(32).fill(9));
  const sqld = await startSqld();
  const database = await tempDatabase();
  try {
    for (const url of [database.url, sqld.url]) {
      let commits = 0;
      const store = await SubmissionStore.open({ url }, Date.now, {
        signReceipts: (receipts) => signReceipts(key, receipts),
        onCommitted: () => commits++,
      });
      try {
        // The retry shares one commit with a new row, and the key check skips it there.
        const first = await store.append(submission("s1", "native:k"), SINCE);
        const [retry, other] = await Promise.all([
          store.append(submission("s2", "native:k"), SINCE),
          store.append(submission("s3", "native:j"), SINCE),
        ]);
        assertEquals(commits, 2, url);
        assertEquals(retry, false, url);
        assert(first !== false && first.signature !== undefined, url);
        assert(other !== false && other.signature !== undefined, url);
        const client = createClient({ url });
        try {
          const stored = await storedSignatures(async (sql) =>
            (await client.execute(sql)).rows as unknown as Record<string, unknown>[]
          );
          assertEquals([...stored.keys()], ["s1", "s3"], url);
          // The skipped receipt keeps its leaf in the stored batch; the row beside it gets back
          // exactly the signature and proof it was answered with.
          assertEquals(stored.get("s1")!.stored, first.signature, url);
          assertEquals(stored.get("s3")!.stored, other.signature, url);
          assertEquals(other.signature?.batch?.size, 2, url);
          for (const { fields, stored: signature } of stored.values()) {
            assert(
              await verifyReceipt(key.publicKey, fields, signature.signature, signature.batch),
              url,
            );
          }
        } finally {
          client.close();
        }
      } finally {
        await store.close();
      }
    }
  } finally {
    await sqld.close();
  }
});
