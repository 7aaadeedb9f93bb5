/**
 * `review monitor` against a hostile server on loopback, one that holds the log's key (or
 * replays its genuine heads) and answers as it likes: an endless body is abandoned after the
 * size limit, never held whole; a larger signed head whose proof request is answered with
 * anything but a proof is a FORK (exit 1), and only "try again" answers (429, 503) leave the
 * check open (exit 3).
 */
import { signCheckpoint, signingKeyFromSeed } from "../../src/signing/mod.ts";
import { assert, assertMatch, assertStrictEquals } from "../../tests/support/assert.ts";
import { review } from "./support.ts";

const KEPT = { treeSize: 2, rootHash: "a".repeat(64), createdAt: "2026-12-01T00:00:00.000Z" };
const GROWN = { treeSize: 5, rootHash: "b".repeat(64), createdAt: "2026-12-01T00:00:10.000Z" };

/** A loopback server answering the head and the proof as `answer` says; counts bytes sent. */
function hostileServer(answer: (path: string) => Response) {
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    (request) => answer(new URL(request.url).pathname),
  );
  return { server, url: `http://127.0.0.1:${server.addr.port}` };
}

Deno.test("review monitor: an endless answer is abandoned at the size limit, never read whole", async () => {
  const folder = await Deno.makeTempDir({ prefix: "beacon-monitor-hostile-" });
  let sent = 0;
  const chunk = new Uint8Array(64 * 1024).fill(0x20);
  // At most 1 GiB, so that even a monitor that read everything would end.
  const { server, url } = hostileServer(() =>
    new Response(
      new ReadableStream({
        pull(controller) {
          if (sent >= 1024 ** 3) return controller.close();
          sent += chunk.byteLength;
          controller.enqueue(chunk);
        },
      }),
      { headers: { "content-type": "application/json" } },
    )
  );
  try {
    const key = await signingKeyFromSeed(crypto.getRandomValues(new Uint8Array(32)));
    const run = await review(`file:${folder}/unused.db`, [
      "monitor",
      url,
      "--state",
      `${folder}/state.json`,
      "--trust",
      key.publicKey,
      "--once",
    ]);
    assertStrictEquals(run.code, 3, run.stdout + run.stderr);
    assertMatch(run.stderr, /^could not check: .*\/beacon\/0\.1\/tree-head answered too much$/m);
    // What the server managed to queue before the monitor hung up: socket buffers, no more.
    assert(sent < 64 * 1024 * 1024, `${sent} bytes sent`);
  } finally {
    await server.shutdown();
    await Deno.remove(folder, { recursive: true });
  }
});

Deno.test("review monitor: a larger signed head without a proof is a FORK, unless the answer says try again", async () => {
  const seed = crypto.getRandomValues(new Uint8Array(32));
  const key = await signingKeyFromSeed(seed);
  const kept = { ...KEPT, signature: await signCheckpoint(key, KEPT) };
  const grown = { ...GROWN, signature: await signCheckpoint(key, GROWN) };
  for (
    const [status, code] of [[500, 1], [404, 1], [200, 1], [503, 3], [429, 3]] as const
  ) {
    const folder = await Deno.makeTempDir({ prefix: "beacon-monitor-hostile-" });
    const { server, url } = hostileServer((path) =>
      path === "/beacon/0.1/tree-head"
        ? Response.json(grown)
        // A 200 that is no proof document: not even JSON.
        : new Response(status === 200 ? "no proof" : "{}", { status })
    );
    try {
      const state = `${folder}/state.json`;
      await Deno.writeTextFile(
        state,
        JSON.stringify({ format: "beacon-monitor/1", url, publicKey: key.publicKey, head: kept }),
      );
      const run = await review(`file:${folder}/unused.db`, [
        "monitor",
        url,
        "--state",
        state,
        "--once",
      ]);
      assertStrictEquals(run.code, code, `${status}: ${run.stdout}${run.stderr}`);
      if (code === 1) {
        assertMatch(
          run.stdout,
          /^PROBLEM: FORK: the served head \(tree size 5, .*\) comes with no consistency proof from the kept head \(tree size 2, /m,
        );
      } else {
        assertMatch(run.stderr, new RegExp(`^could not check: .* answered ${status}$`, "m"));
      }
      const after = JSON.parse(await Deno.readTextFile(state));
      assertStrictEquals(after.head.treeSize, 2, "the kept head stays");
    } finally {
      await server.shutdown();
      await Deno.remove(folder, { recursive: true });
    }
  }
});
