/**
 * The signing key's place, through the real server (`src/adapter/deno/server.ts` with the
 * permissions `deno task start` gives it) and the real review tool (docs/keys.md):
 *
 * - a default embedded start makes a 0600 key file beside the database, says where it is, and
 *   leaves no copy of the private key in the database, its WAL or its shared-memory file;
 * - the next start reads it; a start under another key is refused in one line naming the
 *   previous key's fingerprint and `BEACON_PREVIOUS_SIGNING_KEYS`;
 * - a remote database (a real sqld) without a key is refused in one line naming the command
 *   that makes one;
 * - a key file other users can read is refused;
 * - a store whose key an earlier version kept in `secrets` keeps working, says how to move the
 *   key out, and `review key move-out` leaves no copy of it in the database's files.
 */
import { createClient } from "@libsql/client";
import { assert, assertEquals, assertMatch, assertStrictEquals } from "../support/assert.ts";
import { refusedStart, startServer } from "../support/server.ts";
import { startSqld } from "../support/sqld.ts";
import { childEnvironment, runtimeCommand, startRuntime } from "../../scripts/runtimes.ts";
import { ROOT } from "../../scripts/tools.ts";
import { createBeacon } from "../../src/beacon.ts";
import { encodeSeed, parseSigningKey, signingKeyFromSeed } from "../../src/signing/mod.ts";
import { review } from "../../review/tests/support.ts";

