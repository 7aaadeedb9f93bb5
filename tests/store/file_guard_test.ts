/**
 * The database file guard on real temporary files: a replaced, removed or overwritten database
 * file, a removed WAL and a removed or rebuilt `-shm` index trip it (once, sticky); an untouched
 * one, a WAL that appears later, or no file at all do not. And the second-process check.
 */
import { assert, assertEquals } from "../support/assert.ts";
import {
  type FileChange,
  type FileCheckFailure,
  type FileGuard,
  guardDatabaseFile,
  missingIndexProblem,
} from "../../src/store/file_guard.ts";
import { EmbeddedConnection } from "../../src/store/connection/embedded/checked_connection.ts";

async function withFolder(run: (folder: string) => Promise<void>): Promise<void> {
  const folder = await Deno.makeTempDir({ prefix: "beacon-guard-" });
  try {
    await run(folder);
  } finally {
    await Deno.remove(folder, { recursive: true });
  }
}

/** What a guarded test sees: the database path, the guard and the changes it reported. */
interface Guarded {
  readonly folder: string;
  readonly path: string;
  readonly guard: FileGuard;
  readonly changes: FileChange[];
}

/**
 * Writes `files` (suffix → contents: `""` is the database file, `-wal`, `-shm`) in a fresh folder,
 * guards `beacon.db` there, runs `check`, and stops the guard and removes the folder.
 */
async function withGuard(
  files: Readonly<Record<string, string>>,
  check: (guarded: Guarded) => Promise<void>,
): Promise<void> {
  await withFolder(async (folder) => {
    const path = `${folder}/beacon.db`;
    for (const [suffix, contents] of Object.entries(files)) {
      await Deno.writeTextFile(path + suffix, contents);
    }
    const changes: FileChange[] = [];
    const guard = await guardDatabaseFile(path, { onChange: (change) => changes.push(change) });
    try {
      await check({ folder, path, guard, changes });
    } finally {
      guard.stop();
    }
  });
}

Deno.test("guardDatabaseFile() stays quiet while the files are the ones it saw", async () => {
  await withGuard({ "": "db", "-wal": "wal" }, async ({ path, guard, changes }) => {
    // Writes change the contents, never the identity.
    await Deno.writeTextFile(path, "db, grown", { append: true });
    await Deno.writeTextFile(`${path}-wal`, "wal, grown", { append: true });
    assertEquals(await guard.check(), undefined);
    assertEquals(changes, []);
  });
});

Deno.test("guardDatabaseFile() trips once on a replaced database file (mv over it)", async () => {
  await withGuard({ "": "db" }, async ({ folder, path, guard, changes }) => {
    await Deno.writeTextFile(`${folder}/other.db`, "another database");
    await Deno.rename(`${folder}/other.db`, path);
    assertEquals(await guard.check(), "database_replaced");
    // Sticky: even the original coming back does not make the Beacon trust it again.
    assertEquals(await guard.check(), "database_replaced");
    assertEquals(guard.tripped, "database_replaced");
    assertEquals(changes, ["database_replaced"]);
  });
});

Deno.test("guardDatabaseFile() trips on a removed database file", async () => {
  await withGuard({ "": "db", "-wal": "wal" }, async ({ path, guard, changes }) => {
    for (const suffix of ["", "-wal"]) await Deno.remove(path + suffix);
    assertEquals(await guard.check(), "database_removed");
    assertEquals(changes, ["database_removed"]);
  });
});

Deno.test("guardDatabaseFile() trips on a removed WAL, also one created after the start", async () => {
  await withGuard({ "": "db" }, async ({ path, guard, changes }) => {
    assertEquals(await guard.check(), undefined); // no WAL yet: nothing to miss
    await Deno.writeTextFile(`${path}-wal`, "wal");
    assertEquals(await guard.check(), undefined);
    await Deno.remove(`${path}-wal`);
    assertEquals(await guard.check(), "wal_removed");
    assertEquals(changes, ["wal_removed"]);
  });
});

