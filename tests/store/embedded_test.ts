import Database from "libsql";
import { assert, assertEquals, assertRejects } from "../support/assert.ts";
import { EmbeddedConnection } from "../../src/store/connection/embedded/checked_connection.ts";
import { isBusy } from "../../src/store/faults.ts";
import { migrate } from "../../src/store/migrations.ts";
import { openClient } from "../../src/store/client.ts";
import { type NewSubmission, pendingRow } from "../../src/store/rows.ts";
import { newSubmission } from "../support/rows.ts";

async function database(): Promise<{ url: string; path: string }> {
  const directory = await Deno.makeTempDir({ prefix: "beacon-embedded-" });
  const url = `file:${directory}/beacon.db`;
  const client = await openClient({ url });
  await migrate(client);
  client.close();
  return { url, path: `${directory}/beacon.db` };
}

function submission(id: string, idempotencyKey?: string): NewSubmission {
  return newSubmission(id, { idempotencyKey });
}

function count(path: string): number {
  const reader = new Database(path);
  try {
    return (reader.prepare("SELECT count(*) AS n FROM submissions").all()[0] as { n: number }).n;
  } finally {
    reader.close();
  }
}

Deno.test("EmbeddedConnection.commit() inserts a batch in one transaction another connection sees", async () => {
  const { url, path } = await database();
  const connection = await EmbeddedConnection.open(url);
  const inserted = await connection.commit([
    pendingRow(submission("a")),
    pendingRow(submission("b")),
  ]);
  assertEquals(inserted, [1, 2], "each row's seq");
  assertEquals(count(path), 2);
  connection.close();
});

Deno.test("EmbeddedConnection.commit() reports a row whose idempotency key was used as not inserted", async () => {
  const { url, path } = await database();
  const connection = await EmbeddedConnection.open(url);
  const since = new Date(0).toISOString();
  assertEquals(await connection.commit([pendingRow(submission("a", "k"), since)]), [1]);
  assertEquals(await connection.commit([pendingRow(submission("b", "k"), since)]), [0]);
  assertEquals(count(path), 1);
  connection.close();
});

Deno.test("EmbeddedConnection.commit() rolls a failed batch back completely and keeps working", async () => {
  const { url, path } = await database();
  const connection = await EmbeddedConnection.open(url);
  // The second row repeats the first one's id: the UNIQUE constraint fails inside the transaction.
  await assertRejects(() =>
    connection.commit([pendingRow(submission("same")), pendingRow(submission("same"))])
  );
  assertEquals(count(path), 0);
  assertEquals(await connection.commit([pendingRow(submission("next"))]), [1]);
  assertEquals(count(path), 1);
  connection.close();
});

Deno.test("EmbeddedConnection.commit() gives up on a lock held past its busy budget, then commits for real", async () => {
  const { url, path } = await database();
  const connection = await EmbeddedConnection.open(url, { busyBudgetMs: 50 });
  const holder = new Database(path);
  holder.exec("BEGIN EXCLUSIVE");
  const error = await connection.commit([pendingRow(submission("blocked"))]).then(
    () => undefined,
    (error) => error,
  );
  assert(isBusy(error), "expected a busy error");
  holder.exec("COMMIT");
  holder.close();
  assertEquals(await connection.commit([pendingRow(submission("after"))]), [1]);
  // Committed, not merely inserted into a transaction left open by the failure.
  assertEquals(count(path), 1);
  connection.close();
});

Deno.test("EmbeddedConnection.commit() waits for a lock released within its busy budget", async () => {
  const { url, path } = await database();
  const connection = await EmbeddedConnection.open(url, { busyBudgetMs: 5000 });
  const holder = new Database(path);
  holder.exec("BEGIN EXCLUSIVE");
  const committing = connection.commit([pendingRow(submission("waited"))]);
  await new Promise((resolve) => setTimeout(resolve, 30));
  holder.exec("COMMIT");
  holder.close();
  assertEquals(await committing, [1]);
  assertEquals(count(path), 1);
  connection.close();
});
