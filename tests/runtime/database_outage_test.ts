/**
 * A remote database that cannot be reached does not stop the start: the server listens, answers
 * `503 unavailable`, retries, and each `database` log line says why in words (issue 20, item 2):
 * connection refused, timeout, TLS failure, HTTP status. The faults are real: a port nothing
 * listens on, a listener that accepts and never answers, TLS spoken to a real sqld's plain HTTP
 * port, a real sqld that requires a JWT given a wrong one. Credentials in the URL's `authToken`
 * parameter and in `BEACON_DATABASE_AUTH_TOKEN` are never printed (a URL with userinfo is refused
 * at start: tests/runtime/startup_test.ts).
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

Deno.test("deno task start: https:// to a plain-HTTP sqld is logged as a TLS failure", async () => {
  const sqld = await startSqld();
  try {
    const cause = await causeOfOutage("deno task start", {
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

Deno.test("deno task start: a database that accepts and never answers is logged as a timeout", async () => {
  // A black hole: connections are accepted and held, and no byte is ever sent back.
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const held: Deno.Conn[] = [];
  const accepting = (async () => {
    for await (const connection of listener) held.push(connection);
  })();
  try {
    const cause = await causeOfOutage("deno task start", {
      BEACON_DATABASE_URL: `http://127.0.0.1:${(listener.addr as Deno.NetAddr).port}`,
      BEACON_DATABASE_TIMEOUT_MS: "500",
    });
    assertStrictEquals(cause, "timeout (the database did not answer within the deadline)");
  } finally {
    listener.close();
    for (const connection of held) connection.close();
    await accepting.catch(() => {});
  }
});
