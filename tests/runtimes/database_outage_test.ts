/**
 * A remote database that cannot be reached does not stop the start: the server listens, answers
 * `503 unavailable`, retries, and each `database` log line says why in words:
 * connection refused, timeout, TLS failure, HTTP status. The faults are real: a port nothing
 * listens on, a listener that accepts and never answers, TLS spoken to a real sqld's plain HTTP
 * port, a real sqld that requires a JWT given a wrong one. Credentials in the URL's `authToken`
 * parameter and in `BEACON_DATABASE_AUTH_TOKEN` are never printed (a URL with userinfo is refused
 * at start: tests/runtimes/startup_test.ts).
 */
import { assert, assertStrictEquals } from "../support/assert.ts";
import { jwtAuth, startSqld } from "../support/sqld.ts";
import { type RunningServer, startRuntime, startServerProcess } from "../../scripts/runtimes.ts";

const SECRET = "SECRETxyz";

async function untilLine(
  server: RunningServer,
  predicate: (line: Record<string, unknown>) => boolean,
): Promise<Record<string, unknown>> {
  const deadline = Date.now() + 60_000;
  while (true) {
    const line = server.lines.find(predicate);
    if (line !== undefined) return line;
    if (Date.now() > deadline) {
      throw new Error(`no such line: ${JSON.stringify(server.lines)}\n${server.stderr()}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

type Entry = "deno task start" | "node" | "bun";

function start(entry: Entry, env: Record<string, string>): Promise<RunningServer> {
  const all = { PORT: "0", BEACON_HOSTNAME: "127.0.0.1", BEACON_LOG: "off", ...env };
  return entry === "deno task start"
    ? startServerProcess(Deno.execPath(), ["task", "start"], all, 120_000)
    : startRuntime(entry, all);
}

/** Starts `entry` on `env`, and returns the cause its first `unavailable` line gives. */
async function causeOfOutage(entry: Entry, env: Record<string, string>): Promise<string> {
  const server = await start(entry, env);
  try {
    const line = await untilLine(
      server,
      (line) => line.event === "database" && line.state === "unavailable",
    );
    const response = await fetch(`${server.url}/.well-known/autonomous-agent`);
    assertStrictEquals(response.status, 503);
    assertStrictEquals((await response.json()).error.code, "unavailable");
    const printed = JSON.stringify(server.lines) + server.stderr();
    assert(!printed.includes(SECRET), `no credential is printed: ${printed}`);
    // When, and how many attempts in a row have failed.
    assert(!Number.isNaN(Date.parse(String(line.time))), `a time: ${JSON.stringify(line)}`);
    assertStrictEquals(line.failures, 1);
    return String(line.cause);
  } finally {
    await server.stop();
  }
}

/** A loopback port nothing listens on. */
function closedPort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  return port;
}

for (const entry of ["deno task start", "node", "bun"] as const) {
  Deno.test(`${entry}: a refused database connection is logged as such, without credentials`, async () => {
    const cause = await causeOfOutage(entry, {
      BEACON_DATABASE_URL: `http://127.0.0.1:${closedPort()}?authToken=${SECRET}`,
      BEACON_DATABASE_AUTH_TOKEN: SECRET,
    });
    assertStrictEquals(cause, "connection refused (nothing listens at the database address)");
  });

  Deno.test(`${entry}: a wrong database token is logged as HTTP status 401`, async () => {
    const auth = await jwtAuth();
    const sqld = await startSqld({ jwtPublicKey: auth.publicKey });
    try {
      const cause = await causeOfOutage(entry, {
        BEACON_DATABASE_URL: sqld.url,
        BEACON_DATABASE_AUTH_TOKEN: SECRET,
      });
      assertStrictEquals(
        cause,
        "HTTP status 401 from the database (check BEACON_DATABASE_AUTH_TOKEN)",
      );
    } finally {
      await sqld.close();
    }
  });
}

/** Resolves `run` with a loopback listener that `hold`s each accepted connection. */
async function withListener(
  hold: (connection: Deno.Conn) => Promise<void>,
  run: (port: number) => Promise<void>,
): Promise<void> {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const held: Deno.Conn[] = [];
  const accepting = (async () => {
    for await (const connection of listener) {
      held.push(connection);
      hold(connection).catch(() => {});
    }
  })();
  try {
    await run((listener.addr as Deno.NetAddr).port);
  } finally {
    listener.close();
    for (const connection of held) {
      try {
        connection.close();
      } catch {
        // already closed by `hold`
      }
    }
    await accepting.catch(() => {});
  }
}

for (const entry of ["deno task start", "node", "bun"] as const) {
  Deno.test(`${entry}: https:// to a plain-HTTP sqld is logged as a TLS failure`, async () => {
    const sqld = await startSqld();
    try {
      const cause = await causeOfOutage(entry, {
        BEACON_DATABASE_URL: sqld.url.replace(/^http:/, "https:"),
      });
      assertStrictEquals(
        cause,
        "TLS failure (the database did not complete a valid TLS handshake)",
      );
    } finally {
      await sqld.close();
    }
  });

  Deno.test(`${entry}: a database that accepts and never answers is logged as a timeout`, async () => {
    // A black hole: connections are accepted and held, and no byte is ever sent back.
    await withListener(() => new Promise(() => {}), async (port) => {
      const cause = await causeOfOutage(entry, {
        BEACON_DATABASE_URL: `http://127.0.0.1:${port}`,
        BEACON_DATABASE_TIMEOUT_MS: "500",
      });
      assertStrictEquals(cause, "timeout (the database did not answer within the deadline)");
    });
  });

  Deno.test(`${entry}: a database that resets the connection is logged as a reset`, async () => {
    // Read one byte of the request and close with the rest unread: the kernel answers RST.
    await withListener(async (connection) => {
      await connection.read(new Uint8Array(1));
      connection.close();
    }, async (port) => {
      const cause = await causeOfOutage(entry, { BEACON_DATABASE_URL: `http://127.0.0.1:${port}` });
      assertStrictEquals(cause, "connection reset by the database");
    });
  });
}

/**
 * A name under `.invalid` never resolves (RFC 6761 §6.4), but the resolvers here send the query
 * to the configured name servers before saying so: unless every one is on loopback, that would be
 * traffic off this machine, so the DNS case runs only where it cannot leave it.
 */
const nameServers = (await Deno.readTextFile("/etc/resolv.conf").catch(() => ""))
  .split("\n").map((line) => /^\s*nameserver\s+(\S+)/.exec(line)?.[1]).filter((x) =>
    x !== undefined
  );
const dnsStaysLocal = nameServers.length > 0 &&
  nameServers.every((server) => /^(127\.|::1$)/.test(server));

for (const entry of ["deno task start", "node", "bun"] as const) {
  Deno.test({
    name: `${entry}: a database host that does not resolve is logged as a DNS failure` +
      (dnsStaysLocal ? "" : " (skipped: the name servers are not on loopback)"),
    ignore: !dnsStaysLocal,
    async fn() {
      const cause = await causeOfOutage(entry, {
        BEACON_DATABASE_URL: "http://beacon-database.invalid:8080",
      });
      assertStrictEquals(cause, "DNS failure (the database host name does not resolve)");
    },
  });
}
