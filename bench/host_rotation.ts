/**
 * Host rotation against a fixed Host (issue 19, item 4): the server CPU time per agent-card
 * request (`GET /.well-known/agent-card.json`, no BEACON_PUBLIC_URL), read from the server's
 * /proc/PID/stat (utime + stime) around a bounded loop of sequential requests on one keep-alive
 * loopback connection. Rounds alternate between the two modes so both see the same machine load.
 *
 *     deno run -A bench/host_rotation.ts [REQUESTS_PER_ROUND] [ROUNDS]
 *
 * Linux only (it reads /proc). Prints one line per mode: median µs of server CPU per request.
 *
 * @module
 */
import { startServer } from "../tests/support/server.ts";

const perRound = Number(Deno.args[0] ?? 2000);
const rounds = Number(Deno.args[1] ?? 5);
const ticks = 100; // USER_HZ on Linux

async function cpuSeconds(pid: number): Promise<number> {
  const stat = await Deno.readTextFile(`/proc/${pid}/stat`);
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) / ticks; // utime, stime (fields 14, 15)
}

/** Sends `count` requests one after the other on one connection, reading each answer whole. */
async function loop(port: number, count: number, host: (i: number) => string): Promise<void> {
  const connection = await Deno.connect({ hostname: "127.0.0.1", port });
  const encoder = new TextEncoder();
  const decoder = new TextDecoder();
  const buffer = new Uint8Array(1 << 16);
  let pending = "";
  try {
    for (let i = 0; i < count; i++) {
      await connection.write(encoder.encode(
        `GET /.well-known/agent-card.json HTTP/1.1\r\nHost: ${host(i)}\r\n\r\n`,
      ));
      for (;;) {
        const end = pending.indexOf("\r\n\r\n");
        if (end >= 0) {
          const length = Number(/content-length: (\d+)/i.exec(pending.slice(0, end))?.[1] ?? 0);
          if (pending.length >= end + 4 + length) {
            if (!pending.startsWith("HTTP/1.1 200")) throw new Error(pending.slice(0, 40));
            pending = pending.slice(end + 4 + length);
            break;
          }
        }
        const read = await connection.read(buffer);
        if (read === null) throw new Error("connection closed");
        pending += decoder.decode(buffer.subarray(0, read), { stream: true });
      }
    }
  } finally {
    connection.close();
  }
}

const server = await startServer();
try {
  const port = Number(new URL(server.url).port);
  await loop(port, 500, () => "warm.example"); // JIT warm-up
  await loop(port, 500, (i) => `w${i}.example`);
  const samples: Record<string, number[]> = { fixed: [], rotating: [] };
  let serial = 0;
  for (let round = 0; round < rounds; round++) {
    for (const mode of ["fixed", "rotating"] as const) {
      const before = await cpuSeconds(server.pid);
      await loop(
        port,
        perRound,
        mode === "fixed" ? () => "beacon.example" : () => `h${serial++}.example`,
      );
      samples[mode].push(((await cpuSeconds(server.pid)) - before) / perRound * 1e6);
    }
  }
  for (const [mode, values] of Object.entries(samples)) {
    const sorted = values.toSorted((a, b) => a - b);
    console.log(
      `${mode}: median ${sorted[Math.floor(sorted.length / 2)].toFixed(1)} µs server CPU per ` +
        `request (${rounds} rounds of ${perRound}; all: ${
          sorted.map((v) => v.toFixed(1)).join(", ")
        })`,
    );
  }
} finally {
  await server.stop();
}
