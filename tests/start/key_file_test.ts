/** The signing key's file (src/start/key_file.ts), on the real file system. */
import {
  createKeyFile,
  keyFileBeside,
  KeyFileError,
  readKeyFile,
} from "../../src/start/key_file.ts";
import { encodeSeed } from "../../src/signing/mod.ts";
import { assertEquals, assertRejects, assertStrictEquals } from "../support/assert.ts";

async function inTempDir(run: (directory: string) => Promise<void>): Promise<void> {
  const directory = await Deno.makeTempDir({ prefix: "beacon-key-file-" });
  try {
    await run(directory);
  } finally {
    await Deno.remove(directory, { recursive: true });
  }
}

Deno.test("keyFileBeside() names the database's file with .key", () => {
  assertStrictEquals(keyFileBeside("file:data/beacon.db"), "data/beacon.key");
  assertStrictEquals(keyFileBeside("file:/srv/a.db"), "/srv/a.key");
  assertStrictEquals(keyFileBeside("file:/srv/store"), "/srv/store.key");
});

Deno.test("createKeyFile() writes one 0600 line and leaves no temporary file", async () => {
  await inTempDir(async (directory) => {
    const path = `${directory}/beacon.key`;
    const seed = new Uint8Array(32).fill(5);
    const made = await createKeyFile(path, seed);
    assertStrictEquals(made.created, true);
    assertStrictEquals((await Deno.stat(path)).mode! & 0o777, 0o600);
    assertStrictEquals(await Deno.readTextFile(path), `${encodeSeed(seed)}\n`);
    assertEquals(await readKeyFile(path), seed);
    const names = [];
    for await (const entry of Deno.readDir(directory)) names.push(entry.name);
    assertEquals(names, ["beacon.key"]);
  });
});

Deno.test("createKeyFile() never overwrites: racing creators all end with the first key", async () => {
  await inTempDir(async (directory) => {
    const path = `${directory}/beacon.key`;
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) => createKeyFile(path, new Uint8Array(32).fill(i + 1))),
    );
    assertStrictEquals(results.filter((result) => result.created).length, 1);
    const kept = encodeSeed(results.find((result) => result.created)!.seed);
    for (const result of results) assertStrictEquals(encodeSeed(result.seed), kept);
    assertStrictEquals(await Deno.readTextFile(path), `${kept}\n`);
  });
});

Deno.test("readKeyFile() refuses a file open to others and one without a key, never quoting it", async () => {
  await inTempDir(async (directory) => {
    assertStrictEquals(await readKeyFile(`${directory}/none.key`), undefined);
    const path = `${directory}/beacon.key`;
    const line = "nWGxne/9WmC6hEr0kuwsxERJxWl7MmkZcDusAxyuf2A=";
    await Deno.writeTextFile(path, `${line}\n`, { mode: 0o600 });
    await Deno.chmod(path, 0o600);
    await assertRejects(
      () => readKeyFile(path),
      (error: Error) =>
        error instanceof KeyFileError && /looks like standard base64/.test(error.message) &&
        !error.message.includes(line),
    );
    await Deno.chmod(path, 0o640);
    await assertRejects(
      () => readKeyFile(path),
      (error: Error) => /other users \(mode 0640\).*chmod 600/.test(error.message),
    );
    await assertRejects(
      () => createKeyFile(`${directory}/missing/beacon.key`),
      (error: Error) =>
        error instanceof KeyFileError && /no such file or folder/.test(error.message),
    );
  });
});
