/**
 * Helpers for the tree-head tests (tests/e2e/tree_head_test.ts,
 * tests/runtimes/tree_head_runtimes_test.ts): submit over real HTTP, and read the recorded
 * checkpoints through a connection of their own.
 *
 * @module
 */
import { createClient } from "@libsql/client";
import { assertStrictEquals } from "./assert.ts";

/** A native receipt as the `202` carries it (docs/protocol-0.1.md §5). */
export interface SubmittedReceipt {
  readonly id: string;
  readonly receivedAt: string;
  readonly digest: string;
  readonly size: number;
  readonly kind: string;
  readonly signature: string;
  readonly batch?: { readonly size: number; readonly index: number; readonly path: string[] };
}

/** POSTs one plain-text submission to a running server, expects `202`, and returns its receipt. */
export async function submitReceipt(url: string, body: string): Promise<SubmittedReceipt> {
  const response = await fetch(url + "/beacon/0.1/submissions", {
    method: "POST",
    headers: { "content-type": "text/plain; charset=utf-8" },
    body,
  });
  const answer = await response.text();
  assertStrictEquals(response.status, 202, answer);
  return JSON.parse(answer).receipt;
}

/** POSTs one plain-text submission to a running server and expects `202`. */
export async function submitText(url: string, body: string): Promise<void> {
  await submitReceipt(url, body);
}

/** The `tree_size` of every recorded checkpoint, oldest first. */
export async function checkpointSizes(databaseUrl: string): Promise<number[]> {
  const client = createClient({ url: databaseUrl, intMode: "number" });
  try {
    const rows = (await client.execute("SELECT tree_size FROM checkpoints ORDER BY seq")).rows;
    return rows.map((row) => Number(row.tree_size));
  } finally {
    client.close();
  }
}
