/**
 * The database file guard on real temporary files: a replaced or removed database file and a
 * removed WAL trip it (once, sticky); an untouched one, a WAL that appears later, or no file at all
 * do not.
 */
import { assertEquals } from "../support/assert.ts";
import { type FileChange, guardDatabaseFile } from "../../src/store/file_guard.ts";

async function withFolder(run: (folder: string) => Promise<void>): Promise<void> {
  const folder = await Deno.makeTempDir({ prefix: "beacon-guard-" });
  try {
    await run(folder);
  } finally {
    await Deno.remove(folder, { recursive: true });
  }
}

async function guarded(path: string) {
  const changes: FileChange[] = [];
  const guard = await guardDatabaseFile(path, { onChange: (change) => changes.push(change) });
  return { guard, changes };
}

Deno.test("guardDatabaseFile() stays quiet while the files are the ones it saw", async () => {
  await withFolder(async (folder) => {
    const path = `${folder}/beacon.db`;
    await Deno.writeTextFile(path, "db");
    await Deno.writeTextFile(`${path}-wal`, "wal");
    const { guard, changes } = await guarded(path);
    try {
      // Writes change the contents, never the identity.
      await Deno.writeTextFile(path, "db, grown", { append: true });
      await Deno.writeTextFile(`${path}-wal`, "wal, grown", { append: true });
      assertEquals(await guard.check(), undefined);
      assertEquals(changes, []);
    } finally {
      guard.stop();
    }
  });
});

Deno.test("guardDatabaseFile() trips once on a replaced database file (mv over it)", async () => {
  await withFolder(async (folder) => {
    const path = `${folder}/beacon.db`;
    await Deno.writeTextFile(path, "db");
    const { guard, changes } = await guarded(path);
    try {
      await Deno.writeTextFile(`${folder}/other.db`, "another database");
      await Deno.rename(`${folder}/other.db`, path);
      assertEquals(await guard.check(), "database_replaced");
      // Sticky: even the original coming back does not make the Beacon trust it again.
      assertEquals(await guard.check(), "database_replaced");
      assertEquals(guard.tripped, "database_replaced");
      assertEquals(changes, ["database_replaced"]);
    } finally {
      guard.stop();
    }
  });
});

Deno.test("guardDatabaseFile() trips on a removed database file", async () => {
  await withFolder(async (folder) => {
    const path = `${folder}/beacon.db`;
    await Deno.writeTextFile(path, "db");
    await Deno.writeTextFile(`${path}-wal`, "wal");
    const { guard, changes } = await guarded(path);
    try {
      for (const suffix of ["", "-wal"]) await Deno.remove(path + suffix);
      assertEquals(await guard.check(), "database_removed");
      assertEquals(changes, ["database_removed"]);
    } finally {
      guard.stop();
    }
  });
});

Deno.test("guardDatabaseFile() trips on a removed WAL, also one created after the start", async () => {
  await withFolder(async (folder) => {
    const path = `${folder}/beacon.db`;
    await Deno.writeTextFile(path, "db");
    const { guard, changes } = await guarded(path);
    try {
      assertEquals(await guard.check(), undefined); // no WAL yet: nothing to miss
      await Deno.writeTextFile(`${path}-wal`, "wal");
      assertEquals(await guard.check(), undefined);
      await Deno.remove(`${path}-wal`);
      assertEquals(await guard.check(), "wal_removed");
      assertEquals(changes, ["wal_removed"]);
    } finally {
      guard.stop();
    }
  });
});

Deno.test("guardDatabaseFile() with no file at the path never trips", async () => {
  await withFolder(async (folder) => {
    const { guard, changes } = await guarded(`${folder}/absent.db`);
    await Deno.writeTextFile(`${folder}/absent.db`, "appeared later");
    assertEquals(await guard.check(), undefined);
    assertEquals(changes, []);
    guard.stop();
  });
});

Deno.test("guardDatabaseFile() checks on its own timer, which keeps no process alive", async () => {
  await withFolder(async (folder) => {
    const path = `${folder}/beacon.db`;
    await Deno.writeTextFile(path, "db");
    const tripped = Promise.withResolvers<FileChange>();
    const guard = await guardDatabaseFile(path, { intervalMs: 10, onChange: tripped.resolve });
    // The guard's timer is unref'd: without a timer of the test's own, the event loop would end
    // before it fires ("Promise resolution is still pending but the event loop has already
    // resolved").
    const alive = setInterval(() => {}, 1_000);
    try {
      await Deno.remove(path);
      assertEquals(await tripped.promise, "database_removed");
    } finally {
      clearInterval(alive);
      guard.stop();
    }
  });
});
