/**
 * Opening the Beacon's database for the review tool: the same libSQL URL and token as the
 * server (`BEACON_DATABASE_URL`, `BEACON_DATABASE_AUTH_TOKEN`, default `file:data/beacon.db`),
 * or `--database URL`.
 *
 * Reading commands never write: they do not run migrations, and they refuse a database file
 * that does not exist rather than create an empty one. The appending commands (`mark`,
 * `verify`) open it through `SubmissionStore.open`, which applies pending migrations (the
 * `review_events` and `checkpoints` tables) first.
 *
 * @module
 */
import { DEFAULT_DATABASE_URL } from "../defaults.ts";
import type { Client } from "@libsql/client";
import { type DatabaseConfig, embeddedFilePath, isEmbedded, openClient } from "../store/client.ts";
import { SubmissionStore } from "../store/store.ts";
import { CliError } from "./io.ts";

/** Which optional tables exist (an older database may lack them). */
export interface Schema {
  /** `review_events` exists (migration 2). */
  readonly events: boolean;
  /** `checkpoints` exists (migration 2). */
  readonly checkpoints: boolean;
}

/** An open database. */
export interface ReviewDatabase {
  /** The libSQL client. */
  readonly client: Client;
  /** Tables present. */
  readonly schema: Schema;
  /** The store, for appending commands only. */
  readonly store?: SubmissionStore;
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
    await Deno.stat(embeddedFilePath(config.url));
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) {
      throw new CliError(`Cannot open the database: ${config.url} does not exist`);
    }
    throw error;
  }
}

async function readSchema(client: Client): Promise<Schema & { submissions: boolean }> {
  const rows = (await client.execute(
    "SELECT name FROM sqlite_master WHERE type = 'table' AND name IN " +
      "('submissions', 'review_events', 'checkpoints')",
  )).rows.map((row) => String(row.name));
  return {
    submissions: rows.includes("submissions"),
    events: rows.includes("review_events"),
    checkpoints: rows.includes("checkpoints"),
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
    return { client, schema, close: () => Promise.resolve(client.close()) };
  } catch (error) {
    client.close();
    throw error;
  }
}

/**
 * Opens the database for appending review events or checkpoints: migrates it first.
 *
 * @param config URL and token.
 * @param now Clock for the migrations table.
 * @returns The open database, with its store.
 * @throws {CliError} When the file does not exist.
 */
export async function openForAppending(
  config: DatabaseConfig,
  now: () => number,
): Promise<ReviewDatabase> {
  await mustExist(config);
  const store = await SubmissionStore.open(config, now);
  return {
    client: store.client,
    schema: { events: true, checkpoints: true },
    store,
    close: () => store.close(),
  };
}
