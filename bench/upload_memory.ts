/**
 * Hostile uploads: 200 concurrent 1 MiB bodies, each streamed slowly enough that all of them
 * are open at the same time, against the Beacon's native submit endpoint. Reports the server's
 * peak RSS (target: under 150 MiB), the answers it gave, and the rows it stored (must be none:
 * 1 MiB is far over the 64 KiB body limit).
 *
 * A server that buffers bodies before checking their size holds 200 MiB here; one that refuses
 * by `Content-Length`, and counts the bytes it actually reads when there is none (chunked), stays
 * near its idle size. Both framings are run, each against a fresh server.
 *
 * The client is raw TCP on loopback so the pacing is exact and nothing buffers on this side.
 *
 * Usage: `deno run -A bench/upload_memory.ts [--target=beacon|echo] [--concurrency=200]
 *   [--size=1048576] [--seconds=10] [--chunk=16384] [--modes=length,chunked] [--limit-mib=150]
 *   [--beacon=src/adapter/deno/server.ts] [--out=bench/results/upload_memory.json] [--strict]`
 *
 * `--target=echo` runs the same load against bench/echo.ts, which buffers and parses whole
 * bodies: a control that shows what the measurement looks like when memory does grow.
 *
 * @module
 */

import { countRows } from "./lib/db.ts";
import { parseOptions, positive } from "./lib/options.ts";
import { type RunningServer, startServer } from "./lib/process.ts";
import { median, num, table } from "./lib/report.ts";
import {
  assertBeaconExists,
  BEACON_ENTRY,
  beaconNpmCache,
  beaconSpec,
  echoSpec,
  gitState,
  ROOT,
  toolVersions,
} from "./lib/servers.ts";

type Mode = "length" | "chunked";

interface Outcome {
  /** HTTP status of the answer, or null when none came. */
  status: number | null;
  sentBytes: number;
  /** Body bytes sent when the answer's status line arrived (how early the server refused). */
  sentAtAnswer: number | null;
  /** Why sending stopped early: the server closed, a write failed, or it stopped reading. */
  stopped: "complete" | "server-closed" | "write-error" | "stalled";
  ms: number;
}

