/**
 * Counts what a Beacon stored, by opening its database file after the server has stopped.
 *
 * @module
 */

/**
 * Rows in `tableName` of the libSQL file at `databasePath`: `[count, ""]`, or `[null, why]` when
 * the table is not there (the schema is the server's business; the bench only reports).
 */
export async function countRows(
  databasePath: string,
  tableName: string,
): Promise<[number | null, string]> {
  // Loaded on demand, so runs without a Beacon never need the native libSQL package.
  const { createClient } = await import("@libsql/client");
  const client = createClient({ url: `file:${databasePath}` });
  try {
    const tables = await client.execute(
      "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name",
    );
    const names = tables.rows.map((r) => String(r.name));
    if (!names.includes(tableName)) {
      return [null, `no table ${tableName} (tables: ${names.join(", ") || "none"})`];
    }
    // The name was checked against the schema above, so quoting it here is safe.
    const result = await client.execute(`SELECT count(*) AS n FROM "${tableName}"`);
    return [Number(result.rows[0].n), ""];
  } finally {
    client.close();
  }
}

/**
 * A Beacon's commits and the rows they stored, read from its database after the server stopped:
 * every commit that stores a row stores its batch's one signature beside it, in one row of
 * `receipt_batches` that names its first and last `seq` (the rows of one commit are numbered
 * consecutively under its write lock). So the bench needs nothing from the running Beacon, which
 * it measures as it ships (no metrics endpoint). `null` when the table is not there.
 */
export async function countCommits(
  databasePath: string,
): Promise<{ commits: number; submissions: number } | null> {
  const { createClient } = await import("@libsql/client");
  const client = createClient({ url: `file:${databasePath}` });
  try {
    const tables = await client.execute(
      "SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'receipt_batches'",
    );
    if (tables.rows.length === 0) return null;
    const result = await client.execute(
      "SELECT count(*) AS commits, coalesce(sum(last_seq - first_seq + 1), 0) AS submissions " +
        "FROM receipt_batches",
    );
    return {
      commits: Number(result.rows[0].commits),
      submissions: Number(result.rows[0].submissions),
    };
  } finally {
    client.close();
  }
}
