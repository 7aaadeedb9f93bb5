/**
 * The idempotent replay is no signing oracle for a database writer without the key.
 *
 * The attack: a writer INSERTs a row of its own (its id, text, digest, a recent or a future
 * `received_at`, an idempotency key, the `source_hash` of one of its own earlier submissions) and
 * no signature, then retries "its" submission with that key. Were the replay to sign the receipt
 * of a row without a stored signature, the server would hand the writer a genuine signature over
 * forged fields, which the writer could store as a batch row for a head to cover. The replay
 * answers only with the signature stored with the row, and only when it verifies under the key;
 * anything else is a fault (`500 internal`, A2A -32603, logged `UnacknowledgedRowError`).
 *
 * Run through the real server on Deno (embedded and on a real sqld), Node and Bun, on both
 * protocols, with a genuine retry beside each forged one as the control.
 *
 * @module
 */
import { createClient } from "@libsql/client";
import { idempotencyKeyOf } from "../../src/a2a/send_message.ts";
import type { JsonObject } from "../../src/json/value.ts";
import { type RunningServer, startRuntime } from "../../scripts/runtimes.ts";
import { assert, assertStrictEquals } from "../support/assert.ts";
import { startServer } from "../support/server.ts";
import { startSqld } from "../support/sqld.ts";

const encoder = new TextEncoder();

async function sha256Hex(bytes: Uint8Array<ArrayBuffer>): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  return Array.from(digest, (byte) => byte.toString(16).padStart(2, "0")).join("");
}

/** A native submission with an idempotency key. */
function postNative(url: string, body: string, key: string): Promise<Response> {
  return fetch(url + "/beacon/0.1/submissions", {
    method: "POST",
    headers: { "content-type": "text/plain; charset=utf-8", "idempotency-key": key },
    body,
  });
}

/** An A2A `SendMessage` of one text part. */
function postA2A(url: string, message: JsonObject): Promise<Response> {
  return fetch(url + "/a2a/v1", {
    method: "POST",
    headers: { "content-type": "application/json", "a2a-version": "1.0" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "SendMessage", params: { message } }),
  });
}

function textMessage(messageId: string, text: string): JsonObject {
  return { messageId, role: "ROLE_USER", parts: [{ text }] };
}

/** What a database writer with plain SQL does: one INSERT of a row of its own, no signature. */
async function forgeRow(
  databaseUrl: string,
  row: { id: string; key: string; receivedAt: string; text: string },
): Promise<void> {
  const client = createClient({ url: databaseUrl, intMode: "number" });
  try {
    // The source of an earlier genuine submission, as the writer reads it from any row.
    const [{ source_hash: sourceHash }] = (await client.execute(
      "SELECT source_hash FROM submissions ORDER BY seq LIMIT 1",
    )).rows;
    const content = encoder.encode(row.text);
    await client.execute({
      sql: "INSERT INTO submissions (id, context_id, received_at, surface, kind, content_type, " +
        "content, size, digest, source_hash, idempotency_key) VALUES (?, 'c', ?, ?, " +
        "'unstructured', 'text/plain; charset=utf-8', ?, ?, ?, ?, ?)",
      args: [
        row.id,
        row.receivedAt,
        row.key.startsWith("a2a:") ? "a2a" : "native",
        content,
        content.length,
        "sha256:" + await sha256Hex(content),
        String(sourceHash),
        row.key,
      ],
    });
  } finally {
    client.close();
  }
}

/** How many batch signatures (any form) are stored: a signature handed out could be one more. */
async function signedRows(databaseUrl: string, id: string): Promise<number> {
  const client = createClient({ url: databaseUrl, intMode: "number" });
  try {
    const rows = (await client.execute({
      sql: "SELECT count(*) AS n FROM submissions s JOIN receipt_batches b " +
        "ON s.seq BETWEEN b.first_seq AND b.last_seq WHERE s.id = ?",
      args: [id],
    })).rows;
    return Number(rows[0].n);
  } finally {
    client.close();
  }
}

const HOUR = 3600_000;

