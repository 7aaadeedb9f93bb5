/**
 * `review monitor` against a hostile log on loopback, one that holds the log's key (or replays
 * its genuine checkpoints) and answers as it likes: an endless body is abandoned after the size
 * limit, never held whole; a larger signed checkpoint whose tiles are answered with anything but
 * tiles is a FORK (exit 1), and only "try again" answers (429, 503) leave the check open (exit 3).
 */
import {
  base64,
  checkpointBody,
  checkpointNote,
  leafHash,
  noteVerifierKey,
  signCheckpointNote,
  signingKeyFromSeed,
  TileLog,
  tilePath,
  treeRoot,
} from "../../src/signing/mod.ts";
import { assert, assertMatch, assertStrictEquals } from "../../tests/support/assert.ts";
import { review } from "./support.ts";

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
    assertMatch(
      run.stderr,
      /^could not check: .*\/beacon\/0\.1\/log\/checkpoint answered too much$/m,
    );
    // What the server managed to queue before the monitor hung up: socket buffers, no more.
    assert(sent < 64 * 1024 * 1024, `${sent} bytes sent`);
  } finally {
    await server.shutdown();
    await Deno.remove(folder, { recursive: true });
  }
});

Deno.test("review monitor: a larger signed checkpoint whose tiles cannot be had is a FORK, unless the answer says try again", async () => {
  const key = await signingKeyFromSeed(crypto.getRandomValues(new Uint8Array(32)));
  const origin = "hostile.example/log";
  const leaves = Array.from({ length: 5 }, (_, i) => leafHash(`leaf ${i}`));
  const note = async (size: number) => {
    const body = checkpointBody(origin, size, treeRoot(leaves.slice(0, size)));
    return checkpointNote(
      origin,
      body,
      await signCheckpointNote(key.privateKey, key.publicKey, origin, body),
    );
  };
  const [kept, grown] = [await note(2), await note(5)];
  const keptRoot = base64(treeRoot(leaves.slice(0, 2)));
  for (
    const [status, code] of [[500, 1], [404, 1], [200, 1], [503, 3], [429, 3]] as const
  ) {
    const folder = await Deno.makeTempDir({ prefix: "beacon-monitor-hostile-" });
    const { server, url } = hostileServer((path) =>
      path === "/log/checkpoint"
        ? new Response(grown)
        // A 200 that is no tile: the wrong length.
        : new Response(status === 200 ? "no tile" : "{}", { status })
    );
    try {
      const state = `${folder}/state.json`;
      await Deno.writeTextFile(
        state,
        JSON.stringify({
          format: "beacon-monitor/2",
          url: url + "/log",
          trust: key.publicKey,
          checkpoint: { origin, size: 2, root: keptRoot },
        }),
      );
      const run = await review(`file:${folder}/unused.db`, [
        "monitor",
        url + "/log",
        "--state",
        state,
        "--once",
      ]);
      assertStrictEquals(run.code, code, `${status}: ${run.stdout}${run.stderr}`);
      if (code === 1) {
        assertMatch(
          run.stdout,
          /^PROBLEM: FORK: the served checkpoint \(size 5, .*\) cannot be shown to extend the kept one \(size 2, /m,
        );
      } else {
        assertMatch(run.stderr, new RegExp(`^could not check: .* answered ${status}$`, "m"));
      }
      const after = JSON.parse(await Deno.readTextFile(state));
      assertStrictEquals(after.checkpoint.size, 2, "the kept checkpoint stays");
    } finally {
      await server.shutdown();
      await Deno.remove(folder, { recursive: true });
    }
  }
  assert(kept.startsWith(origin));
});

Deno.test("review monitor: watches any C2SP log by its prefix and note verifier key", async () => {
  const key = await signingKeyFromSeed(crypto.getRandomValues(new Uint8Array(32)));
  const origin = "log.example/any";
  const leaves = Array.from({ length: 700 }, (_, i) => leafHash(`entry ${i}`));
  let size = 3;
  const tiles = new Map<string, Uint8Array<ArrayBuffer>>();
  const log = new TileLog();
  const levels: Uint8Array[][] = [];
  const grow = (to: number) => {
    while (log.size < to) log.append(leaves[log.size]);
    for (const [level, added] of log.takeAdded().entries()) {
      (levels[level] ??= []).push(...added.entries);
    }
    for (let level = 0; level < levels.length; level++) {
      const entries = levels[level];
      for (let index = 0; index * 256 < entries.length; index++) {
        const width = Math.min(256, entries.length - index * 256);
        const bytes = new Uint8Array(width * 32);
        entries.slice(index * 256, index * 256 + width).forEach((e, i) => bytes.set(e, i * 32));
        tiles.set("/x/" + tilePath({ level, index, width }), bytes);
      }
    }
  };
  grow(size);
  const note = async () => {
    const body = checkpointBody(origin, size, log.root());
    return checkpointNote(
      origin,
      body,
      await signCheckpointNote(key.privateKey, key.publicKey, origin, body),
    );
  };
  const folder = await Deno.makeTempDir({ prefix: "beacon-monitor-c2sp-" });
  const { server, url } = hostileServer((path) => {
    if (path === "/x/checkpoint") return new Response(currentNote);
    const tile = tiles.get(path);
    return tile === undefined ? new Response("", { status: 404 }) : new Response(tile);
  });
  let currentNote = await note();
  try {
    const monitor = (...extra: string[]) =>
      review(`file:${folder}/unused.db`, [
        "monitor",
        url + "/x",
        "--state",
        `${folder}/state.json`,
        "--once",
        ...extra,
      ]);
    const first = await monitor("--trust", noteVerifierKey(origin, key.publicKey));
    assertStrictEquals(first.code, 0, first.stdout + first.stderr);
    assertMatch(first.stdout, /checkpoint log\.example\/any size 3, .*: kept/m);
    size = 650;
    grow(size);
    currentNote = await note();
    const grown = await monitor();
    assertStrictEquals(grown.code, 0, grown.stdout + grown.stderr);
    assertMatch(grown.stdout, /size 650, .*: extends the kept checkpoint of size 3 \(verified/m);
  } finally {
    await server.shutdown();
    await Deno.remove(folder, { recursive: true });
  }
});
