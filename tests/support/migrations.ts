/**
 * A database as an earlier version of the Beacon left it: the migrations up to a version, each
 * recorded as `migrate()` records it, so a test can fill it and then upgrade it.
 *
 * @module
 */
import type { Client } from "@libsql/client";
import { MIGRATIONS } from "../../src/store/migrations.ts";

/** Applies the migrations up to and including `version` to `client`'s (empty) database. */
export async function migrateTo(client: Client, version: number): Promise<void> {
  await client.execute(
    "CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, " +
      "applied_at TEXT NOT NULL) STRICT",
  );
  for (const migration of MIGRATIONS.filter((migration) => migration.version <= version)) {
    await client.batch([
      ...migration.statements,
      {
        sql: "INSERT INTO schema_migrations VALUES (?, ?, 'x')",
        args: [migration.version, migration.name],
      },
    ], "write");
  }
}
