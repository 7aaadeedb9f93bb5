/**
 * Migration 5 on a database that already holds review events (one made before it existed):
 * every event keeps its `seq` and values, the table stays append-only, and the new statuses,
 * notes and redaction rules apply.
 */
import { createClient } from "@libsql/client";
import { migrate } from "../../src/store/migrations.ts";
import { migrateTo } from "../../tests/support/migrations.ts";
import {
  assertEquals,
  assertMatch,
  assertRejects,
  assertStrictEquals,
} from "../../tests/support/assert.ts";
import { review, tempDatabase } from "./support.ts";
import {
  encodeSeed,
  generateSeed,
  parseSigningKey,
  signingKeyFromSeed,
} from "../../src/signing/key.ts";

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

Deno.test("migration 7 keeps earlier redaction records, unsigned, and verify reports them", async () => {
  const database = await tempDatabase();
  const client = createClient({ url: database.url, intMode: "number" });
  try {
    // A store as versions 1 to 5 left it, with a redaction made before records were signed.
    await migrateTo(client, 5);
    await client.execute(
      "INSERT INTO submissions (id, context_id, received_at, surface, kind, content_type, " +
        "content, size, digest, source_hash) VALUES ('s1', 'c', '2026-01-01T00:00:00.000Z', " +
        "'native', 'unstructured', 'text/plain', X'6869', 2, 'sha256:x', 'h')",
    );
    await client.execute(
      "INSERT INTO redactions (submission_id, reason, redacted_by, created_at) " +
        "VALUES ('s1', 'order 1', 'ops', '2026-01-02T00:00:00.000Z')",
    );
    await client.execute("UPDATE submissions SET content = X'' WHERE id = 's1'");
    // Read-only: the old schema is read as it is (no signature columns yet).
    const key = encodeSeed(generateSeed());
    const trust = (await signingKeyFromSeed(parseSigningKey(key))).publicKey;
    const before = await review(database, ["verify", "--no-checkpoint", "--trust", trust]);
    assertMatch(before.stdout, /^PROBLEM: row 1 \(receipt s1\): redaction record is not signed/m);
    await migrate(client);
    const records = (await client.execute(
      "SELECT submission_id, reason, redacted_by, created_at, signature, public_key FROM redactions",
    )).rows.map((row) => ({ ...row }));
    assertEquals(records, [{
      submission_id: "s1",
      reason: "order 1",
      redacted_by: "ops",
      created_at: "2026-01-02T00:00:00.000Z",
      signature: null,
      public_key: null,
    }]);
    await assertRejects(
      () => client.execute("UPDATE redactions SET signature = 'x'"),
      /append-only/,
    );
    const after = await review(database, ["verify", "--no-checkpoint", "--trust", trust]);
    assertStrictEquals(after.code, 1);
    assertMatch(after.stdout, /^PROBLEM: row 1 \(receipt s1\): redaction record is not signed/m);
  } finally {
    client.close();
    await Deno.remove(database.directory, { recursive: true });
  }
});
