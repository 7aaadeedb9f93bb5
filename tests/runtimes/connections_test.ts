/**
 * Connections cannot exhaust a server. Each server entry runs under a lowered
 * file-descriptor limit (`prlimit --nofile`); the test opens more idle and slowloris connections
 * than the limit allows. The server must stay up (accept errors, `EMFILE`, are logged with
 * back-off where the runtime reports them to the entry, never fatal) and answer again once they
 * close. Where the entry controls connection
 * deadlines, slow connections are closed by it:
 *
 * - Node (`headersTimeout` 10 s, `keepAliveTimeout` 5 s): a slowloris head and an idle
 *   keep-alive connection are both closed by the server.
 * - Bun (`idleTimeout` 10 s): a connection that stopped sending is closed by the server.
 * - Deno: `Deno.serve` offers no deadline (docs/deploy.md says what to put in front); only
 *   survival is checked.
 */
import { assert, assertStrictEquals } from "../support/assert.ts";
import { closeAll, startServer } from "../support/server.ts";
import { freePort, type RunningServer, startRuntime } from "../../scripts/runtimes.ts";

/** The descriptor limit the servers run under, and how many connections the test opens. */
const FD_LIMIT = 128;
const CONNECTIONS = 200;
const WRAPPER = ["prlimit", `--nofile=${FD_LIMIT}:${FD_LIMIT}`];

/** How long the test waits for something that must happen (bounded, never a pass condition). */
const PATIENCE_MS = 60_000;

async function answers(url: string): Promise<boolean> {
  try {
    const response = await fetch(`${url}/.well-known/autonomous-agent`, {
      signal: AbortSignal.timeout(5_000),
    });
    await response.body?.cancel();
    return response.status === 200;
  } catch {
    return false;
  }
}

/** Waits until the server answers again (a Deno entry relistens after a back-off). */
async function untilAnswers(url: string): Promise<void> {
  const deadline = Date.now() + PATIENCE_MS;
  while (!(await answers(url))) {
    if (Date.now() > deadline) throw new Error(`${url} did not answer again`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/** Opens up to `count` connections; half idle, half sending the start of a head (slowloris). */
async function flood(url: string, count: number): Promise<Deno.Conn[]> {
  const { hostname, port } = new URL(url);
  const connections: Deno.Conn[] = [];
  for (let i = 0; i < count; i++) {
    try {
      const connection = await Deno.connect({ hostname, port: Number(port) });
      connections.push(connection);
      if (i % 2 === 1) {
        await connection.write(new TextEncoder().encode("GET / HTTP/1.1\r\nHost: x\r\nX-Slow: "))
          .catch(() => 0);
      }
    } catch {
      // refused: the server is out of descriptors (or relistening); that is the point
    }
  }
  return connections;
}

/** Resolves true when the server closes `connection` (read returns EOF or fails). */
async function closedByServer(connection: Deno.Conn, dribble: boolean): Promise<boolean> {
  const deadline = Date.now() + PATIENCE_MS;
  const buffer = new Uint8Array(4096);
  const reading = (async () => {
    while (true) {
      const n = await connection.read(buffer).catch(() => null);
      if (n === null) return true;
    }
  })();
  while (Date.now() < deadline) {
    const done = await Promise.race([
      reading,
      new Promise<false>((resolve) => setTimeout(() => resolve(false), 1_000)),
    ]);
    if (done) return true;
    if (dribble) await connection.write(new TextEncoder().encode("x")).catch(() => 0);
  }
  return false;
}

async function survivesExhaustion(server: RunningServer, runtime: string): Promise<void> {
  assert(await answers(server.url), `${runtime} answers before the flood`);
  const connections = await flood(server.url, CONNECTIONS);
  assert(connections.length > 0, "some connections were opened");
  closeAll(connections);
  await untilAnswers(server.url);
  // Once more, to see it survive a second exhaustion after recovering.
  closeAll(await flood(server.url, CONNECTIONS));
  await untilAnswers(server.url);
}

async function stopsCleanly(server: RunningServer, runtime: string): Promise<void> {
  const status = await server.stop();
  assertStrictEquals(status.code, 0, `${runtime} exits 0 after SIGTERM: ${server.stderr()}`);
  assert(!/uncaught|panic/i.test(server.stderr()), server.stderr());
}

Deno.test("the Deno entry survives running out of file descriptors and answers again", async () => {
  // A fixed port, as in production: `deno task start`'s permissions name the configured port, so
  // with PORT=0 the entry may not listen again on the port the kernel chose.
  const server = await startServer({
    env: { BEACON_LOG: "off", PORT: String(freePort()) },
    wrapper: WRAPPER,
  });
  try {
    await survivesExhaustion(server, "deno");
    assert(
      server.lines.some((line) => line.event === "accept-error"),
      "the accept error was logged",
    );
    await stopsCleanly(server, "deno");
  } finally {
    await server.stop();
    await Deno.remove(server.directory, { recursive: true }).catch(() => {});
  }
});

for (const runtime of ["node", "bun"] as const) {
  Deno.test(`the ${runtime} entry survives running out of file descriptors and closes slow connections`, async () => {
    const directory = await Deno.makeTempDir({ prefix: "beacon-connections-" });
    const server = await startRuntime(runtime, {
      PORT: "0",
      BEACON_HOSTNAME: "127.0.0.1",
      BEACON_LOG: "off",
      BEACON_DATABASE_URL: `file:${directory}/beacon.db`,
    }, WRAPPER);
    try {
      await survivesExhaustion(server, runtime);
      // Neither reports EMFILE to the entry as a rule: libuv (Node) accepts and closes the
      // connections over the limit itself, Bun accepts in its own native loop. Node's `error`
      // listener logs what libuv does pass on.
      const { hostname, port } = new URL(server.url);
      // A head that stopped arriving: Node's headersTimeout and Bun's idleTimeout close it.
      const stalled = await Deno.connect({ hostname, port: Number(port) });
      await stalled.write(new TextEncoder().encode("GET / HTTP/1.1\r\nHost: x\r\n"));
      assert(await closedByServer(stalled, false), `${runtime} closed a stalled head`);
      closeAll([stalled]);
      if (runtime === "node") {
        // A slowloris head, one byte a second: only a header deadline stops it.
        const slow = await Deno.connect({ hostname, port: Number(port) });
        await slow.write(new TextEncoder().encode("GET / HTTP/1.1\r\nHost: x\r\nX-Slow: "));
        assert(await closedByServer(slow, true), "node closed a slowloris head");
        closeAll([slow]);
      }
      assert(await answers(server.url), `${runtime} still answers`);
      await stopsCleanly(server, runtime);
    } finally {
      await server.stop();
      await Deno.remove(directory, { recursive: true }).catch(() => {});
    }
  });
}