interface Gauge {
  open: number;
  maxOpen: number;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const HOST = "127.0.0.1";

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Resolves with the promise's value, or with `fallback` once `ms` have passed. */
function within<T>(promise: Promise<T>, ms: number, fallback: T): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<T>((resolve) => timer = setTimeout(() => resolve(fallback), ms));
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

async function writeAll(conn: Deno.Conn, data: Uint8Array): Promise<void> {
  let offset = 0;
  while (offset < data.length) offset += await conn.write(data.subarray(offset));
}

/**
 * One slow upload. Connects and sends the head at once, waits for `go` (so every connection is
 * open before any body byte flows), then sends `chunk` bytes every `intervalMs` until the body
 * is complete or the server stops it. A hostile client ignores an early answer and keeps
 * sending, so an early 413 only ends the upload when the server also closes the connection.
 */
async function upload(
  port: number,
  path: string,
  mode: Mode,
  size: number,
  chunk: number,
  intervalMs: number,
  go: Promise<void>,
  opened: () => void,
  gauge: Gauge,
): Promise<Outcome> {
  const started = performance.now();
  const conn = await Deno.connect({ hostname: HOST, port });
  gauge.open++;
  gauge.maxOpen = Math.max(gauge.maxOpen, gauge.open);
  let status: number | null = null;
  let sentAtAnswer: number | null = null;
  let closed = false;
  let sent = 0;
  const reading = (async () => {
    const buffer = new Uint8Array(16 * 1024);
    let head = "";
    for (;;) {
      let n: number | null;
      try {
        n = await conn.read(buffer);
      } catch {
        n = null;
      }
      if (n === null) break;
      if (status === null && head.length < 4096) {
        head += decoder.decode(buffer.subarray(0, n));
        const match = head.match(/^HTTP\/1\.[01] (\d{3})/);
        if (match) {
          status = Number(match[1]);
          sentAtAnswer = sent;
        }
      }
    }
    closed = true;
  })();

  const framing = mode === "length"
    ? `Content-Length: ${size}\r\n`
    : "Transfer-Encoding: chunked\r\n";
  let stopped: Outcome["stopped"] = "complete";
  try {
    await writeAll(
      conn,
      encoder.encode(
        `POST ${path} HTTP/1.1\r\nHost: ${HOST}:${port}\r\n` +
          `Content-Type: text/plain; charset=utf-8\r\n${framing}Connection: close\r\n\r\n`,
      ),
    );
  } catch {
    stopped = "write-error";
  }
  opened();
  await go;

  const body = encoder.encode("x".repeat(chunk));
  // A server that neither reads nor closes would block a write forever; give each write a
  // generous bound and call that a stall.
  const writeBound = Math.max(5000, intervalMs * 20);
  while (stopped === "complete" && sent < size) {
    if (closed) {
      stopped = "server-closed";
      break;
    }
    const n = Math.min(chunk, size - sent);
    const data = mode === "length" ? body.subarray(0, n) : frame(body.subarray(0, n));
    const result = await within(
      writeAll(conn, data).then(() => "ok" as const, () => "error" as const),
      writeBound,
      "stalled" as const,
    );
    if (result === "error") stopped = closed ? "server-closed" : "write-error";
    else if (result === "stalled") stopped = "stalled";
    else sent += n;
    if (sent < size) await sleep(intervalMs);
  }
  if (stopped === "complete" && mode === "chunked") {
    await within(
      writeAll(conn, encoder.encode("0\r\n\r\n")).catch(() => {}),
      writeBound,
      undefined,
    );
  }
  // The answer may still be on its way; wait a while for it or for the close.
  await within(reading, 15_000, undefined);
  try {
    conn.close();
  } catch {
    // The read loop's end already closed it.
  }
  gauge.open--;
  return { status, sentBytes: sent, sentAtAnswer, stopped, ms: performance.now() - started };
}

function frame(data: Uint8Array): Uint8Array {
  const head = encoder.encode(`${data.length.toString(16)}\r\n`);
  const out = new Uint8Array(head.length + data.length + 2);
  out.set(head, 0);
  out.set(data, head.length);
  out.set(encoder.encode("\r\n"), head.length + data.length);
  return out;
}

interface ModeResult {
  mode: Mode;
  concurrency: number;
  maxOpen: number;
  baselineMiB: number;
  peakMiB: number;
  sampledPeakMiB: number;
  statuses: Record<string, number>;
  stopped: Record<string, number>;
  bytesSentMiB: number;
  /** Median body bytes the client had sent when the answer arrived; null if none arrived. */
  medianKiBAtAnswer: number | null;
  seconds: number;
  rows: number | null;
  rowsNote: string;
  serverExit: number;
}

async function main(): Promise<number> {
  const o = parseOptions(Deno.args, {
    target: { type: "string", default: "beacon" },
    concurrency: { type: "string" },
    size: { type: "string" },
    seconds: { type: "string" },
    chunk: { type: "string" },
    "limit-mib": { type: "string" },
    table: { type: "string", default: "submissions" },
    beacon: { type: "string", default: BEACON_ENTRY },
    out: { type: "string", default: `${ROOT}/bench/results/upload_memory.json` },
    modes: { type: "string", default: "length,chunked" },
    strict: { type: "boolean", default: false },
  });
  const target = o.target!;
  if (target !== "beacon" && target !== "echo") {
    throw new Error(`Cannot use --target=${target}: choose beacon or echo`);
  }
  const concurrency = positive(o.concurrency, "concurrency", 200);
  const size = positive(o.size, "size", 1024 * 1024);
  const seconds = positive(o.seconds, "seconds", 10);
  const chunk = positive(o.chunk, "chunk", 16 * 1024);
  const limitMiB = positive(o["limit-mib"], "limit-mib", 150);
  const tableName = o.table!;
  const entry = o.beacon!;
  const out = o.out!;
  const npmCache = target === "beacon" ? await beaconNpmCache() : "";
  const modes = o.modes!.split(",") as Mode[];
  for (const mode of modes) {
    if (mode !== "length" && mode !== "chunked") {
      throw new Error(`Cannot use mode ${mode}: choose length or chunked`);
    }
  }
  if (target === "beacon") assertBeaconExists(entry);

  const git = await gitState();
  const path = target === "beacon" ? "/beacon/0.1/submissions" : "/";
  const intervalMs = (seconds * 1000) / Math.ceil(size / chunk);
  const dir = await Deno.makeTempDir({ prefix: "beacon-upload-" });
  const results: ModeResult[] = [];
  console.log(
    `· ${concurrency} uploads of ${num(size)} bytes to ${target} ${path}, ` +
      `${num(chunk)} bytes every ${num(intervalMs)} ms (~${seconds}s each)`,
  );

  try {
    for (const mode of modes) {
      const databasePath = `${dir}/upload-${mode}.db`;
      // Rate limit off: 200 uploads from one address would otherwise be refused before the body
      // limit is ever exercised.
      const spec = target === "beacon"
        ? beaconSpec({ databasePath, rateLimit: "off", name: `beacon (${mode})`, entry, npmCache })
        : echoSpec();
      const server: RunningServer = await startServer(spec);
      await sleep(500);
      server.rss.sample();
      const baselineMiB = server.rss.report().currentMiB;

      const gauge: Gauge = { open: 0, maxOpen: 0 };
      let release!: () => void;
      const go = new Promise<void>((resolve) => release = resolve);
      let ready = 0;
      const opened = () => {
        if (++ready === concurrency) release();
      };
      const t0 = performance.now();
      const uploads = Array.from(
        { length: concurrency },
        () =>
          upload(server.port, path, mode, size, chunk, intervalMs, go, opened, gauge).catch(
            (): Outcome => {
              opened();
              return {
                status: null,
                sentBytes: 0,
                sentAtAnswer: null,
                stopped: "write-error",
                ms: 0,
              };
            },
          ),
      );
      const outcomes = await Promise.all(uploads);
      const elapsed = (performance.now() - t0) / 1000;
      await sleep(500);

      const stop = await server.stop();
      const rss = server.rss.report();
      let rows: number | null = null;
      let rowsNote = "";
      if (target === "beacon") {
        try {
          [rows, rowsNote] = await countRows(databasePath, tableName);
        } catch (error) {
          rowsNote = `cannot count rows: ${error instanceof Error ? error.message : error}`;
        }
      }
      const answered = outcomes.flatMap((o) => o.sentAtAnswer === null ? [] : [o.sentAtAnswer]);
      const count = (keys: string[]) =>
        keys.reduce<Record<string, number>>((acc, k) => ({ ...acc, [k]: (acc[k] ?? 0) + 1 }), {});
      const result: ModeResult = {
        mode,
        concurrency,
        maxOpen: gauge.maxOpen,
        baselineMiB,
        peakMiB: rss.peakMiB,
        sampledPeakMiB: rss.sampledPeakMiB,
        statuses: count(outcomes.map((o) => o.status === null ? "none" : String(o.status))),
        stopped: count(outcomes.map((o) => o.stopped)),
        bytesSentMiB: Math.round(outcomes.reduce((s, o) => s + o.sentBytes, 0) / 2 ** 20),
        medianKiBAtAnswer: answered.length > 0 ? Math.round(median(answered) / 1024) : null,
        seconds: Math.round(elapsed * 10) / 10,
        rows,
        rowsNote,
        serverExit: stop.code,
      };
      results.push(result);
      console.log(
        `· ${mode}: peak ${result.peakMiB} MiB (idle ${baselineMiB}), ` +
          `${result.maxOpen} open at once, answers ${JSON.stringify(result.statuses)}, ` +
          `answered after ${result.medianKiBAtAnswer ?? "?"} KiB (median), ` +
          `sending ${JSON.stringify(result.stopped)}, ${result.bytesSentMiB} MiB sent ` +
          `in ${result.seconds}s`,
      );
    }
  } finally {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }

  const checks: { name: string; pass: boolean; detail: string }[] = [];
  for (const r of results) {
    checks.push({
      name: `${r.mode}: peak RSS < ${limitMiB} MiB`,
      pass: r.peakMiB < limitMiB,
      detail: `${r.peakMiB} MiB`,
    });
    checks.push({
      name: `${r.mode}: all ${r.concurrency} uploads open at once`,
      pass: r.maxOpen === r.concurrency,
      detail: `${r.maxOpen} at most`,
    });
    if (target === "beacon") {
      const accepted = Object.entries(r.statuses)
        .filter(([s]) => s.startsWith("2"))
        .reduce((sum, [, n]) => sum + n, 0);
      checks.push({
        name: `${r.mode}: nothing accepted or stored`,
        pass: accepted === 0 && r.rows === 0,
        detail: `${accepted} 2xx, ${r.rows ?? `? rows (${r.rowsNote})`} rows`,
      });
    }
  }

  console.log(
    "\n" + table(
      [
        "framing",
        "peak RSS MiB",
        "idle MiB",
        "open at once",
        "answers",
        "answered after KiB",
        "sending ended by",
      ],
      results.map((r) => [
        r.mode,
        num(r.peakMiB, 1),
        num(r.baselineMiB, 1),
        `${r.maxOpen}/${r.concurrency}`,
        Object.entries(r.statuses).map(([k, v]) => `${k}: ${v}`).join(", "),
        num(r.medianKiBAtAnswer),
        Object.entries(r.stopped).map(([k, v]) => `${k}: ${v}`).join(", "),
      ]),
    ),
  );
  console.log(
    "\n" + checks.map((c) => `${c.pass ? "PASS" : "MISS"}  ${c.name}: ${c.detail}`).join("\n"),
  );

  await Deno.mkdir(out.replace(/\/[^/]*$/, ""), { recursive: true });
  await Deno.writeTextFile(
    out,
    JSON.stringify(
      {
        schema: "beacon-upload-memory/1",
        command: ["deno", "run", "-A", "bench/upload_memory.ts", ...Deno.args].join(" "),
        at: new Date().toISOString(),
        git,
        tools: await toolVersions(),
        settings: { target, concurrency, size, seconds, chunk, limitMiB, modes },
        results,
        checks,
      },
      null,
      2,
    ) + "\n",
  );
  console.log(`\nwrote ${out.startsWith(ROOT) ? out.slice(ROOT.length + 1) : out}`);
  return checks.some((c) => !c.pass) && o.strict ? 1 : 0;
}

if (import.meta.main) {
  try {
    Deno.exit(await main());
  } catch (error) {
    console.error(error instanceof Error ? error.message : error);
    Deno.exit(2);
  }
}
