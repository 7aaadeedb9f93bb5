/**
 * Serves a Beacon built from `createBeacon(options)` on an ephemeral loopback port inside the test
 * process, with a fresh temporary database file, plus helpers to read that database directly.
 * For the real server entry as a child process, see `server.ts` beside it.
 *
 * @module
 */
import { createClient } from "@libsql/client";
import { type Beacon, type BeaconOptions, createBeacon } from "../../src/beacon.ts";

/** A served in-process Beacon. */
export interface ServedBeacon {
  readonly url: string;
  readonly beacon: Beacon;
  readonly databaseUrl: string;
  /** Number of rows in `table` (default `submissions`), read through a separate connection. */
  count(table?: string): Promise<number>;
  /** Runs SQL on a separate connection (for assertions and tamper attempts). */
  query(sql: string, args?: (string | number)[]): Promise<Record<string, unknown>[]>;
  close(): Promise<void>;
}

/** Starts a Beacon on 127.0.0.1 with a temporary database; options override the defaults. */
export async function serveBeacon(options: BeaconOptions = {}): Promise<ServedBeacon> {
  const directory = await Deno.makeTempDir({ prefix: "beacon-test-" });
  const databaseUrl = `file:${directory}/beacon.db`;
  const beacon = createBeacon({
    database: { url: databaseUrl },
    rateLimit: "off",
    statusRateLimit: "off",
    ...options,
  });
  await beacon.ready();
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    (request, info) => beacon.fetch(request, { remoteAddress: info.remoteAddr.hostname }),
  );
  const reader = createClient({ url: databaseUrl });
  const query = async (sql: string, args: (string | number)[] = []) =>
    (await reader.execute({ sql, args })).rows as unknown as Record<string, unknown>[];
  return {
    url: `http://127.0.0.1:${server.addr.port}`,
    beacon,
    databaseUrl,
    query,
    async count(table = "submissions") {
      return Number((await query(`SELECT count(*) AS n FROM ${table}`))[0].n);
    },
    async close() {
      await server.shutdown();
      await beacon.close();
      reader.close();
      await Deno.remove(directory, { recursive: true }).catch(() => {});
    },
  };
}

/** A raw HTTP/1.1 exchange over TCP, for what `fetch` cannot send (lying lengths, stalls). */
export async function rawExchange(
  url: string,
  parts: (Uint8Array | string | { pauseMs: number })[],
): Promise<{ status: number; head: string; body: string }> {
  const { hostname, port } = new URL(url);
  const connection = await Deno.connect({ hostname, port: Number(port) });
  const encoder = new TextEncoder();
  const reading = (async () => {
    const chunks: Uint8Array[] = [];
    const buffer = new Uint8Array(65_536);
    while (true) {
      const n = await connection.read(buffer).catch(() => null);
      if (n === null) break;
      chunks.push(buffer.slice(0, n));
      const text = new TextDecoder().decode(concat(chunks));
      const headEnd = text.indexOf("\r\n\r\n");
      if (headEnd >= 0) {
        const length = /content-length: *(\d+)/i.exec(text.slice(0, headEnd));
        if (length && text.length - headEnd - 4 >= Number(length[1])) break;
      }
    }
    return new TextDecoder().decode(concat(chunks));
  })();
  try {
    for (const part of parts) {
      if (typeof part === "object" && "pauseMs" in part) {
        await new Promise((resolve) => setTimeout(resolve, part.pauseMs));
      } else {
        await connection.write(typeof part === "string" ? encoder.encode(part) : part).catch(
          () => 0,
        );
      }
    }
    const text = await reading;
    const headEnd = text.indexOf("\r\n\r\n");
    return {
      status: Number(text.slice(9, 12)),
      head: text.slice(0, headEnd),
      body: text.slice(headEnd + 4),
    };
  } finally {
    try {
      connection.close();
    } catch {
      // already closed by the server
    }
  }
}

function concat(chunks: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(chunks.reduce((sum, chunk) => sum + chunk.byteLength, 0));
  let offset = 0;
  for (const chunk of chunks) {
    out.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return out;
}
