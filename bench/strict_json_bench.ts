/**
 * Micro-benchmark for the strict JSON profile: `parseStrictJson` against the baseline a server
 * would otherwise use, `JSON.parse(new TextDecoder().decode(bytes))`, on a small A2A-like
 * JSON-RPC body (~600 bytes, the common request) and a large one (~60 KiB, near the 64 KiB
 * body limit). Each size comes twice: with some non-ASCII text, and pure ASCII, because engines
 * store and parse the two kinds of string differently (JSON.parse is fastest on ASCII).
 * Run with `deno bench bench/strict_json_bench.ts`.
 *
 * @module
 */

import { parseStrictJson } from "../src/message/mod.ts";

const encoder = new TextEncoder();

/** An A2A 1.0 SendMessage request shaped like the ones agents send. */
function sendMessage(text: string, extraParts: number, ascii: boolean): string {
  const flourish = ascii ? '"quoted", e, zh.' : "“quoted”, é, 中文.";
  const parts: unknown[] = [{ text }];
  for (let i = 0; i < extraParts; i++) {
    parts.push({
      data: {
        subject: `Observation ${i}`,
        body: `Value ${i * 7} at step ${i}; ${flourish}`,
        tags: ["telemetry", "automated", `batch-${i % 10}`],
        confidence: (i % 100) / 100,
        escaped: 'line one\nline two\t"quoted" \\ end',
      },
      mediaType: "application/json",
    });
  }
  return JSON.stringify({
    jsonrpc: "2.0",
    id: "req-7f3c2a91-5b0e-4d8a-9c61-2e4f7a1b3c5d",
    method: "SendMessage",
    params: {
      message: {
        role: "ROLE_USER",
        messageId: "0b6f4e8a-1c2d-4e5f-8a9b-0c1d2e3f4a5b",
        parts,
        metadata: { agent: "example-agent/1.4.2", sentAt: "2025-06-01T12:00:00.000Z" },
      },
      configuration: { acceptedOutputModes: ["text/plain", "application/json"], blocking: true },
    },
  });
}

/** The largest body of this shape that fits in 60 KiB. */
function largeBody(ascii: boolean): Uint8Array {
  let parts = 1;
  while (encoder.encode(sendMessage("large", parts + 1, ascii)).length <= 60 * 1024) parts++;
  return encoder.encode(sendMessage("large", parts, ascii));
}

const greeting = "Hello. A finding for human review; no reply needed.";
const bodies: [string, Uint8Array][] = [
  ["small", encoder.encode(sendMessage(greeting, 1, false))],
  ["small ASCII", encoder.encode(sendMessage(greeting, 1, true))],
  ["large", largeBody(false)],
  ["large ASCII", largeBody(true)],
];

function baseline(bytes: Uint8Array): unknown {
  return JSON.parse(new TextDecoder().decode(bytes));
}

for (const [group, bytes] of bodies) {
  // Guard against a benchmark that measures a refusal instead of a parse.
  if (!parseStrictJson(bytes).ok) throw new Error(`benchmark body refused: ${group}`);
  Deno.bench({
    name: `JSON.parse(TextDecoder) ${bytes.length} B`,
    group,
    baseline: true,
    fn: () => {
      baseline(bytes);
    },
  });
  Deno.bench({
    name: `parseStrictJson ${bytes.length} B`,
    group,
    fn: () => {
      parseStrictJson(bytes);
    },
  });
}
