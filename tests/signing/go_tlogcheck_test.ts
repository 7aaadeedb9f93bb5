/**
 * tests/go/tlogcheck against a stand-in log that needs no Beacon: a loopback server serving Go's
 * own tiles (tlogvectors) under a checkpoint signed here, so the checker is known to accept a
 * correct C2SP log and to refuse each kind of wrong one before it is pointed at the Beacon.
 * Needs Go (`.ci/run` installs it); without Go these tests fail, naming the packages.
 */
import { ed25519 } from "@noble/curves/ed25519.js";
import { sha256 } from "@noble/hashes/sha2.js";
import { assert, assertMatch, assertStrictEquals } from "../support/assert.ts";
import {
  type ConsistencyItem,
  fromHex,
  type GoTlogVectors,
  goTlogVectors,
  type InclusionItem,
  noteVerifierKey,
  runTlogCheck,
  type TlogCheckInput,
} from "../support/go_tlog.ts";

const ORIGIN = "beacon.test/log";
const PREFIX_PATH = "/beacon/0.1/log";

function base64(bytes: Uint8Array): string {
  return btoa(String.fromCharCode(...bytes));
}

/** An Ed25519 note signer (c2sp.org/signed-note) of its own, independent of the Beacon's code. */
function newSigner(name: string) {
  const secret = crypto.getRandomValues(new Uint8Array(32));
  const publicKey = ed25519.getPublicKey(secret);
  const keyHash = sha256(
    new Uint8Array([...new TextEncoder().encode(name + "\n"), 0x01, ...publicKey]),
  ).subarray(0, 4);
  return {
    verifierKey: noteVerifierKey(name, publicKey),
    /** The signed note: text, a blank line, one signature line. */
    sign(text: string): string {
      const signature = ed25519.sign(new TextEncoder().encode(text), secret);
      return `${text}\n— ${name} ${base64(new Uint8Array([...keyHash, ...signature]))}\n`;
    },
  };
}

function checkpointText(origin: string, size: number | string, rootHex: string): string {
  return `${origin}\n${size}\n${base64(fromHex(rootHex))}\n`;
}

/** What the stand-in log serves; each case changes it. */
interface LogState {
  checkpoint: string;
  tiles: Record<string, string>;
  checkpointType: string;
  tileType: string;
  redirectCheckpoint: boolean;
}

/** A loopback server for `state`, recording the tile paths it was asked for. */
function serveLog(state: { current: LogState }) {
  const requested: string[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (request) => {
    const path = new URL(request.url).pathname;
    const log = state.current;
    if (request.method !== "GET") return new Response(null, { status: 405 });
    if (path === `${PREFIX_PATH}/checkpoint`) {
      if (log.redirectCheckpoint) {
        return new Response(null, {
          status: 302,
          headers: { location: `${PREFIX_PATH}/checkpoint2` },
        });
      }
      return new Response(log.checkpoint, { headers: { "content-type": log.checkpointType } });
    }
    if (path.startsWith(`${PREFIX_PATH}/tile/`)) {
      const tile = path.slice(PREFIX_PATH.length + 1);
      requested.push(tile);
      const hex = log.tiles[tile];
      if (hex === undefined) return new Response("no such tile\n", { status: 404 });
      return new Response(fromHex(hex), { headers: { "content-type": log.tileType } });
    }
    return new Response("not found\n", { status: 404 });
  });
  const prefix = `http://127.0.0.1:${server.addr.port}${PREFIX_PATH}`;
  return { server, prefix, requested };
}

function proofs(v: GoTlogVectors): { inclusion: InclusionItem[]; consistency: ConsistencyItem[] } {
  return {
    inclusion: Object.entries(v.inclusion).map(([index, proof]) => ({
      index: Number(index),
      treeSize: v.size,
      leafHash: v.leafHashes[index],
      proof,
    })),
    consistency: Object.entries(v.consistency).map(([first, proof]) => ({
      first: Number(first),
      firstRoot: v.roots[first],
      second: v.size,
      proof,
    })),
  };
}

/** A hash with its first byte changed. */
function flipped(hex: string): string {
  return (parseInt(hex.slice(0, 2), 16) ^ 1).toString(16).padStart(2, "0") + hex.slice(2);
}

