/**
 * The database the store is built on, opened and migrated: the general-purpose client
 * (migrations, secrets, the file guard's stamp), the {@linkcode Connection} submissions are read
 * and committed on (src/store/connection/), and a deadline on every call. Every failure surfaces
 * as {@linkcode StorageError} (mapped to `503 unavailable` / -32603), so the handler never has to
 * know which client or which error it was: a stalled database answers 503, it never hangs a
 * request.
 *
 * It is opened before the store, because the Beacon's receipt-signing key is one of its secrets:
 * `openBeacon` (src/open.ts) opens the database, loads the key from it, then builds the
 * {@linkcode SubmissionStore} with the signer (src/store/store.ts).
 *
 * @module
 */
import type { Client } from "@libsql/client";
import { DEFAULT_DATABASE_TIMEOUT_MS } from "../defaults.ts";
import { StorageError } from "../errors.ts";
import { type DatabaseConfig, openClient } from "./client.ts";
import type { Connection, ReadArgs, ReadValue } from "./connection/connection.ts";
import { openConnection } from "./connection/open.ts";
import { withDeadline } from "./faults.ts";
import type { FileLandmark, IdentityStamp } from "./file_guard.ts";
import { migrateSchema, MIGRATIONS } from "./migrations.ts";

/**
 * The column a file landmark compares (file_guard.ts): a submission's id (append-only, never
 * changed: a redaction keeps it) or a start's token.
 */
const LANDMARK_COLUMN: Readonly<Record<FileLandmark["table"], string>> = {
  submissions: "id",
  database_identity: "token",
};

/** An opened, migrated database. */
export class Database {
  /** The general-purpose client: migrations, secrets, the review tool's reads. */
  readonly client: Client;
  /** Where submissions are read and committed. */
  readonly connection: Connection;
  /** The deadline of every call, in milliseconds. */
  readonly timeoutMs: number;
  /** True when this start created the database (every migration was applied just now). */
  readonly created: boolean;
  /** The schema version before this start's migrations (0: a new database) and after them. */
  readonly schema: { readonly from: number; readonly to: number };
  /**
   * One statement at a time in autocommit, with a deadline, for working state beside the
   * submissions (the shared rate limiter, the tree heads). Embedded databases run it on the
   * checked connection, never through the general-purpose client.
   */
  readonly statements: {
    run(
      sql: string,
      args?: Readonly<Record<string, ReadValue>>,
    ): Promise<Record<string, unknown>[]>;
  };

  private constructor(
    client: Client,
    connection: Connection,
    timeoutMs: number,
    schema: { from: number; to: number; applied: number },
  ) {
    this.client = client;
    this.connection = connection;
    this.timeoutMs = timeoutMs;
    this.created = schema.applied === MIGRATIONS.length;
    this.schema = { from: schema.from, to: schema.to };
    this.statements = { run: (sql, args = {}) => this.query(sql, args) };
  }

  /** Opens the database at `config.url` and applies the migrations. */
  static async open(config: DatabaseConfig, now: () => number = Date.now): Promise<Database> {
    const timeoutMs = config.timeoutMs ?? DEFAULT_DATABASE_TIMEOUT_MS;
    const client = await withDeadline(openClient(config, { server: true }), timeoutMs);
    try {
      const schema = await withDeadline(migrateSchema(client, now), timeoutMs);
      return new Database(client, await openConnection(config, client), timeoutMs, schema);
    } catch (error) {
      client.close();
      throw error;
    }
  }

  /** One read (or single-statement write) on the connection, with the deadline. */
  async query(sql: string, args: ReadArgs): Promise<Record<string, unknown>[]> {
    const { connection } = this;
    try {
      return await withDeadline(connection.read(sql, args), this.timeoutMs, connection.abandonRead);
    } catch (error) {
      throw new StorageError(error);
    }
  }

