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
