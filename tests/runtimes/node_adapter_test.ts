/**
 * The `node:http` adapter (src/adapter/node/node.ts) inside a real Node process: an existing Node app
 * (node_embed.mjs) mounts the Beacon under `/beacon` from the built package (`dist/mod.mjs` and
 * `dist/node.mjs`, `npm run build`), next to routes of its own. What the adapter must get right is
 * checked on the wire: the prefix, the body as a stream the core counts (chunked bodies,
 * declared lengths, stalled and aborted senders), and the host app surviving all of it.
 */
import { assert, assertStrictEquals } from "../support/assert.ts";
import { rawExchange } from "../support/in_process.ts";
import { build } from "../../scripts/build.ts";
import { type RunningServer, startServerProcess } from "../../scripts/runtimes.ts";
import { nodeExecutable } from "../../scripts/tools.ts";

const SUBMIT = "/beacon/beacon/0.1/submissions";
const TEXT = "text/plain; charset=utf-8";

async function withEmbeddedNodeApp(run: (server: RunningServer) => Promise<void>): Promise<void> {
  const directory = await Deno.makeTempDir({ prefix: "beacon-node-embed-" });
  const entry = await build("package"); // dist/server.mjs, beside the modules imported here
  const dist = entry.slice(0, entry.lastIndexOf("/") + 1);
  const script = new URL("./node_embed.mjs", import.meta.url).pathname;
  const server = await startServerProcess(
    await nodeExecutable(),
    [script, new URL(`file://${dist}`).href, directory],
    {},
  );
  try {
    await run(server);
  } finally {
    const status = await server.stop();
    await Deno.remove(directory, { recursive: true }).catch(() => {});
    assertStrictEquals(status.code, 0, `the Node app exits cleanly: ${server.stderr()}`);
  }
}

function chunked(sizes: number[]): ReadableStream<Uint8Array> {
  return new ReadableStream({
    pull(controller) {
      const size = sizes.shift();
      if (size === undefined) controller.close();
      else controller.enqueue(new Uint8Array(size).fill(0x61));
    },
  });
}

Deno.test("toNodeListener() serves the Beacon under a prefix beside the host app's routes", async () => {
  await withEmbeddedNodeApp(async (server) => {
    assertStrictEquals(await (await fetch(server.url + "/health")).text(), "ok");
    const elsewhere = await fetch(server.url + "/beacon-not/x");
    assertStrictEquals(await elsewhere.text(), "not the beacon");
    const discovery = await (await fetch(server.url + "/beacon/.well-known/autonomous-agent"))
      .json();
    assertStrictEquals(discovery.endpoints.submit, server.url + SUBMIT);
    const head = await fetch(server.url + "/beacon/.well-known/agent-card.json", {
      method: "HEAD",
    });
    assertStrictEquals(head.status, 200);
    assertStrictEquals(await head.text(), "");
    const submitted = await fetch(server.url + SUBMIT, {
      method: "POST",
      headers: { "content-type": TEXT },
      body: "Hello from inside a Node app.",
    });
    assertStrictEquals(submitted.status, 202);
    const { receipt } = await submitted.json();
    assertStrictEquals(submitted.headers.get("location"), `${server.url}${SUBMIT}/${receipt.id}`);
    const status = await fetch(`${server.url}${SUBMIT}/${receipt.id}`);
    assertStrictEquals((await status.json()).id, receipt.id);
  });
});

Deno.test("toNodeListener() streams bodies to the core's byte-counting limit", async () => {
  await withEmbeddedNodeApp(async (server) => {
    const post = (body: BodyInit) =>
      fetch(server.url + SUBMIT, {
        method: "POST",
        headers: { "content-type": TEXT },
        body,
        // deno-lint-ignore no-explicit-any
        duplex: "half" as any,
      } as RequestInit);
    const exact = await post(chunked([16_384, 16_384, 16_384, 16_384]));
    assertStrictEquals(exact.status, 202, await exact.text());
    const over = await post(chunked([16_384, 16_384, 16_384, 16_384, 1]));
    assertStrictEquals(over.status, 413);
    assertStrictEquals((await over.json()).error.code, "too_large");
    // A declared length over the limit is refused from the header, before any body byte.
    const declared = await rawExchange(server.url, [
      `POST ${SUBMIT} HTTP/1.1\r\nHost: x\r\nContent-Type: ${TEXT}\r\n` +
      "Content-Length: 5000000\r\n\r\n",
    ]);
    assertStrictEquals(declared.status, 413);
    // A sender that stalls mid-body gets 408 once the core's body deadline passes.
    const stalled = await rawExchange(server.url, [
      `POST ${SUBMIT} HTTP/1.1\r\nHost: x\r\nContent-Type: ${TEXT}\r\n` +
      "Content-Length: 100\r\n\r\nonly part of it",
      { pauseMs: 1_500 },
    ]);
    assertStrictEquals(stalled.status, 408);
  });
});

Deno.test("toNodeListener() survives senders that vanish mid-body", async () => {
  await withEmbeddedNodeApp(async (server) => {
    const { hostname, port } = new URL(server.url);
    for (let i = 0; i < 5; i++) {
      const connection = await Deno.connect({ hostname, port: Number(port) });
      await connection.write(new TextEncoder().encode(
        `POST ${SUBMIT} HTTP/1.1\r\nHost: x\r\nContent-Type: ${TEXT}\r\n` +
          "Content-Length: 1000\r\n\r\npartial",
      ));
      connection.close();
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
    assertStrictEquals(await (await fetch(server.url + "/health")).text(), "ok");
    const after = await fetch(server.url + SUBMIT, {
      method: "POST",
      headers: { "content-type": TEXT },
      body: "still here",
    });
    assertStrictEquals(after.status, 202);
    await after.body?.cancel();
    assert(!server.stderr().includes("Error"), server.stderr());
  });
});