/** The attack on one running server, on both protocols, recent and future rows. */
async function attack(server: Pick<RunningServer, "url" | "stderr">, databaseUrl: string) {
  // The writer's own genuine submissions first: it learns its source hash from them, and their
  // retries are the control (a replay of an acknowledged row still answers with its receipt).
  const genuine = await postNative(server.url, "genuine", "genuine-key");
  assertStrictEquals(genuine.status, 202, await genuine.clone().text());
  const { receipt } = await genuine.json();
  assert(typeof receipt.signature === "string" && receipt.signature.length === 86);
  const again = await postNative(server.url, "genuine", "genuine-key");
  assertStrictEquals(again.status, 202);
  assertStrictEquals(again.headers.get("idempotent-replayed"), "true");
  assertStrictEquals((await again.json()).receipt.signature, receipt.signature, "as stored");
  const genuineA2A = textMessage("genuine-a2a", "genuine");
  for (let i = 0; i < 2; i++) {
    const answer = await (await postA2A(server.url, genuineA2A)).json();
    assert(answer.result !== undefined, JSON.stringify(answer));
  }

  const cases = [
    { id: "AZforgedNativeRecent0000000000", when: Date.now() - 1000, protocol: "native" },
    {
      id: "AZforgedNativeFuture0000000000",
      when: Date.now() + 5 * 365 * 24 * HOUR,
      protocol: "native",
    },
    { id: "AZforgedA2ARecent0000000000000", when: Date.now() - 1000, protocol: "a2a" },
  ] as const;
  for (const forged of cases) {
    const text = `a submission nobody sent (${forged.id})`;
    const message = textMessage(forged.id, text);
    const key = forged.protocol === "native"
      ? `native:${forged.id}`
      : `a2a:${idempotencyKeyOf(message)}`;
    await forgeRow(databaseUrl, {
      id: forged.id,
      key,
      receivedAt: new Date(forged.when).toISOString(),
      text,
    });
    const response = forged.protocol === "native"
      ? await postNative(server.url, text, forged.id)
      : await postA2A(server.url, message);
    const body = await response.text();
    assert(!body.includes(forged.id), `the forged row's receipt is never handed out: ${body}`);
    assert(!body.includes("signature"), `no signature leaves: ${body}`);
    if (forged.protocol === "native") {
      assertStrictEquals(response.status, 500, body);
      assertStrictEquals(JSON.parse(body).error.code, "internal");
    } else {
      assertStrictEquals(response.status, 200, body);
      assertStrictEquals(JSON.parse(body).error.code, -32603);
    }
    assertStrictEquals(await signedRows(databaseUrl, forged.id), 0);
  }
  // Each forged retry is reported to the operator by name: repeats are counted on later lines
  // (src/start/error_log.ts), so the counts add up to every retry once they are written.
  const reported = () =>
    server.stderr().split("\n").filter((line) => line.includes('"UnacknowledgedRowError"'))
      .reduce((sum, line) => sum + (JSON.parse(line).count ?? 1), 0);
  while (reported() < cases.length) await new Promise((resolve) => setTimeout(resolve, 50));
  assertStrictEquals(reported(), cases.length);
}

Deno.test("deno, embedded: a forged keyed row's retry is refused, never signed", async () => {
  const server = await startServer({ env: { BEACON_CHECKPOINT_INTERVAL: "off" } });
  try {
    await attack(server, server.databaseUrl);
  } finally {
    await server.stop("SIGTERM");
    await Deno.remove(server.directory, { recursive: true }).catch(() => {});
  }
});

Deno.test("deno, on a real sqld: a forged keyed row's retry is refused, never signed", async () => {
  const sqld = await startSqld();
  try {
    const server = await startServer({
      env: { BEACON_DATABASE_URL: sqld.url, BEACON_CHECKPOINT_INTERVAL: "off" },
    });
    try {
      await attack(server, sqld.url);
    } finally {
      await server.stop("SIGTERM");
      await Deno.remove(server.directory, { recursive: true }).catch(() => {});
    }
  } finally {
    await sqld.close();
  }
});

for (const runtime of ["node", "bun"] as const) {
  Deno.test(`${runtime}: a forged keyed row's retry is refused, never signed`, async () => {
    const directory = await Deno.makeTempDir({ prefix: "beacon-forged-replay-" });
    const databaseUrl = `file:${directory}/beacon.db`;
    try {
      const server = await startRuntime(runtime, {
        PORT: "0",
        BEACON_HOSTNAME: "127.0.0.1",
        BEACON_DATABASE_URL: databaseUrl,
        BEACON_RATE_LIMIT: "off",
        BEACON_STATUS_RATE_LIMIT: "off",
        BEACON_CHECKPOINT_INTERVAL: "off",
      });
      try {
        await attack(server, databaseUrl);
      } finally {
        await server.stop("SIGTERM");
      }
    } finally {
      await Deno.remove(directory, { recursive: true }).catch(() => {});
    }
  });
}
