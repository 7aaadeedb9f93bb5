/**
 * HTTP/1.1 pipelining (RFC 9112 §9.3) through the real server entries. Two
 * submissions written back to back on one connection, before the first answer:
 *
 * - Deno and Node answer both, in order;
 * - Bun 1.4.5 (pinned in tools/bun) closes the connection without a byte when a request arrives
 *   while the answer ahead of it is still pending (an async handler: ours awaits the commit),
 *   after the first submission was committed. uWS, under Bun.serve, closes such a socket (Bun
 *   pull requests #32868, #35036, #42796). The adapter cannot avoid it: the socket is closed
 *   while the second request is parsed, before any JavaScript runs.
 *
 * What stays true on every entry: a client that gets no answer and retries with its
 * `Idempotency-Key` on a new connection gets the first receipt back (`Idempotent-Replayed`), and
 * nothing is stored twice. docs/deploy.md (Bun) says this.
 */
import { createClient } from "@libsql/client";
import { assert, assertEquals } from "../support/assert.ts";
import { startServer } from "../support/server.ts";
import { startRuntime } from "../../scripts/runtimes.ts";

const ENTRIES = ["deno", "node", "bun"] as const;

function request(body: string, key: string): string {
  return "POST /beacon/0.1/submissions HTTP/1.1\r\nHost: 127.0.0.1\r\n" +
    `Content-Type: text/plain; charset=utf-8\r\nIdempotency-Key: ${key}\r\n` +
    `Content-Length: ${new TextEncoder().encode(body).byteLength}\r\n\r\n${body}`;
}

/** Writes both requests at once and reads until the server closes or both answers arrived. */
async function pipelined(url: string, raw: string): Promise<string> {
  const { port } = new URL(url);
  const connection = await Deno.connect({ hostname: "127.0.0.1", port: Number(port) });
  try {
    await connection.write(new TextEncoder().encode(raw));
    let text = "";
    const buffer = new Uint8Array(64 * 1024);
    while ((text.match(/HTTP\/1\.1 \d{3}/g) ?? []).length < 2) {
      const n = await connection.read(buffer);
      if (n === null) break; // closed by the server
      text += new TextDecoder().decode(buffer.subarray(0, n));
      // Both heads are in; the second body may still be on its way.
      if ((text.match(/HTTP\/1\.1 \d{3}/g) ?? []).length === 2 && text.endsWith("}")) break;
    }
    return text;
  } finally {
    connection.close();
  }
}

async function storedTexts(url: string): Promise<string[]> {
  const db = createClient({ url });
  try {
    return (await db.execute("SELECT content FROM submissions")).rows
      .map((row) => new TextDecoder().decode(row.content as ArrayBuffer));
  } finally {
    db.close();
  }
}

for (const entry of ENTRIES) {
  Deno.test(`${entry}: two pipelined submissions are both answered, or (Bun) a retry with the Idempotency-Key gets the stored receipt and nothing is stored twice`, async () => {
    const directory = await Deno.makeTempDir({ prefix: "beacon-test-" });
    const env = {
      PORT: "0",
      BEACON_HOSTNAME: "127.0.0.1",
      BEACON_DATABASE_URL: `file:${directory}/beacon.db`,
      BEACON_RATE_LIMIT: "off",
      BEACON_LOG: "off",
    };
    const server = entry === "deno" ? await startServer({ env, directory }) : await startRuntime(
      entry,
      env,
    );
    try {
      const raw = request("first", "key-1") + request("second", "key-2");
      const answered = await pipelined(server.url, raw);
      const statuses = answered.match(/HTTP\/1\.1 \d{3}/g) ?? [];
      if (entry !== "bun") {
        assertEquals(statuses, ["HTTP/1.1 202", "HTTP/1.1 202"], answered);
      } else {
        // Pinned: Bun 1.4.5 closes with nothing. A fixed Bun answers both; update docs then.
        console.log(`bun answered ${statuses.length} of 2 pipelined submissions`);
      }
      const before = await storedTexts(env.BEACON_DATABASE_URL);
      // Whatever arrived, retries with the same keys tell the truth and store nothing twice.
      for (const [body, key] of [["first", "key-1"], ["second", "key-2"]]) {
        const retry = await fetch(`${server.url}/beacon/0.1/submissions`, {
          method: "POST",
          headers: { "content-type": "text/plain; charset=utf-8", "idempotency-key": key },
          body,
        });
        assertEquals(retry.status, 202);
        // Stored without an answer: the retry gets that first receipt, not a second row.
        if (before.includes(body)) assertEquals(retry.headers.get("idempotent-replayed"), "true");
        await retry.body?.cancel();
      }
      await server.stop();
      assertEquals(
        (await storedTexts(env.BEACON_DATABASE_URL)).sort(),
        ["first", "second"],
        "each submission stored once",
      );
      assert(statuses.length <= 2);
    } finally {
      await server.stop();
      await Deno.remove(directory, { recursive: true }).catch(() => {});
    }
  });
}
