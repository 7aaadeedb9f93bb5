/**
 * `BEACON_WAL_LIMIT` bounds the write-ahead log of an embedded database on disk: the real server on
 * a real temporary database, the WAL file's size read from the file system after every submission.
 * A size, not a time, is asserted: the bound is what SQLite does with `wal_autocheckpoint` and
 * `journal_size_limit`, whatever the machine's speed.
 */
import { assert } from "../support/assert.ts";
import { startServer } from "../support/server.ts";
import { submitText } from "../support/tree_heads.ts";

/** The largest size `beacon.db-wal` reached over `count` submissions of about 60 KB each. */
async function largestWal(env: Record<string, string>, count: number): Promise<number> {
  const server = await startServer({ env: { BEACON_LOG: "off", ...env } });
  try {
    let largest = 0;
    for (let i = 0; i < count; i++) {
      await submitText(server.url, `${i} ${"x".repeat(60_000)}`);
      largest = Math.max(largest, (await Deno.stat(`${server.directory}/beacon.db-wal`)).size);
    }
    return largest;
  } finally {
    await server.stop("SIGTERM");
    await Deno.remove(server.directory, { recursive: true });
  }
}

Deno.test("BEACON_WAL_LIMIT=1MiB keeps the WAL within 1 MiB and one commit, where the default lets it grow", async () => {
  const limit = 1024 * 1024;
  // One commit here is one submission: about 60 KB of content in 15 pages, plus the index pages.
  const oneCommit = 128 * 1024;
  const bounded = await largestWal({ BEACON_WAL_LIMIT: "1MiB" }, 100);
  assert(bounded <= limit + oneCommit, `the WAL reached ${bounded} bytes`);
  const unbounded = await largestWal({}, 100);
  assert(unbounded > 4 * limit, `by default the WAL is not cut at 1 MiB: ${unbounded} bytes`);
});