Deno.test("tlogcheck accepts a correct C2SP log and refuses each kind of wrong one", async (t) => {
  const signer = newSigner(ORIGIN);
  const v257 = await goTlogVectors(257);
  const v65539 = await goTlogVectors(65536 + 3);
  const good = (v: GoTlogVectors): LogState => ({
    checkpoint: signer.sign(checkpointText(ORIGIN, v.size, v.root)),
    tiles: v.tiles,
    checkpointType: "text/plain; charset=utf-8",
    tileType: "application/octet-stream",
    redirectCheckpoint: false,
  });
  const state = { current: good(v257) };
  const { server, prefix, requested } = serveLog(state);
  const input = (v: GoTlogVectors, extra: Partial<TlogCheckInput> = {}): TlogCheckInput => ({
    prefix,
    verifierKey: signer.verifierKey,
    ...proofs(v),
    ...extra,
  });
  const fails = async (given: TlogCheckInput, pattern: RegExp) => {
    const result = await runTlogCheck(given);
    assertStrictEquals(result.code, 1, result.stdout + result.stderr);
    assertMatch(result.stdout, pattern);
    assertMatch(result.stdout, /^FAIL: /m);
  };

  try {
    await t.step("257 leaves: checkpoint, tiles and every proof verify", async () => {
      const result = await runTlogCheck(input(v257), { verbose: true });
      assertStrictEquals(result.code, 0, result.stdout + result.stderr);
      assertMatch(
        result.stdout,
        new RegExp(`^checkpoint: signature verifies under ${ORIGIN}, size 257$`, "m"),
      );
      assertMatch(result.stdout, /^tiles: tree hash over 257 leaves matches/m);
      for (const index of Object.keys(v257.inclusion)) {
        assertMatch(result.stdout, new RegExp(`^inclusion ${index} in 257: ok`, "m"));
      }
      for (const first of Object.keys(v257.consistency)) {
        assertMatch(result.stdout, new RegExp(`^consistency ${first} to 257: ok`, "m"));
      }
      // Go asks only for full tiles and the partial tile of this size at each level.
      for (const tile of requested) assert(tile in v257.tiles, tile);
      assert(requested.includes("tile/0/001.p/1") && requested.includes("tile/1/000.p/1"));
      assertMatch(result.stderr, /^fetched http:\/\/127\.0\.0\.1:\d+\/beacon\/0\.1\/log\/tile\//m);
    });

    await t.step("65539 leaves: three levels of tiles verify", async () => {
      state.current = good(v65539);
      requested.length = 0;
      const result = await runTlogCheck(input(v65539));
      assertStrictEquals(result.code, 0, result.stdout + result.stderr);
      for (const tile of requested) assert(tile in v65539.tiles, tile);
      assert(requested.includes("tile/2/000.p/1"), requested.join());
    });

    await t.step("an empty log verifies with no tiles", async () => {
      const empty = await goTlogVectors(0);
      state.current = good(empty);
      requested.length = 0;
      const result = await runTlogCheck(input(empty));
      assertStrictEquals(result.code, 0, result.stdout + result.stderr);
      assertMatch(result.stdout, /^checkpoint: signature verifies under \S+, size 0$/m);
      assertStrictEquals(requested.length, 0);
      state.current = {
        ...good(empty),
        checkpoint: signer.sign(checkpointText(ORIGIN, 0, "00".repeat(32))),
      };
      await fails(input(empty), /size 0 but the root hash/);
    });

    await t.step("a changed tile byte is refused", async () => {
      const tiles = { ...v257.tiles };
      tiles["tile/0/000"] = flipped(tiles["tile/0/000"]);
      state.current = { ...good(v257), tiles };
      await fails(input(v257), /^FAIL: tiles: .*inconsistent tile/m);
      // Tiles no proof and no tree hash needs are read and authenticated too.
      for (const path of ["tile/0/100", "tile/1/000"]) {
        const big = { ...v65539.tiles, [path]: flipped(v65539.tiles[path]) };
        state.current = { ...good(v65539), tiles: big };
        await fails(input(v65539, { inclusion: [], consistency: [] }), /^FAIL: tiles: /m);
      }
    });

    await t.step("a missing or wrongly sized or typed tile is refused", async () => {
      const missing = { ...v257.tiles };
      delete missing["tile/1/000.p/1"];
      state.current = { ...good(v257), tiles: missing };
      await fails(input(v257), /status 404/);
      state.current = {
        ...good(v257),
        tiles: { ...v257.tiles, "tile/0/001.p/1": "00".repeat(64) },
      };
      await fails(input(v257), /body longer than 32 bytes/);
      state.current = { ...good(v257), tileType: "text/plain" };
      await fails(input(v257), /Content-Type "text\/plain", want "application\/octet-stream"/);
    });

    await t.step(
      "a checkpoint signed by another key, or for another origin, is refused",
      async () => {
        const other = newSigner(ORIGIN);
        state.current = {
          ...good(v257),
          checkpoint: other.sign(checkpointText(ORIGIN, 257, v257.root)),
        };
        await fails(
          input(v257),
          /^FAIL: checkpoint: no signature by beacon\.test\/log\+[0-9a-f]{8}/m,
        );
        state.current = {
          ...good(v257),
          checkpoint: signer.sign(checkpointText("elsewhere.test/log", 257, v257.root)),
        };
        await fails(input(v257), /origin "elsewhere\.test\/log" is not the verifier key's name/);
      },
    );

    await t.step("a malformed checkpoint body is refused", async () => {
      for (
        const [text, pattern] of [
          [checkpointText(ORIGIN, "0257", v257.root), /leading zeroes/],
          [checkpointText(ORIGIN, 256, v257.root), /^FAIL: tiles: /m],
          [`${ORIGIN}\n257\n`, /at least 3/],
          [`${ORIGIN}\n257\n${v257.root}\n`, /standard base64/],
        ] as const
      ) {
        state.current = { ...good(v257), checkpoint: signer.sign(text) };
        await fails(input(v257, { inclusion: [], consistency: [] }), pattern);
      }
    });

    await t.step("a redirected or wrongly typed checkpoint is refused", async () => {
      state.current = { ...good(v257), redirectCheckpoint: true };
      await fails(input(v257), /status 302, want 200 \(redirect to .* not followed\)/);
      state.current = { ...good(v257), checkpointType: "application/octet-stream" };
      await fails(input(v257), /Content-Type "application\/octet-stream"/);
    });

    await t.step("wrong proofs are refused", async () => {
      state.current = good(v257);
      const { inclusion, consistency } = proofs(v257);
      const [first] = inclusion;
      await fails(
        input(v257, {
          inclusion: [{ ...first, proof: [flipped(first.proof[0]), ...first.proof.slice(1)] }],
        }),
        /^FAIL: inclusion 0 in 257: proof does not verify/m,
      );
      await fails(
        input(v257, { inclusion: [{ ...first, leafHash: flipped(first.leafHash) }] }),
        /^FAIL: inclusion 0 in 257: proof does not verify/m,
      );
      await fails(
        input(v257, { inclusion: [{ ...first, treeSize: 256 }] }),
        /the checkpoint's size is 257/,
      );
      const [old] = consistency;
      await fails(
        input(v257, { consistency: [{ ...old, firstRoot: flipped(old.firstRoot) }] }),
        /^FAIL: consistency 1 to 257: proof does not verify/m,
      );
      await fails(
        input(v257, { consistency: [{ ...old, proof: old.proof.slice(1) }] }),
        /^FAIL: consistency 1 to 257: proof does not verify/m,
      );
    });

    await t.step("usage errors exit 2 without fetching anything", async () => {
      requested.length = 0;
      for (
        const given of [
          { ...input(v257), prefix: "http://192.0.2.1/beacon/0.1/log" },
          { ...input(v257), prefix: prefix.replace("http:", "https:") },
          { ...input(v257), verifierKey: "beacon.test/log+00000000+AQ==" },
          { ...input(v257), inclusion: [{ index: 0, treeSize: 257, leafHash: "zz", proof: [] }] },
        ]
      ) {
        const result = await runTlogCheck(given);
        assertStrictEquals(result.code, 2, result.stdout + result.stderr);
        assertMatch(result.stderr, /^usage error: /m);
      }
      assertStrictEquals(requested.length, 0);
    });
  } finally {
    await server.shutdown();
  }
});
