import { createClient } from "@libsql/client";
import { assertEquals } from "../support/assert.ts";
import { migrate, MIGRATIONS } from "../../src/store/migrations.ts";

Deno.test("migrate() applies every migration once and is idempotent", async () => {
  const client = createClient({ url: ":memory:" });
  try {
    assertEquals(await migrate(client), MIGRATIONS.length);
    assertEquals(await migrate(client), 0);
    const versions = (await client.execute("SELECT version FROM schema_migrations ORDER BY 1"))
      .rows.map((row) => Number(row.version));
    assertEquals(versions, MIGRATIONS.map((migration) => migration.version));
  } finally {
    client.close();
  }
});

Deno.test("migrate() upgrades a version-3 database: rate limits lose raw addresses", async () => {
  const client = createClient({ url: ":memory:" });
  try {
    // A database as version 3 left it, with a row keyed by a raw address.
    await client.execute(
      `CREATE TABLE schema_migrations (
        version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL) STRICT`,
    );
    for (const migration of MIGRATIONS.filter((m) => m.version <= 3)) {
      await client.batch([...migration.statements], "write");
      await client.execute({
        sql: "INSERT INTO schema_migrations VALUES (?, ?, ?)",
        args: [migration.version, migration.name, new Date(0).toISOString()],
      });
    }
    await client.execute(
      "INSERT INTO rate_limits (key, tat, allowed) VALUES ('203.0.113.9', 1, 1)",
    );
    assertEquals(await migrate(client), MIGRATIONS.length - 3);
    assertEquals((await client.execute("SELECT count(*) AS n FROM rate_limits")).rows[0].n, 0);
    const columns = (await client.execute("PRAGMA table_info(rate_limits)")).rows.map((row) =>
      row.name
    );
    assertEquals(columns, ["key", "tat"]);
  } finally {
    client.close();
  }
});
