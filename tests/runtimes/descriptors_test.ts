/**
 * A passing fault never ends in a permanent refusal. Each server entry runs under a lowered
 * file-descriptor limit (`prlimit --nofile`) on a real embedded database; the test holds idle
 * loopback connections until the server is out of descriptors (on Deno and Node the file
 * guard's check could not run, and the server says so: `DatabaseFileCheckFailed`), then closes
 * them. The next
 * submissions are answered 202 again, and no overwrite (nor any other file change) is reported:
 * a check that could not run is not evidence (src/store/file_guard.ts).
 */
import { assert, assertMatch, assertStrictEquals } from "../support/assert.ts";
import { closeAll, startServer } from "../support/server.ts";
import { freePort, startRuntime } from "../../scripts/runtimes.ts";

const FD_LIMIT = 128;
/** More than the limit: the connections past it are refused or closed, which is the point. */
const CONNECTIONS = 200;
const WRAPPER = ["prlimit", `--nofile=${FD_LIMIT}:${FD_LIMIT}`];

/** How long the test waits for something that must happen (bounded, never a pass condition). */
const PATIENCE_MS = 60_000;

interface Server {
  readonly url: string;
  stderr(): string;
  stop(): Promise<Deno.CommandStatus>;
}

/** The status of one submission, or 0 when the server could not be reached. */
async function submit(url: string, text: string): Promise<number> {
  try {
    const response = await fetch(`${url}/beacon/0.1/submissions`, {
      method: "POST",
      headers: { "content-type": "text/plain; charset=utf-8" },
      body: text,
      signal: AbortSignal.timeout(5_000),
    });
    await response.body?.cancel();
    return response.status;
  } catch {
    return 0;
  }
}

/** Opens up to `count` idle connections (those the server cannot take are refused or closed). */
async function holdIdle(url: string, count: number): Promise<Deno.Conn[]> {
  const { hostname, port } = new URL(url);
  const connections: Deno.Conn[] = [];
  for (let i = 0; i < count; i++) {
    try {
      connections.push(await Deno.connect({ hostname, port: Number(port) }));
    } catch {
      // refused: the server is out of descriptors (or listening again)
    }
  }
  return connections;
}

/** Waits (bounded) until `predicate` holds, polling every 100 ms. */
async function until(what: string, predicate: () => boolean | Promise<boolean>): Promise<void> {
  const deadline = Date.now() + PATIENCE_MS;
  while (!(await predicate())) {
    if (Date.now() > deadline) throw new Error(`not within ${PATIENCE_MS} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** The JSON lines of stderr whose `name` is `name`. */
function errorLines(server: Server, name: string): Record<string, unknown>[] {
  return server.stderr().split("\n").flatMap((line) => {
    try {
      const parsed = JSON.parse(line);
      return parsed?.name === name ? [parsed] : [];
    } catch {
      return [];
    }
  });
}

/** How many descriptors the process `pid` has open now (Linux `/proc`). */
async function descriptors(pid: number): Promise<number> {
  let count = 0;
  for await (const _ of Deno.readDir(`/proc/${pid}/fd`)) count++;
  return count;
}

/**
 * Deno and Node: the guard's read of the token opens the file again, which fails while the
 * process is out of descriptors, and the server says so. Bun: SQLite reuses a descriptor it
 * already holds for that file, so the read succeeds and nothing is to be reported; there the
 * test holds the connections until the server's own idle timeout (10 s, several guard checks)
 * closes them, having seen it at its limit.
 */
async function exhaust(server: Server, runtime: string, pid: number): Promise<void> {
  let held: Deno.Conn[] = [];
  const top = async () => {
    held = held.concat(await holdIdle(server.url, CONNECTIONS - held.length));
  };
  try {
    if (runtime !== "bun") {
      await until(`${runtime} reports a check that could not run`, async () => {
        if (errorLines(server, "DatabaseFileCheckFailed").length > 0) return true;
        await top(); // a server may close some: topped up
        return errorLines(server, "DatabaseFileCheckFailed").length > 0;
      });
      const line = errorLines(server, "DatabaseFileCheckFailed")[0];
      assert(typeof line.cause === "string" && line.cause !== "", "the line names a cause");
      assert(typeof line.time === "string", "the line says when");
      return;
    }
    await top();
    await until("bun at its descriptor limit", async () => await descriptors(pid) >= FD_LIMIT);
    await until("bun closing idle connections", async () => await descriptors(pid) < FD_LIMIT / 2);
  } finally {
    closeAll(held);
  }
}

async function recoversFromExhaustion(
  server: Server & { lines: Record<string, unknown>[] },
  runtime: string,
  pid: number,
): Promise<void> {
  assertStrictEquals(await submit(server.url, "before"), 202, `${runtime} accepts at first`);
  await exhaust(server, runtime, pid);
  // Where the entry sees accept errors (Deno's accept loop ends on EMFILE), the line says when
  // and why.
  for (const line of server.lines.filter((line) => line.event === "accept-error")) {
    assert(!Number.isNaN(Date.parse(String(line.time))), JSON.stringify(line));
    assertMatch(String(line.cause), /^out of file descriptors/);
  }
  if (runtime === "deno") {
    assert(server.lines.some((line) => line.event === "accept-error"), "deno logs accept errors");
  }
  let statuses: number[] = [];
  await until(`${runtime} accepts again`, async () => {
    statuses = [await submit(server.url, "after 1"), await submit(server.url, "after 2")];
    return statuses.every((status) => status === 202);
  });
  assert(
    !/DatabaseFile(Overwritten|Removed|Replaced)|Database(Wal|Shm)(Removed|Replaced)/.test(
      server.stderr(),
    ),
    `${runtime} reported no file change: ${server.stderr().slice(-2000)}`,
  );
}

Deno.test("deno: out of descriptors and back, submissions are accepted again and no file change is reported", async () => {
  const server = await startServer({
    env: { BEACON_LOG: "off", PORT: String(freePort()) },
    wrapper: WRAPPER,
  });
  try {
    await recoversFromExhaustion(server, "deno", server.pid);
  } finally {
    await server.stop();
    await Deno.remove(server.directory, { recursive: true }).catch(() => {});
  }
});

for (const runtime of ["node", "bun"] as const) {
  Deno.test(`${runtime}: out of descriptors and back, submissions are accepted again and no file change is reported`, async () => {
    const directory = await Deno.makeTempDir({ prefix: "beacon-descriptors-" });
    const server = await startRuntime(runtime, {
      PORT: "0",
      BEACON_HOSTNAME: "127.0.0.1",
      BEACON_LOG: "off",
      BEACON_RATE_LIMIT: "off",
      BEACON_DATABASE_URL: `file:${directory}/beacon.db`,
    }, WRAPPER);
    try {
      await recoversFromExhaustion(server, runtime, server.pid);
    } finally {
      await server.stop();
      await Deno.remove(directory, { recursive: true }).catch(() => {});
    }
  });
}
