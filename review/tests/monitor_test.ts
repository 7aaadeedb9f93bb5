/**
 * `review monitor` against real servers on one loopback port: the first head kept, growth
 * checked by consistency proofs, and then, on the same URL, a log with the same key but other
 * rows (a fork), one that grew from that fork, and a smaller one (a shrink); then no server at
 * all. The state file keeps the last good head throughout.
 */
import { encodeSeed, fromBase64url, signingKeyFromSeed } from "../../src/signing/mod.ts";
import { assertEquals, assertMatch, assertStrictEquals } from "../../tests/support/assert.ts";
import { type ServerProcess, startServer } from "../../tests/support/server.ts";
import { submitText } from "../../tests/support/tree_heads.ts";
import { review } from "./support.ts";

async function headCovering(url: string, size: number): Promise<void> {
  while (true) {
    const response = await fetch(url + "/beacon/0.1/tree-head");
    const head = response.status === 200 ? await response.json() : await response.body?.cancel();
    if (head?.treeSize >= size) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

Deno.test("review monitor: keeps the first head, accepts growth only with a verified consistency proof, and exits 1 on a fork or a shrink at the same URL", async () => {
  const seed = encodeSeed(crypto.getRandomValues(new Uint8Array(32)));
  const key = (await signingKeyFromSeed(crypto.getRandomValues(new Uint8Array(32)))).publicKey;
  const trusted = (await signingKeyFromSeed(fromBase64url(seed)!)).publicKey;
  const folder = await Deno.makeTempDir({ prefix: "beacon-monitor-" });
  const state = `${folder}/monitor.json`;
  const servers: ServerProcess[] = [];
  const start = async (port = "0") => {
    const server = await startServer({
      env: {
        BEACON_LOG: "off",
        BEACON_CHECKPOINT_INTERVAL: "1s",
        BEACON_SIGNING_KEY: seed,
        // One name for every log served at this URL, as an operator who rebuilt the store keeps.
        BEACON_PUBLIC_URL: "https://beacon.example",
        PORT: port,
      },
    });
    servers.push(server);
    return server;
  };
  const stop = async (server: ServerProcess) => {
    assertStrictEquals((await server.stop("SIGTERM")).code, 0);
    servers.splice(servers.indexOf(server), 1);
  };
  const monitor = (url: string, ...extra: string[]) =>
    review(`file:${folder}/unused.db`, ["monitor", url, "--state", state, "--once", ...extra]);
  try {
    let server = await start();
    const url = server.url;
    const port = new URL(url).port;
    for (const body of ["one", "two"]) await submitText(url, body);
    await headCovering(url, 2);

    const untrusted = await monitor(url);
    assertStrictEquals(untrusted.code, 2, untrusted.stderr);
    assertMatch(untrusted.stderr, /the first run needs --trust KEY/);
    const wrongKey = await monitor(url, "--trust", key);
    assertStrictEquals(wrongKey.code, 1, wrongKey.stdout);
    assertMatch(
      wrongKey.stdout,
      /^PROBLEM: the served checkpoint does not verify under the trusted key$/m,
    );

    const first = await monitor(url, "--trust", trusted);
    assertStrictEquals(first.code, 0, first.stdout + first.stderr);
    assertMatch(
      first.stdout,
      /checkpoint beacon\.example\/beacon\/0\.1\/log size 2, root \S+: kept \(the first checkpoint seen\)$/m,
    );
    const kept = JSON.parse(await Deno.readTextFile(state));
    assertEquals([kept.format, kept.url, kept.trust, kept.checkpoint.size], [
      "beacon-monitor/2",
      url + "/beacon/0.1/log",
      trusted,
      2,
    ]);

    for (const body of ["three", "four", "five"]) await submitText(url, body);
    await headCovering(url, 5);
    const grown = await monitor(url);
    assertStrictEquals(grown.code, 0, grown.stdout + grown.stderr);
    assertMatch(
      grown.stdout,
      /checkpoint \S+ size 5, .*: extends the kept checkpoint of size 2 \(verified from tiles\)$/m,
    );
    const same = await monitor(url);
    assertMatch(same.stdout, /checkpoint \S+ size 5, .*: unchanged$/m);
    const goodHead = JSON.parse(await Deno.readTextFile(state)).checkpoint;
    await stop(server);

    // The same URL now serves another database under the same key: five other rows.
    server = await start(port);
    for (const body of ["uno", "dos", "tres", "cuatro", "cinco"]) await submitText(url, body);
    await headCovering(url, 5);
    const fork = await monitor(url);
    assertStrictEquals(fork.code, 1, fork.stdout);
    assertMatch(
      fork.stdout,
      /^PROBLEM: FORK: the served checkpoint \(size 5, .*\) has another root than the kept one of the same size/m,
    );
    await submitText(url, "seis");
    await headCovering(url, 6);
    const grownFork = await monitor(url);
    assertStrictEquals(grownFork.code, 1, grownFork.stdout);
    assertMatch(
      grownFork.stdout,
      /^PROBLEM: FORK: the served checkpoint \(size 6, .*\) does not extend the kept one \(size 5, .*\): its tiles give another tree/m,
    );
    assertEquals(JSON.parse(await Deno.readTextFile(state)).checkpoint, goodHead, "the last good");
    await stop(server);

    // And then a smaller one.
    server = await start(port);
    await submitText(url, "only one");
    await headCovering(url, 1);
    const shrink = await monitor(url);
    assertStrictEquals(shrink.code, 1, shrink.stdout);
    assertMatch(
      shrink.stdout,
      /^PROBLEM: SHRINK: the served checkpoint covers 1 entries, but the kept one \(size 5, .*\) covers 5$/m,
    );
    await stop(server);

    const gone = await monitor(url);
    assertStrictEquals(gone.code, 3, gone.stdout + gone.stderr);
    assertMatch(
      gone.stderr,
      /^could not check: cannot reach http:\/\/127\.0\.0\.1:\d+\/beacon\/0\.1\/log\/checkpoint/m,
    );
    const otherUrl = await monitor("http://127.0.0.2:9");
    assertStrictEquals(otherUrl.code, 1);
    assertMatch(
      otherUrl.stderr,
      /the state file watches http:\/\/127\.0\.0\.1:\d+\/beacon\/0\.1\/log, not http:\/\/127\.0\.0\.2:9\/beacon\/0\.1\/log/,
    );
    const bad = await review(`file:${folder}/unused.db`, ["monitor", "ftp://x", "--state", state]);
    assertStrictEquals(bad.code, 2);
  } finally {
    for (const server of servers) await server.stop("SIGTERM");
    await Deno.remove(folder, { recursive: true });
  }
});
