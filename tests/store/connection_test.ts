/**
 * The storage seam: every kind of `Connection` (in memory, an embedded file on this thread and on
 * the writer thread, a real sqld) under the same store. The signer the store was made with signs
 * each commit's receipts once, every stored row gets its signature in the same transaction, reads
 * go through the same connection, and only an embedded file names a file for the guard.
 */
import { assert, assertEquals } from "../support/assert.ts";
import { startSqld } from "../support/sqld.ts";
import { newSubmission, storedSignatures } from "../support/rows.ts";
import { signingKeyFromSeed, signReceipts, verifyReceipt } from "../../src/signing/mod.ts";
import type { DatabaseConfig } from "../../src/store/client.ts";
import { Database } from "../../src/store/database.ts";
import { type ReceiptSigner, SubmissionStore } from "../../src/store/store.ts";
import { type PendingRow, pendingRow, type SignedFields } from "../../src/store/rows.ts";

/** Three concurrent appends and what the store reports and keeps of them. */
async function appendThree(store: SubmissionStore, label: string): Promise<void> {
  const appended = await Promise.all(
    ["a", "b", "c"].map((id) => store.append(newSubmission(`${label}-${id}`))),
  );
  for (const one of appended) assert(one !== false, label);
  const found = await store.findById(`${label}-b`);
  assertEquals(found?.id, `${label}-b`, label);
}

Deno.test("every kind of connection commits the store's signed rows, reads them back, and names a file only when embedded", async () => {
  const key = await signingKeyFromSeed(new Uint8Array(32).fill(7));
  const folder = await Deno.makeTempDir({ prefix: "beacon-connection-" });
  const sqld = await startSqld();
  try {
    const kinds: [string, DatabaseConfig, string | undefined][] = [
      ["memory", { url: ":memory:" }, undefined],
      ["file", { url: `file:${folder}/inline.db` }, `${folder}/inline.db`],
      ["thread", { url: `file:${folder}/thread.db`, writerThread: true }, `${folder}/thread.db`],
      ["remote", { url: sqld.url }, undefined],
    ];
    for (const [label, config, file] of kinds) {
      let batches = 0;
      const signer: ReceiptSigner = (receipts) => {
        batches++;
        return signReceipts(key, receipts);
      };
      const committed: { seqs: readonly number[]; receipts: readonly SignedFields[] }[] = [];
      const store = await SubmissionStore.open(config, Date.now, {
        signReceipts: signer,
        onCommitted: (seqs, receipts) => committed.push({ seqs, receipts }),
      });
      try {
        assertEquals(store.database.connection.file, file, label);
        await appendThree(store, label);
        assertEquals(batches, committed.length, `${label}: one signing per commit`);
        const [{ n }] = await store.database.statements.run(
          "SELECT count(*) AS n FROM receipt_batches",
        );
        assertEquals(Number(n), committed.length, `${label}: one signature row per commit`);
        const stored = await storedSignatures((sql) => store.database.statements.run(sql, {}));
        assertEquals(stored.size, 3, `${label}: each row stored with its signature`);
        // Each commit tells the seq each row got and its receipt's members, as the rows read now.
        const rows = await store.database.statements.run(
          "SELECT seq, id, received_at, digest, kind, size FROM submissions ORDER BY seq",
        );
        const told = new Map<number, SignedFields>();
        for (const { seqs, receipts } of committed) {
          assertEquals(receipts.length, seqs.length, label);
          seqs.forEach((seq, i) => told.set(seq, receipts[i]));
        }
        assertEquals([...told.keys()].sort(), rows.map((row) => Number(row.seq)), label);
        for (const row of rows) {
          const { id, receivedAt, digest, kind, size } = told.get(Number(row.seq))!;
          assertEquals(
            { id, receivedAt, digest, kind, size },
            {
              id: row.id,
              receivedAt: row.received_at,
              digest: row.digest,
              kind: row.kind,
              size: Number(row.size),
            },
            `${label}: ${row.id}'s members`,
          );
        }
        for (const { fields, stored: signature } of stored.values()) {
          assert(
            await verifyReceipt(key.publicKey, fields, signature.signature, signature.batch),
            `${label}: ${fields.id}'s stored signature verifies`,
          );
        }
      } finally {
        await store.close();
      }
    }
  } finally {
    await sqld.close();
    await Deno.remove(folder, { recursive: true });
  }
});

Deno.test("a store made without a signer stores its rows unsigned, on a database opened first", async () => {
  const database = await Database.open({ url: ":memory:" });
  const store = new SubmissionStore(database);
  try {
    const appended = await store.append(newSubmission("unsigned"));
    assertEquals(appended, {});
    const [{ n }] = await database.statements.run("SELECT count(*) AS n FROM receipt_batches");
    assertEquals(Number(n), 0);
  } finally {
    await store.close();
  }
});

Deno.test("a batch sent as JSON (memory and sqld) stores every content byte for byte: UTF-8, NUL, not UTF-8, a BOM", async () => {
  const sqld = await startSqld();
  try {
    const contents = [
      new TextEncoder().encode("plain text, ümlaut, emoji 🛰️, \u2028 line separator"),
      new Uint8Array([0x61, 0x00, 0x62]),
      new Uint8Array([0xff, 0xfe, 0x41]),
      new Uint8Array([0xef, 0xbb, 0xbf, 0x68, 0x69]),
      new TextEncoder().encode('"quotes" and \\ backslashes \n and a tab \t'),
    ];
    for (const url of [":memory:", sqld.url]) {
      const store = await SubmissionStore.open({ url });
      try {
        const appended = await Promise.all(
          contents.map((content, i) => store.append(newSubmission(`bytes-${i}`, { content }))),
        );
        for (const one of appended) assert(one !== false, url);
        const rows = await store.database.statements.run(
          "SELECT id, content FROM submissions ORDER BY seq",
          {},
        );
        assertEquals(
          rows.map((row) => new Uint8Array(row.content as ArrayBuffer)),
          contents,
          url,
        );
      } finally {
        await store.close();
      }
    }
  } finally {
    await sqld.close();
  }
});

Deno.test("every kind of connection tells which rows of a commit the key check skipped, and the seq each other row got", async () => {
  const folder = await Deno.makeTempDir({ prefix: "beacon-connection-" });
  const sqld = await startSqld();
  try {
    for (const url of [":memory:", `file:${folder}/skip.db`, sqld.url]) {
      const database = await Database.open({ url });
      try {
        const since = new Date(0).toISOString();
        const keyed = (id: string, key: string) =>
          pendingRow(newSubmission(id, { idempotencyKey: key }), since);
        const commit = (rows: PendingRow[]) => database.connection.commit(rows, Infinity);
        assertEquals(await commit([keyed("first", "k1"), keyed("second", "k2")]), [1, 2], url);
        // The middle row's key was used by a committed row: it is skipped, the others follow on.
        assertEquals(
          await commit([keyed("third", "k3"), keyed("again", "k1"), keyed("fourth", "k4")]),
          [3, 0, 4],
          url,
        );
        assertEquals(await commit([keyed("again-2", "k2")]), [0], url);
        assertEquals(await commit([keyed("fifth", "k5")]), [5], url);
        const rows = await database.statements.run("SELECT seq, id FROM submissions ORDER BY seq");
        assertEquals(
          rows.map((row) => `${row.seq} ${row.id}`),
          ["1 first", "2 second", "3 third", "4 fourth", "5 fifth"],
          url,
        );
      } finally {
        await database.close();
      }
    }
  } finally {
    await sqld.close();
    await Deno.remove(folder, { recursive: true });
  }
});