  /**
   * A named secret (a salt, a signing key), created with `create` on first use. Concurrent
   * creators race harmlessly: the first insert wins and everyone reads the winner back.
   * `created` is true when this call stored it.
   */
  async secret(
    name: string,
    create: () => Uint8Array<ArrayBuffer>,
    now: () => number,
  ): Promise<{ value: Uint8Array<ArrayBuffer>; created: boolean }> {
    try {
      const insert = await this.#execute(
        "INSERT OR IGNORE INTO secrets (name, value, created_at) VALUES (?, ?, ?)",
        [name, create(), new Date(now()).toISOString()],
      );
      const rows = await this.#execute("SELECT value FROM secrets WHERE name = ?", [name]);
      const value = rows.rows[0]?.value;
      if (!(value instanceof ArrayBuffer)) throw new Error("secret missing after insert");
      return { value: new Uint8Array(value), created: insert.rowsAffected === 1 };
    } catch (error) {
      throw new StorageError(error);
    }
  }

  /** The named secret, or undefined when none is kept by that name (nothing is created). */
  async storedSecret(name: string): Promise<Uint8Array<ArrayBuffer> | undefined> {
    try {
      const rows = await this.#execute("SELECT value FROM secrets WHERE name = ?", [name]);
      const value = rows.rows[0]?.value;
      return value instanceof ArrayBuffer ? new Uint8Array(value) : undefined;
    } catch (error) {
      throw new StorageError(error);
    }
  }

  /**
   * Stores a fresh random token inside an embedded database file for the file guard (migration
   * 6), keeping the newest 16, and says how to read the file's own copy. Undefined for remote and
   * in-memory databases.
   */
  async stampIdentity(
    randomBytes: (length: number) => Uint8Array<ArrayBuffer>,
    now: () => number,
  ): Promise<IdentityStamp | undefined> {
    const readFileOnDisk = this.connection.readFileOnDisk;
    if (readFileOnDisk === undefined) return undefined;
    const token = Array.from(randomBytes(16), (byte) => byte.toString(16).padStart(2, "0"))
      .join("");
    try {
      await this.#execute(
        "INSERT INTO database_identity (token, stamped_at) VALUES (?, ?)",
        [token, new Date(now()).toISOString()],
      );
      await this.#execute(
        `DELETE FROM database_identity WHERE seq NOT IN
          (SELECT seq FROM database_identity ORDER BY seq DESC LIMIT 16)`,
      );
    } catch (error) {
      throw new StorageError(error);
    }
    return {
      token,
      tokens: async () =>
        (await readFileOnDisk("SELECT token FROM database_identity")).map((row) =>
          String(row.token)
        ),
      landmark: async () => {
        for (const table of ["submissions", "database_identity"] as const) {
          const [row] = await readFileOnDisk(
            `SELECT seq, ${
              LANDMARK_COLUMN[table]
            } AS value FROM ${table} ORDER BY seq DESC LIMIT 1`,
          );
          if (row !== undefined) return { table, seq: Number(row.seq), value: String(row.value) };
        }
        return undefined;
      },
      holds: async ({ table, seq, value }) => {
        if (!Number.isSafeInteger(seq)) return false;
        const rows = await readFileOnDisk(
          `SELECT ${LANDMARK_COLUMN[table]} AS value FROM ${table} WHERE seq = ${seq}`,
        );
        return rows.length === 1 && String(rows[0].value) === value;
      },
      // On the checked connection, which never blocks the thread on a lock (the client's
      // connection would wait up to its busy timeout while another process holds the lock).
      settle: async () => void await this.query("PRAGMA wal_checkpoint(PASSIVE)", []),
    };
  }

  /** The schema version the database holds now (readiness: one row, on the connection). */
  async schemaVersion(): Promise<number> {
    const rows = await this.query("SELECT MAX(version) AS version FROM schema_migrations", []);
    return Number(rows[0]?.version ?? 0);
  }

  /** Closes the connection, then the client. */
  async close(): Promise<void> {
    await this.connection.close();
    this.client.close();
  }

  /** One statement on the general-purpose client, with the deadline. */
  #execute(sql: string, args: (string | number | Uint8Array)[] = []) {
    return withDeadline(this.client.execute({ sql, args }), this.timeoutMs);
  }
}
