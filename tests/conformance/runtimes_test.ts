/**
 * The conformance suite (suite.ts) against the Beacon on every runtime it claims, each started
 * the way its documented task starts it, on an ephemeral loopback port:
 *
 * | runtime | entry | database |
 * |---|---|---|
 * | Deno | `src/adapter/deno/server.ts` with `deno task start`'s narrow permissions | embedded file |
 * | Deno | the same | remote: a real sqld with JWT auth, through `@libsql/client/web` |
 * | Bun | `src/adapter/bun/server.ts` from the sources (`bun run start:bun`) | embedded file |
 * | Node | `dist/server.mjs` built by `npm run build` (`npm start`) | embedded file |
 * | workerd | `tools/workers/dist/worker.js` in Miniflare (`deno task start:workers`) | remote: sqld with JWT auth |
 *
 * The workerd run counts its rate limit in the database (`BEACON_RATE_LIMIT_STORE=database`), as
 * docs/deploy.md configures Workers; the others count in memory.
 *
 * Each runtime's tools are installed by the project's own script when missing (scripts/tools.ts);
 * a runtime that cannot be installed or started fails its test with the reason — it is never
 * skipped. The remote runs use Turso's real `sqld` (tests/support/sqld.ts).
 *
 * Every server runs with a rate limit and trusts one proxy hop, so the suite gives each request a
 * source of its own and checks the 429 on one source on purpose.
 */
import { assert, assertMatch, assertStrictEquals } from "../support/assert.ts";
import { jwtAuth, startSqld } from "../support/sqld.ts";
import { createClient } from "@libsql/client/web";
import { startServer } from "../support/server.ts";
import { type RunningServer, type RuntimeName, startRuntime } from "../../scripts/runtimes.ts";
import { runConformance } from "./suite.ts";

/** What every server under test is configured with (besides port, host and database). */
const COMMON = {
  BEACON_RATE_LIMIT: "5/1m",
  BEACON_STATUS_RATE_LIMIT: "5/1m",
  BEACON_TRUSTED_PROXIES: "1",
  BEACON_LOG: "off",
};

const LOOPBACK = { PORT: "0", BEACON_HOSTNAME: "127.0.0.1" };

async function withTempDir<T>(run: (directory: string) => Promise<T>): Promise<T> {
  const directory = await Deno.makeTempDir({ prefix: "beacon-conformance-" });
  try {
    return await run(directory);
  } finally {
    await Deno.remove(directory, { recursive: true }).catch(() => {});
  }
}

/** A remote database: a real sqld that requires a JWT, and the token for it. */
async function withRemoteDatabase<T>(
  run: (env: Record<string, string>, stored: () => Promise<number>) => Promise<T>,
): Promise<T> {
  const auth = await jwtAuth();
  const sqld = await startSqld({ jwtPublicKey: auth.publicKey });
  const authToken = await auth.token();
  try {
    return await run(
      { BEACON_DATABASE_URL: sqld.url, BEACON_DATABASE_AUTH_TOKEN: authToken },
      async () => {
        const db = createClient({ url: sqld.url, authToken });
        try {
          return Number((await db.execute("SELECT count(*) AS n FROM submissions")).rows[0].n);
        } finally {
          db.close();
        }
      },
    );
  } finally {
    await sqld.close();
  }
}

/** Runs the suite against a started server, then stops it and checks the clean shutdown. */
async function conformsThenStops(
  t: Deno.TestContext,
  server: { url: string; lines: Record<string, unknown>[] } & {
    stop(): Promise<Deno.CommandStatus>;
  },
): Promise<void> {
  let stopped = false;
  try {
    await runConformance(t, server.url, { distinctSources: true });
  } finally {
    const status = await server.stop();
    stopped = true;
    assertStrictEquals(status.code, 0, "the server exits 0 after SIGTERM");
    assert(server.lines.some((line) => line.event === "shutdown"), "it says it shut down");
  }
  assert(stopped);
}

async function startOrExplain(
  runtime: RuntimeName,
  env: Record<string, string>,
): Promise<RunningServer> {
  try {
    return await startRuntime(runtime, env);
  } catch (error) {
    throw new Error(
      `Cannot start the ${runtime} runtime for the conformance run (it is required, not ` +
        `optional): ${(error as Error).message}`,
    );
  }
}

Deno.test("conformance: Deno with an embedded file database", async (t) => {
  const server = await startServer({ env: COMMON });
  try {
    await conformsThenStops(t, server);
  } finally {
    await Deno.remove(server.directory, { recursive: true }).catch(() => {});
  }
});

Deno.test("conformance: Deno with a remote database (sqld over HTTP, web client)", async (t) => {
  await withRemoteDatabase(async (database, stored) => {
    const server = await startServer({ env: { ...COMMON, ...database } });
    try {
      await conformsThenStops(t, server);
    } finally {
      await Deno.remove(server.directory, { recursive: true }).catch(() => {});
    }
    assert(await stored() > 0, "the server stored through the remote database");
  });
});

Deno.test("conformance: Bun with an embedded file database", async (t) => {
  await withTempDir(async (directory) => {
    const server = await startOrExplain("bun", {
      ...LOOPBACK,
      ...COMMON,
      BEACON_DATABASE_URL: `file:${directory}/beacon.db`,
    });
    await conformsThenStops(t, server);
  });
});

Deno.test("conformance: Node with an embedded file database", async (t) => {
  await withTempDir(async (directory) => {
    const server = await startOrExplain("node", {
      ...LOOPBACK,
      ...COMMON,
      BEACON_DATABASE_URL: `file:${directory}/beacon.db`,
    });
    await conformsThenStops(t, server);
  });
});

Deno.test("conformance: workerd (Miniflare) with a remote database (sqld)", async (t) => {
  await withRemoteDatabase(async (database, stored) => {
    // As docs/deploy.md configures Workers: the rate limit counted in the shared database.
    const server = await startOrExplain("workers", {
      ...LOOPBACK,
      ...COMMON,
      ...database,
      BEACON_RATE_LIMIT_STORE: "database",
    });
    await conformsThenStops(t, server);
    assert(await stored() > 0, "the worker stored through the remote database");
  });
});

Deno.test("workerd refuses an embedded database with a clear error, answering 503", async () => {
  const server = await startOrExplain("workers", {
    ...LOOPBACK,
    BEACON_DATABASE_URL: "file:data/beacon.db",
  });
  try {
    const response = await fetch(server.url + "/.well-known/autonomous-agent", {
      signal: AbortSignal.timeout(30_000),
    });
    const body = await response.json();
    assertStrictEquals(response.status, 503);
    assertStrictEquals(body.error.code, "unavailable");
    assert(!JSON.stringify(body).includes("file:"), "the reason stays in the log");
  } finally {
    await server.stop();
  }
  assertMatch(server.stderr(), /Cannot start on Workers: BEACON_DATABASE_URL names an embedded/);
});
