/**
 * `deno task migrate`: applies the Beacon's migrations to the database named by
 * `BEACON_DATABASE_URL` (with `BEACON_DATABASE_AUTH_TOKEN` for Turso / `sqld`) and exits. Run it
 * before deploying to a platform whose instances should not race to migrate a shared remote
 * database at their first request (Workers, Deno Deploy, many instances on Turso). Every
 * migration is idempotent, so running it twice, or beside a starting server, changes nothing.
 *
 * Prints one JSON line, `{"event":"migrated","applied":N,"version":V}`, and exits 0; on failure
 * prints `{"event":"error","message":...}` to stderr and exits 1. The token is never printed.
 *
 * @example
 * ```sh
 * BEACON_DATABASE_URL=libsql://beacon-example.turso.io \
 * BEACON_DATABASE_AUTH_TOKEN="$(turso db tokens create beacon)" deno task migrate
 * ```
 *
 * @module
 */
import { openClient } from "../store/client.ts";
import { migrate, MIGRATIONS } from "../store/migrations.ts";
import { configFromEnvironment } from "../start/config.ts";
import { DEFAULT_DATABASE_URL } from "../defaults.ts";

/**
 * Applies every pending migration to `database` and reports how many ran and the schema version.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { migrateDatabase } from "./migrate.ts";
 *
 * const { applied, version } = await migrateDatabase({ url: ":memory:" });
 * assert.ok(applied > 0 && version > 0); // a new database: every migration applied
 * ```
 */
export async function migrateDatabase(
  database: { url: string; authToken?: string },
): Promise<{ applied: number; version: number }> {
  const client = await openClient(database);
  try {
    const applied = await migrate(client);
    const rows = (await client.execute("SELECT max(version) AS version FROM schema_migrations"))
      .rows;
    return { applied, version: Number(rows[0]?.version ?? 0) };
  } finally {
    client.close();
  }
}

/** Host part of a database URL for messages (never the query, which may hold a token). */
function describe(url: string): string {
  if (url.startsWith("file:") || url === ":memory:") return url.split("?")[0];
  try {
    const parsed = new URL(url);
    return `${parsed.protocol}//${parsed.host}`;
  } catch {
    return "(unparsable URL)";
  }
}

if (import.meta.main) {
  try {
    const config = configFromEnvironment((name) => Deno.env.get(name));
    const database = config.options.database ?? { url: DEFAULT_DATABASE_URL };
    const { applied, version } = await migrateDatabase(database);
    const latest = MIGRATIONS[MIGRATIONS.length - 1]?.version ?? 0;
    console.log(JSON.stringify({
      event: "migrated",
      database: describe(database.url),
      applied,
      version,
      latest,
    }));
    Deno.exit(version === latest ? 0 : 1);
  } catch (error) {
    const message = error instanceof Error && error.message.startsWith("Cannot start")
      ? error.message.replace("Cannot start", "Cannot migrate")
      : `Cannot migrate: ${(error as Error)?.message ?? "unknown error"}`;
    console.error(JSON.stringify({ event: "error", message }));
    Deno.exit(1);
  }
}