Deno.test("guardDatabaseFile() with no file at the path never trips", async () => {
  await withGuard({}, async ({ path, guard, changes }) => {
    await Deno.writeTextFile(path, "appeared later");
    assertEquals(await guard.check(), undefined);
    assertEquals(changes, []);
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

Deno.test("guardDatabaseFile() trips on a removed -shm index, and on one rebuilt by another process", async () => {
  for (const fault of ["removed", "replaced"] as const) {
    await withGuard({ "": "x", "-wal": "x", "-shm": "x" }, async ({ path, guard, changes }) => {
      await Deno.remove(`${path}-shm`);
      if (fault === "replaced") await Deno.writeTextFile(`${path}-shm`, "a fresh index");
      assertEquals(await guard.check(), `shm_${fault}`);
      assertEquals(changes, [`shm_${fault}`]);
    });
  }
});

/** A stamp's landmark part for tests whose token reaches the file at the start. */
const NO_LANDMARK = {
  landmark: () => Promise.resolve(undefined),
  holds: () => Promise.resolve(true),
};

Deno.test("guardDatabaseFile() trips once the database file, overwritten in place, lost the start's token", async () => {
  await withFolder(async (folder) => {
    const path = `${folder}/beacon.db`;
    // The file's own copy of the tokens (the real one is read through SQLite, WAL aside).
    await Deno.writeTextFile(path, "an older start");
    let settled = 0;
    const changes: FileChange[] = [];
    const guard = await guardDatabaseFile(path, {
      onChange: (change) => changes.push(change),
      identity: {
        token: "0123456789abcdef",
        tokens: async () => (await Deno.readTextFile(path)).split(","),
        ...NO_LANDMARK,
        // The checkpoint: the token reaches the file.
        settle: async () => {
          settled++;
          await Deno.writeTextFile(path, "an older start,0123456789abcdef");
        },
      },
    });
    try {
      assertEquals(await guard.check(), undefined, "checkpointed, then seen");
      assertEquals(settled, 1);
      assertEquals(await guard.check(), undefined);
      assertEquals(settled, 1, "seen once, no more checkpoints asked for");
      const inode = (await Deno.stat(path)).ino;
      await Deno.writeTextFile(path, "an older start"); // a backup copied over it: same inode
      assertEquals((await Deno.stat(path)).ino, inode);
      assertEquals(await guard.check(), "database_overwritten");
      assertEquals(changes, ["database_overwritten"]);
    } finally {
      guard.stop();
    }
  });
});

/**
 * A real database file holding `token` in the guard's table, and the guard's identity that
 * reads it through SQLite as the Beacon does (`EmbeddedConnection.readFile`), or, while
 * `unreadable.now` is set, reads a path SQLite cannot open: the driver's own failure, as when
 * the process is out of descriptors.
 */
async function realIdentity(folder: string, token: string) {
  const path = `${folder}/beacon.db`;
  const { default: Driver } = await import("libsql");
  const db = new Driver(path);
  db.exec("CREATE TABLE database_identity (seq INTEGER PRIMARY KEY, token TEXT)");
  db.prepare("INSERT INTO database_identity (token) VALUES (?)").run(token);
  db.close();
  const unreadable = { now: false };
  const read = (file: string) =>
    EmbeddedConnection.readFile(file, "SELECT token FROM database_identity")
      .then((rows) => rows.map((row) => String(row.token)));
  return {
    path,
    unreadable,
    identity: {
      token,
      tokens: () => read(unreadable.now ? `${folder}/no-such-folder/beacon.db` : path),
      ...NO_LANDMARK,
      settle: () => Promise.resolve(),
    },
  };
}

Deno.test("guardDatabaseFile() takes a check that could not run for what it is: unchecked, reported, tried again, never tripped", async () => {
  await withFolder(async (folder) => {
    const { path, unreadable, identity } = await realIdentity(folder, "0123456789abcdef");
    const changes: FileChange[] = [];
    const failures: FileCheckFailure[] = [];
    const guard = await guardDatabaseFile(path, {
      identity,
      onChange: (change) => changes.push(change),
      onCheckFailed: (failure) => failures.push(failure),
    });
    try {
      assertEquals(await guard.check(), undefined);
      assertEquals(guard.state, "guarding");
      unreadable.now = true;
      assertEquals(await guard.check(), undefined, "a failed read is no overwrite");
      assertEquals(await guard.check(), undefined);
      assertEquals(guard.state, "unchecked");
      assertEquals(changes, []);
      assertEquals(failures.length, 2, "one report per check, after its retries");
      assertEquals(failures[0].name, "DatabaseFileCheckFailed");
      assert(failures[0].cause !== undefined, "the driver's error travels as the cause");
      unreadable.now = false;
      assertEquals(await guard.check(), undefined);
      assertEquals(guard.state, "guarding", "the next check that runs decides");
      // It still sees a real overwrite afterwards: another file copied over it in place.
      await Deno.writeTextFile(path, "not a database any more ".repeat(200));
      assertEquals(await guard.check(), "database_overwritten");
      assertEquals(guard.state, "tripped");
      assertEquals(changes, ["database_overwritten"]);
    } finally {
      guard.stop();
    }
  });
});

Deno.test("guardDatabaseFile() looks twice before it calls a missing token an overwrite", async () => {
  await withFolder(async (folder) => {
    const path = `${folder}/beacon.db`;
    await Deno.writeTextFile(path, "0123456789abcdef");
    let torn = 0; // reads that see the file without the token, as a read across a write can
    const changes: FileChange[] = [];
    const guard = await guardDatabaseFile(path, {
      onChange: (change) => changes.push(change),
      identity: {
        token: "0123456789abcdef",
        tokens: async () => torn-- > 0 ? [] : (await Deno.readTextFile(path)).split(","),
        ...NO_LANDMARK,
        settle: () => Promise.resolve(),
      },
    });
    try {
      assertEquals(await guard.check(), undefined);
      torn = 1;
      assertEquals(await guard.check(), undefined, "one look without the token is no verdict");
      assertEquals(changes, []);
      torn = 2;
      assertEquals(await guard.check(), "database_overwritten", "two looks in a row are");
    } finally {
      guard.stop();
    }
  });
});

Deno.test("guardDatabaseFile() trips when the file, overwritten in place, is another database without the token table", async () => {
  await withFolder(async (folder) => {
    const { path, identity } = await realIdentity(folder, "fedcba9876543210");
    const guard = await guardDatabaseFile(path, { identity });
    try {
      assertEquals(await guard.check(), undefined);
      await Deno.writeFile(path, new Uint8Array()); // truncated in place: SQLite reads no table
      assertEquals(await guard.check(), "database_overwritten");
    } finally {
      guard.stop();
    }
  });
});

Deno.test("guardDatabaseFile() with the token held back at the start: the file's landmark decides until the token arrives, on two looks", async () => {
  await withFolder(async (folder) => {
    const path = `${folder}/beacon.db`;
    // The file's own rows (the real ones are read through SQLite, WAL aside); a reader of
    // another process holds every checkpoint back, so the token never arrives.
    await Deno.writeTextFile(path, "submission 7 a7");
    let torn = 0;
    const changes: FileChange[] = [];
    const guard = await guardDatabaseFile(path, {
      onChange: (change) => changes.push(change),
      identity: {
        token: "0123456789abcdef",
        tokens: async () => (await Deno.readTextFile(path)).split(","),
        landmark: () => Promise.resolve({ table: "submissions", seq: 7, value: "a7" }),
        holds: async ({ seq, value }) =>
          torn-- <= 0 && (await Deno.readTextFile(path)).includes(`submission ${seq} ${value}`),
        settle: () => Promise.resolve(),
      },
    });
    try {
      assertEquals(await guard.check(), undefined, "held back, the landmark is there");
      torn = 1;
      assertEquals(await guard.check(), undefined, "one look without it is no verdict");
      await Deno.writeTextFile(path, "submission 3 b3"); // another database copied over it
      assertEquals(await guard.check(), "database_overwritten");
      assertEquals(changes, ["database_overwritten"]);
    } finally {
      guard.stop();
    }
  });
});

Deno.test("missingIndexProblem() refuses a WAL without its -shm index, in one line, and nothing else", async () => {
  await withFolder(async (folder) => {
    const path = `${folder}/beacon.db`;
    assertEquals(await missingIndexProblem(path), undefined, "no database at all");
    await Deno.writeTextFile(path, "db");
    assertEquals(await missingIndexProblem(path), undefined, "closed cleanly: no WAL");
    // A WAL header (32 bytes) and one frame's worth of bytes: something that could be lost.
    await Deno.writeFile(`${path}-wal`, new Uint8Array(32 + 4096 + 24));
    await Deno.writeTextFile(`${path}-shm`, "shm");
    assertEquals(await missingIndexProblem(path), undefined, "open, or crashed: both there");
    await Deno.remove(`${path}-shm`);
    const problem = await missingIndexProblem(path);
    assert(problem !== undefined && !problem.includes("\n") && problem.includes("-shm"));
    // A WAL with no frame (what a TRUNCATE checkpoint leaves) holds nothing to lose.
    await Deno.writeFile(`${path}-wal`, new Uint8Array(0));
    assertEquals(await missingIndexProblem(path), undefined, "an empty WAL");
    // A WAL that goes away while it looks is no removed index: the connection that closes last
    // deletes the -shm just before the WAL.
    await Deno.writeFile(`${path}-wal`, new Uint8Array(32 + 4096 + 24));
    const looking = missingIndexProblem(path);
    await Deno.remove(`${path}-wal`);
    assertEquals(await looking, undefined, "the WAL went away while looking");
  });
});
