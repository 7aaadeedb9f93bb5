/**
 * Migration 5 on a database that already holds review events (one made before it existed):
 * every event keeps its `seq` and values, the table stays append-only, and the new statuses,
 * notes and redaction rules apply.
 */
import { createClient } from "@libsql/client";
import { migrate } from "../../src/store/migrations.ts";
import { migrateTo } from "../support/migrations.ts";
import { assertEquals, assertRejects } from "../support/assert.ts";
import { tempDatabase } from "../support/review.ts";

Deno.test("migration 5 keeps every earlier review event and the append-only rules", async () => {
  const database = await tempDatabase();
  const client = createClient({ url: database.url, intMode: "number" });
  try {
    await client.execute("PRAGMA foreign_keys = ON");
    // The database as versions 1 to 4 left it, with a submission and two events.
    await migrateTo(client, 4);
    await client.execute(
      "INSERT INTO submissions (id, context_id, received_at, surface, kind, content_type, " +
        "content, size, digest, source_hash) VALUES ('s1', 'c', 't', 'native', 'unstructured', " +
        "'text/plain', X'6869', 2, 'sha256:x', 'h')",
    );
    await client.execute(
      "INSERT INTO review_events (submission_id, status, note, reviewer, created_at) VALUES " +
        "('s1', 'escalated', 'look again', 'ana', 't1'), ('s1', 'reviewed', NULL, NULL, 't2')",
    );
    await migrate(client);
    const events = (await client.execute(
      "SELECT seq, submission_id, status, note, reviewer, created_at, supersedes " +
        "FROM review_events ORDER BY seq",
    )).rows.map((row) => ({ ...row }));
    assertEquals(events, [
      {
        seq: 1,
        submission_id: "s1",
        status: "escalated",
        note: "look again",
        reviewer: "ana",
        created_at: "t1",
        supersedes: null,
      },
      {
        seq: 2,
        submission_id: "s1",
        status: "reviewed",
        note: null,
        reviewer: null,
        created_at: "t2",
        supersedes: null,
      },
    ]);
    await assertRejects(() => client.execute("UPDATE review_events SET note = 'x'"), /append-only/);
    await assertRejects(() => client.execute("DELETE FROM review_events"), /append-only/);
    await assertRejects(
      () => client.execute("UPDATE submissions SET content = X''"),
      /append-only/,
    );
    // The new forms: a note alone correcting an earlier note, and the status "new".
    await client.execute(
      "INSERT INTO review_events (submission_id, status, note, created_at, supersedes) VALUES " +
        "('s1', NULL, 'look again tomorrow', 't3', 1), ('s1', 'new', NULL, 't4', NULL)",
    );
    await assertRejects(
      () =>
        client.execute(
          "INSERT INTO review_events (submission_id, status, note, created_at) " +
            "VALUES ('s1', NULL, NULL, 't5')",
        ),
      /CHECK/,
    );
  } finally {
    client.close();
  }
});
