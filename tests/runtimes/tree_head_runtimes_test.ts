/**
 * Server-signed tree heads on the other runtimes, each started as its documented task starts it
 * (scripts/runtimes.ts): Node and Bun sign the final head at a graceful stop (so `review verify
 * --trust <published key>` exits 0), and workerd signs none, since nothing may outlive a request
 * there (docs/deploy.md, "Cloudflare Workers"), while still serving the route.
 */
import { type RuntimeName, startRuntime } from "../../scripts/runtimes.ts";
import { assertMatch, assertStrictEquals } from "../support/assert.ts";
import { review } from "../../review/tests/support.ts";
import { startSqld } from "../support/sqld.ts";
import { checkpointSizes, submitText as submit } from "../support/tree_heads.ts";

const LOOPBACK = { PORT: "0", BEACON_HOSTNAME: "127.0.0.1", BEACON_LOG: "off" };

for (const runtime of ["node", "bun"] as RuntimeName[]) {
  Deno.test(`${runtime}: a graceful stop signs the head, and verify --trust exits 0`, async () => {
    const directory = await Deno.makeTempDir({ prefix: "beacon-tree-head-" });
    const databaseUrl = `file:${directory}/beacon.db`;
    try {
      const server = await startRuntime(runtime, {
        ...LOOPBACK,
        BEACON_DATABASE_URL: databaseUrl,
      });
      let key = "";
      try {
        const discovery = await (await fetch(server.url + "/.well-known/autonomous-agent")).json();
        key = discovery.receiptSigning.publicKey;
        await submit(server.url, "one");
        await submit(server.url, "two");
      } finally {
        assertStrictEquals((await server.stop("SIGTERM")).code, 0);
      }
      assertStrictEquals((await checkpointSizes(databaseUrl)).at(-1), 2);
      const run = await review(databaseUrl, ["verify", "--trust", key]);
      assertStrictEquals(run.code, 0, run.stdout + run.stderr);
      assertMatch(run.stdout, /^no problems found$/m);
    } finally {
      await Deno.remove(directory, { recursive: true });
    }
  });
}

Deno.test("workerd signs no tree heads, and its route answers 404 until someone else signs", async () => {
  const sqld = await startSqld();
  try {
    const server = await startRuntime("workers", {
      ...LOOPBACK,
      BEACON_DATABASE_URL: sqld.url,
      BEACON_CHECKPOINT_INTERVAL: "1s", // not applied on Workers
    });
    try {
      const discovery = await (await fetch(server.url + "/.well-known/autonomous-agent")).json();
      assertStrictEquals(discovery.endpoints.treeHead, server.url + "/beacon/0.1/tree-head");
      await submit(server.url, "one");
      const head = await fetch(discovery.endpoints.treeHead);
      assertStrictEquals(head.status, 404);
      assertStrictEquals((await head.json()).error.code, "not_found");
    } finally {
      await server.stop("SIGTERM");
    }
    assertStrictEquals((await checkpointSizes(sqld.url)).length, 0);
  } finally {
    await sqld.close();
  }
});
