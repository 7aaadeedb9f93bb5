/**
 * Opening the Beacon's database for the review tool: the same libSQL URL and token as the
 * server (`BEACON_DATABASE_URL`, `BEACON_DATABASE_AUTH_TOKEN`, default `file:data/beacon.db`),
 * or `--database URL`.
 *
 * Reading commands never write: they do not run migrations, and they refuse a database file
 * that does not exist rather than create an empty one. The appending commands (`mark`,
 * `redact`, `verify` with a key, `serve`) apply pending migrations first (the review tables,
 * store/migrations.ts) on a plain client: the review tool never opens the server's store, and
 * never creates or reads a signing key.
 *
 * @module
 */
import {
  type DatabaseConfig,
  DEFAULT_DATABASE_URL,
  embeddedFilePath,
  isEmbedded,
  migrate,
  missingIndexProblem,
  openClient,
} from "../../src/store/mod.ts";
import type { Client } from "@libsql/client";
import { stat } from "node:fs/promises";
import { CliError } from "../io.ts";

/** Which optional tables exist (an older database may lack them). */
export interface Schema {
  /** `review_events` exists (migration 2). */
  readonly events: boolean;
  /** `checkpoints` exists (migration 2). */
  readonly checkpoints: boolean;
  /** `redactions` exists, and review events have `supersedes` (migration 5). */
  readonly redactions: boolean;
  /** Redaction records carry `signature` and `public_key` (migration 7). */
  readonly signedRedactions: boolean;
  /** `receipt_signatures` exists: receipt signatures stored at intake (migration 9). */
  readonly receiptSignatures: boolean;
  /** `log_settings` exists: where intake signatures are required is recorded (migration 10). */
  readonly logSettings: boolean;
  /** `receipt_batches` exists: receipt signatures stored one row per batch (migration 11). */
  readonly receiptBatches: boolean;
}

/** An open database. */
export interface ReviewDatabase {
  /** The libSQL client. */
  readonly client: Client;
  /** Tables present. */
  readonly schema: Schema;
  /** Whether it was opened for appending (migrated). */
  readonly appending: boolean;
  /** The URL it was opened with (an embedded database's key file is beside its file). */
  readonly url: string;
  /** Closes it. */
  close(): Promise<void>;
}

/**
 * The database configuration from `--database` and the environment.
 *
 * @param flag The `--database` value, if given.
 * @param env Reads an environment variable.
 * @returns URL and token.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { databaseConfig } from "./database.ts";
 *
 * assert.equal(databaseConfig(undefined, () => undefined).url, "file:data/beacon.db");
 * ```
 */
export function databaseConfig(
  flag: string | undefined,
  env: (name: string) => string | undefined,
): DatabaseConfig {
  const url = flag ?? nonEmpty(env("BEACON_DATABASE_URL")) ?? DEFAULT_DATABASE_URL;
  return { url, authToken: nonEmpty(env("BEACON_DATABASE_AUTH_TOKEN")) };
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === "" ? undefined : value;
}

async function mustExist(config: DatabaseConfig): Promise<void> {
  if (!isEmbedded(config.url) || config.url === ":memory:") return;
  try {
    await stat(embeddedFilePath(config.url));
  } catch (error) {
    if ((error as { code?: unknown })?.code === "ENOENT") {
      throw new CliError(`Cannot open the database: ${config.url} does not exist`);
    }
    throw error;
  }
  // Never beside a running server whose -shm index was removed: one line, no index.
  const problem = await missingIndexProblem(embeddedFilePath(config.url));
  if (problem !== undefined) throw new CliError(problem);
}

async function readSchema(client: Client): Promise<Schema & { submissions: boolean }> {
  const rows = (await client.execute(
    "SELECT name FROM sqlite_master WHERE type = 'table' AND name IN " +
      "('submissions', 'review_events', 'checkpoints', 'redactions', 'receipt_signatures', " +
      "'log_settings', 'receipt_batches')",
  )).rows.map((row) => String(row.name));
  return {
    submissions: rows.includes("submissions"),
    events: rows.includes("review_events"),
    checkpoints: rows.includes("checkpoints"),
    redactions: rows.includes("redactions"),
    receiptSignatures: rows.includes("receipt_signatures"),
    logSettings: rows.includes("log_settings"),
    receiptBatches: rows.includes("receipt_batches"),
    signedRedactions: rows.includes("redactions") && (await client.execute(
          "SELECT 1 FROM pragma_table_info('redactions') WHERE name = 'signature'",
        )).rows.length > 0,
  };
}

/**
 * Opens the database for reading, without migrating or creating anything.
 *
 * @param config URL and token.
 * @returns The open database.
 * @throws {CliError} When the file does not exist or holds no `submissions` table.
 */
export async function openForReading(config: DatabaseConfig): Promise<ReviewDatabase> {
  await mustExist(config);
  const client = await openClient(config);
  try {
    const schema = await readSchema(client);
    if (!schema.submissions) {
      throw new CliError(
        `Cannot read the database: ${config.url} holds no Beacon submissions table`,
      );
    }
    return {
      client,
      schema,
      appending: false,
      url: config.url,
      close: () => Promise.resolve(client.close()),
    };
  } catch (error) {
    client.close();
    throw error;
  }
}

/**
 * Opens the database for appending review events, redaction records or checkpoints: applies
 * pending migrations first.
 *
 * @param config URL and token.
 * @param now Clock for the migrations table.
 * @returns The open database.
 * @throws {CliError} When the file does not exist or holds no `submissions` table.
 */
export async function openForAppending(
  config: DatabaseConfig,
  now: () => number,
): Promise<ReviewDatabase> {
  await mustExist(config);
  const client = await openClient(config);
  try {
    if (!(await readSchema(client)).submissions) {
      throw new CliError(
        `Cannot open the database: ${config.url} holds no Beacon submissions table`,
      );
    }
    await migrate(client, now);
    return {
      client,
      schema: {
        events: true,
        checkpoints: true,
        redactions: true,
        signedRedactions: true,
        receiptSignatures: true,
        logSettings: true,
        receiptBatches: true,
      },
      appending: true,
      url: config.url,
      close: () => Promise.resolve(client.close()),
    };
  } catch (error) {
    client.close();
    throw error;
  }
}