/** Waits until the server printed a line matching `predicate`, and returns it. */
async function line(
  server: { lines: Record<string, unknown>[] },
  predicate: (line: Record<string, unknown>) => boolean,
): Promise<Record<string, unknown>> {
  for (;;) {
    const found = server.lines.find(predicate);
    if (found !== undefined) return found;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const isReady = (event: Record<string, unknown>) =>
  event.event === "database" && event.state === "ready";

async function publishedKey(url: string): Promise<string> {
  const response = await fetch(`${url}/.well-known/autonomous-agent`);
  return (await response.json()).receiptSigning.publicKey;
}

async function submit(url: string, body: string): Promise<void> {
  const response = await fetch(`${url}/beacon/0.1/submissions`, {
    method: "POST",
    headers: { "content-type": "text/plain; charset=utf-8" },
    body,
  });
  assertStrictEquals(response.status, 202);
  await response.body?.cancel();
}

/** The database's files as they are now (the WAL and shared-memory file may be gone). */
async function databaseFiles(path: string): Promise<Uint8Array[]> {
  const files: Uint8Array[] = [];
  for (const name of [path, `${path}-wal`, `${path}-shm`]) {
    try {
      files.push(await Deno.readFile(name));
    } catch (error) {
      if (!(error instanceof Deno.errors.NotFound)) throw error;
    }
  }
  return files;
}

function holds(haystack: Uint8Array, needle: Uint8Array): boolean {
  outer: for (let i = 0; i + needle.length <= haystack.length; i++) {
    for (let j = 0; j < needle.length; j++) if (haystack[i + j] !== needle[j]) continue outer;
    return true;
  }
  return false;
}

/** Fails when any of the database's files holds the seed, raw or as its base64url text. */
async function assertNoSeedIn(path: string, seed: Uint8Array, when: string): Promise<void> {
  const needles = [seed, new TextEncoder().encode(encodeSeed(seed))];
  for (const file of await databaseFiles(path)) {
    for (const needle of needles) assert(!holds(file, needle), `${when}: a copy of the key`);
  }
}

async function keptKeys(url: string): Promise<number> {
  const client = createClient({ url });
  try {
    const rows = await client.execute(
      "SELECT count(*) AS n FROM secrets WHERE name = 'signing-key'",
    );
    return Number(rows.rows[0].n);
  } finally {
    client.close();
  }
}

Deno.test("a default embedded start keeps its key in a 0600 file beside the database, never in it", async () => {
  const server = await startServer();
  const keyFile = `${server.directory}/beacon.key`;
  const path = `${server.directory}/beacon.db`;
  try {
    const ready = await line(server, isReady);
    assertStrictEquals(ready.signingKey, `key file ${keyFile}`);
    assertEquals([ready.signingKeyGenerated, ready.signingKeyInDatabase], [true, false]);
    const stat = await Deno.stat(keyFile);
    assertStrictEquals(stat.mode! & 0o777, 0o600);
    const text = await Deno.readTextFile(keyFile);
    assertMatch(text, /^[A-Za-z0-9_-]{43}\n$/);
    const seed = parseSigningKey(text);
    const key = await signingKeyFromSeed(seed);
    assertStrictEquals(await publishedKey(server.url), key.publicKey);
    assertStrictEquals(ready.signingKeyFingerprint, key.fingerprint);
    for (const body of ["one", "two", "three"]) await submit(server.url, body);
    await assertNoSeedIn(path, seed, "while serving");
    assertStrictEquals((await server.stop()).code, 0);
    await assertNoSeedIn(path, seed, "after the stop");
    assertStrictEquals(await keptKeys(server.databaseUrl), 0);
    // The review tool trusts the key file beside the database as it trusted a kept key.
    const verified = await review(server.databaseUrl, ["verify", "--no-checkpoint"]);
    assertStrictEquals(verified.code, 0, verified.stdout + verified.stderr);
    assertMatch(verified.stdout, /no problems found/);

    // The next start reads the file and makes nothing.
    const again = await startServer({ directory: server.directory });
    try {
      const readyAgain = await line(again, isReady);
      assertEquals(
        [readyAgain.signingKeyGenerated, readyAgain.signingKeyFingerprint, readyAgain.signingKey],
        [false, key.fingerprint, `key file ${keyFile}`],
      );
      assert(!again.lines.some((event) => event.event === "warning"), "no warning");
      await submit(again.url, "four");
    } finally {
      assertStrictEquals((await again.stop()).code, 0);
    }
    assertStrictEquals(await Deno.readTextFile(keyFile), text);

    // Another key on a store whose heads the first one signed: refused, never a silent freeze.
    const other = await signingKeyFromSeed(new Uint8Array(32).fill(9));
    const changed = await refusedStart({
      BEACON_DATABASE_URL: server.databaseUrl,
      BEACON_SIGNING_KEY: encodeSeed(new Uint8Array(32).fill(9)),
    });
    assertStrictEquals(changed.code, 2, changed.lines.join("\n"));
    assertStrictEquals(changed.lines.length, 1, changed.lines.join("\n"));
    assertMatch(changed.lines[0], /^Cannot start: the signing key changed: /);
    assert(changed.lines[0].includes(key.fingerprint), "names the previous key's fingerprint");
    assert(changed.lines[0].includes(other.fingerprint), "and the configured one's");
    assert(changed.lines[0].includes("BEACON_PREVIOUS_SIGNING_KEYS"), "names the setting");

    // A key file other users may read is refused, naming the fix.
    await Deno.chmod(keyFile, 0o644);
    const open = await refusedStart({ BEACON_DATABASE_URL: server.databaseUrl });
    assertStrictEquals(open.code, 2, open.lines.join("\n"));
    assertStrictEquals(open.lines.length, 1, open.lines.join("\n"));
    assertMatch(
      open.lines[0],
      /^Cannot start: the key file ".*beacon.key" may be read or written by other users \(mode 0644\); .*chmod 600/,
    );

    // A store whose key file is gone (a backup restored without it): refused, and no new key made.
    await Deno.remove(keyFile);
    const lost = await refusedStart({ BEACON_DATABASE_URL: server.databaseUrl });
    assertStrictEquals(lost.code, 2, lost.lines.join("\n"));
    assertStrictEquals(lost.lines.length, 1, lost.lines.join("\n"));
    assertMatch(lost.lines[0], /^Cannot start: no signing key, but the store's latest tree head/);
    assert(lost.lines[0].includes(key.fingerprint), "names the key to restore");
    await Deno.stat(keyFile).then(() => assert(false, "no new key file"), () => {});
  } finally {
    await Deno.remove(server.directory, { recursive: true }).catch(() => {});
  }
});

Deno.test("a remote database without a key is refused in one line naming the command that makes one, and starts with a key file", async () => {
  const sqld = await startSqld();
  try {
    const refused = await refusedStart({ BEACON_DATABASE_URL: sqld.url, BEACON_SIGNING_KEY: "" });
    assertStrictEquals(refused.code, 2, refused.lines.join("\n"));
    assertStrictEquals(refused.lines.length, 1, refused.lines.join("\n"));
    assertMatch(
      refused.lines[0],
      /^Cannot start: no signing key for a remote database: set BEACON_SIGNING_KEY .*`deno task review key generate`/,
    );
    // Nothing was kept in the database for it.
    assertStrictEquals(await keptKeys(sqld.url), 0);

    // With a key file made by the command the refusal names, it starts and says where the key is.
    const directory = await Deno.makeTempDir({ prefix: "beacon-key-remote-" });
    const keyFile = `${directory}/keys/beacon.key`;
    await Deno.mkdir(`${directory}/keys`);
    const made = await review(`file:${directory}/none.db`, ["key", "generate", "--out", keyFile]);
    assertStrictEquals(made.code, 0, made.stderr);
    const key = await signingKeyFromSeed(parseSigningKey(await Deno.readTextFile(keyFile)));
    const server = await startServer({
      directory,
      env: { BEACON_DATABASE_URL: sqld.url, BEACON_SIGNING_KEY_FILE: keyFile },
    });
    try {
      const ready = await line(server, isReady);
      assertEquals(
        [ready.signingKey, ready.signingKeyInDatabase, ready.signingKeyFingerprint],
        [`key file ${keyFile} (BEACON_SIGNING_KEY_FILE)`, false, key.fingerprint],
      );
      assertStrictEquals(await publishedKey(server.url), key.publicKey);
      await submit(server.url, "remote");
    } finally {
      assertStrictEquals((await server.stop()).code, 0);
      await Deno.remove(directory, { recursive: true }).catch(() => {});
    }
    assertStrictEquals(await keptKeys(sqld.url), 0);
  } finally {
    await sqld.close();
  }
});

Deno.test("a store whose key is kept in the database keeps working, and move-out leaves no copy", async () => {
  const directory = await Deno.makeTempDir({ prefix: "beacon-key-legacy-" });
  const url = `file:${directory}/beacon.db`;
  const path = `${directory}/beacon.db`;
  try {
    // An earlier version's store: the library's default keeps a generated key in `secrets`.
    const legacy = createBeacon({ database: { url }, rateLimit: "off" });
    const facts = await legacy.ready();
    assertStrictEquals(facts.signingKeyInDatabase, true);
    await legacy.close();
    const client = createClient({ url });
    const seed = new Uint8Array(
      (await client.execute("SELECT value FROM secrets WHERE name = 'signing-key'")).rows[0]
        .value as ArrayBuffer,
    );
    client.close();
    const key = await signingKeyFromSeed(seed);

    const server = await startServer({ directory });
    try {
      const ready = await line(server, isReady);
      assertEquals(
        [ready.signingKey, ready.signingKeyInDatabase, ready.signingKeyFingerprint],
        ["the database (secrets table)", true, key.fingerprint],
      );
      const warning = await line(server, (event) => event.event === "warning");
      assertMatch(String(warning.message), /review key move-out/);
      assertStrictEquals(server.lines.filter((event) => event.event === "warning").length, 1);
      assertStrictEquals(await publishedKey(server.url), key.publicKey);
      await submit(server.url, "kept key");
    } finally {
      assertStrictEquals((await server.stop()).code, 0);
    }
    await Deno.stat(`${directory}/beacon.key`).then(
      () => assert(false, "no key file is made while the database keeps one"),
      () => {},
    );

    // The scan below finds a kept key: here it is still in the file.
    assert((await databaseFiles(path)).some((file) => holds(file, seed)), "the scan finds it");
    const moved = await review(url, ["key", "move-out"]);
    assertStrictEquals(moved.code, 0, moved.stdout + moved.stderr);
    assertMatch(moved.stdout, /^moved the signing key to .*beacon.key \(mode 0600\)/m);
    assertMatch(
      moved.stdout,
      /^no copy of the private key is left in the database file or its WAL$/m,
    );
    assertStrictEquals(await Deno.readTextFile(`${directory}/beacon.key`), `${encodeSeed(seed)}\n`);
    assertStrictEquals((await Deno.stat(`${directory}/beacon.key`)).mode! & 0o777, 0o600);
    assertStrictEquals(await keptKeys(url), 0);
    await assertNoSeedIn(path, seed, "after move-out");
    const twice = await review(url, ["key", "move-out"]);
    assertStrictEquals(twice.code, 0, twice.stderr);
    assertMatch(twice.stdout, /^nothing to move: the database keeps no signing key$/m);

    // The same key from its file now, without a word of warning.
    const after = await startServer({ directory });
    try {
      const ready = await line(after, isReady);
      assertEquals(
        [ready.signingKey, ready.signingKeyInDatabase, ready.signingKeyFingerprint],
        [`key file ${directory}/beacon.key`, false, key.fingerprint],
      );
      assert(!after.lines.some((event) => event.event === "warning"), "no warning");
      await submit(after.url, "key from its file");
    } finally {
      assertStrictEquals((await after.stop()).code, 0);
    }
    await assertNoSeedIn(path, seed, "after the next start");
  } finally {
    await Deno.remove(directory, { recursive: true }).catch(() => {});
  }
});

for (const runtime of ["node", "bun"] as const) {
  Deno.test(`${runtime}: a default embedded start makes the same 0600 key file, and a key change is refused`, async () => {
    const directory = await Deno.makeTempDir({ prefix: `beacon-key-${runtime}-` });
    const env = {
      PORT: "0",
      BEACON_HOSTNAME: "127.0.0.1",
      BEACON_DATABASE_URL: `file:${directory}/beacon.db`,
      BEACON_LOG: "off",
    };
    try {
      const server = await startRuntime(runtime, env);
      let fingerprint: unknown;
      try {
        const ready = await line(server, isReady);
        assertStrictEquals(ready.signingKey, `key file ${directory}/beacon.key`);
        fingerprint = ready.signingKeyFingerprint;
        await submit(server.url, runtime);
      } finally {
        assertStrictEquals((await server.stop()).code, 0);
      }
      assertStrictEquals((await Deno.stat(`${directory}/beacon.key`)).mode! & 0o777, 0o600);
      const seed = parseSigningKey(await Deno.readTextFile(`${directory}/beacon.key`));
      assertStrictEquals((await signingKeyFromSeed(seed)).fingerprint, fingerprint);
      await assertNoSeedIn(`${directory}/beacon.db`, seed, runtime);
      // Another key: the same one-line refusal as on Deno.
      const { command, args } = await runtimeCommand(runtime);
      const output = await new Deno.Command(command, {
        args,
        cwd: ROOT,
        clearEnv: true,
        env: { ...childEnvironment(), ...env, BEACON_SIGNING_KEY: encodeSeed(new Uint8Array(32)) },
        stdin: "null",
        stdout: "piped",
        stderr: "piped",
      }).output();
      const lines = new TextDecoder().decode(output.stderr).split("\n").filter((l) => l !== "");
      assertStrictEquals(output.code, 2, lines.join("\n"));
      assertStrictEquals(lines.length, 1, lines.join("\n"));
      assert(lines[0].includes(String(fingerprint)), lines[0]);
    } finally {
      await Deno.remove(directory, { recursive: true }).catch(() => {});
    }
  });
}

Deno.test("a remote database that comes up after the start, without a key: refused when reached", async () => {
  const sqld = await startSqld();
  try {
    await sqld.stop();
    const server = await startServer({
      env: { BEACON_DATABASE_URL: sqld.url, BEACON_SIGNING_KEY: "" },
    });
    try {
      // Down at the start: it listens and retries, as for any remote database (docs/deploy.md).
      await line(server, (event) => event.event === "database" && event.state === "unavailable");
      await sqld.restart();
      while (!server.stderr().includes("Cannot start")) {
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    } finally {
      const status = await server.stop();
      assertStrictEquals(status.code, 2, server.stderr());
      await Deno.remove(server.directory, { recursive: true }).catch(() => {});
    }
    const lines = server.stderr().split("\n").filter((text) => text !== "");
    assertStrictEquals(lines.length, 1, lines.join("\n"));
    assertMatch(lines[0], /^Cannot start: no signing key for a remote database/);
    assert(!server.lines.some(isReady), "it never served as ready");
  } finally {
    await sqld.close();
  }
});

Deno.test("move-out from a remote database: the key goes to the named file, and the row is gone", async () => {
  const sqld = await startSqld();
  const directory = await Deno.makeTempDir({ prefix: "beacon-key-remote-move-" });
  try {
    // An earlier version's remote store: the key kept in its `secrets` table.
    const legacy = createBeacon({ database: { url: sqld.url }, rateLimit: "off" });
    assertStrictEquals((await legacy.ready()).signingKeyInDatabase, true);
    await legacy.close();
    const exported = await review(sqld.url, ["key", "export"]);
    assertStrictEquals(exported.code, 0, exported.stderr);
    const refused = await review(sqld.url, ["key", "move-out"]);
    assertStrictEquals(refused.code, 2, refused.stderr);
    assertMatch(refused.stderr, /without --key-file FILE/);
    assertStrictEquals(await keptKeys(sqld.url), 1);
    const keyFile = `${directory}/beacon.key`;
    const moved = await review(sqld.url, ["key", "move-out", "--key-file", keyFile]);
    assertStrictEquals(moved.code, 0, moved.stdout + moved.stderr);
    assertMatch(moved.stdout, /^the database is remote: .*BEACON_SIGNING_KEY_FILE=/m);
    assertStrictEquals(await Deno.readTextFile(keyFile), exported.stdout);
    assertStrictEquals(await keptKeys(sqld.url), 0);
    // Now a start without a key is refused, and one with the file starts under the same key.
    const without = await refusedStart({ BEACON_DATABASE_URL: sqld.url, BEACON_SIGNING_KEY: "" });
    assertStrictEquals(without.code, 2, without.lines.join("\n"));
    const server = await startServer({
      directory,
      env: { BEACON_DATABASE_URL: sqld.url, BEACON_SIGNING_KEY_FILE: keyFile },
    });
    try {
      const key = await signingKeyFromSeed(parseSigningKey(exported.stdout));
      assertStrictEquals((await line(server, isReady)).signingKeyFingerprint, key.fingerprint);
    } finally {
      assertStrictEquals((await server.stop()).code, 0);
    }
  } finally {
    await Deno.remove(directory, { recursive: true }).catch(() => {});
    await sqld.close();
  }
});
