/**
 * `review redact <id> --reason "…" [--reviewer NAME]`: removes the content of one submission
 * when the law requires it (illegal content, an erasure order), accountably. Only the holder of
 * the Beacon's key can: it needs `BEACON_SIGNING_KEY`, and refuses in one line without it. It
 * appends a redaction record (which row, who, when, why) signed with that key
 * (src/signing/redaction.ts) and sets only the content bytes to empty, in one transaction, then
 * erases the leftovers (FTS5 merge, `secure_delete`, WAL checkpoint: data/appends.ts); the row,
 * its digest, its size and its place in the Merkle tree stay, so `verify` still passes (and
 * lists the item as redacted) and the sender's receipt still verifies. The database enforces it
 * (store/migrations.ts, version 5): content can be removed only for an id with a redaction
 * record, nothing else about a row can change, and redaction records are append-only. The
 * server's answers about the id do not change.
 *
 * @module
 */
import { signRedaction } from "../../src/signing/mod.ts";
import { type Erasure, fileHolds, MAX_REASON, MAX_REVIEWER, redact } from "../data/appends.ts";
import { databaseConfig, openForAppending } from "../data/database.ts";
import { resolveId } from "../data/ids.ts";
import { configuredKey } from "../data/keys.ts";
import { embeddedFilePath, isEmbedded } from "../../src/store/mod.ts";
import { CliError, type Context } from "../io.ts";
import type { OptionValues } from "./options.ts";
import { safeText } from "../render/mod.ts";

/** Shorter contents are not looked for in the file: a few bytes match by chance. */
const MIN_REMNANT_BYTES = 16;

/** The options of `redact`. */
export const REDACT_OPTIONS = {
  reason: { type: "string" },
  reviewer: { type: "string" },
} as const;

/** The reason and the operator's name, each required and bounded (both are recorded, signed). */
function redactionParts(context: Context, values: OptionValues): { reason: string; by: string } {
  const reason = (values.reason as string | undefined)?.trim();
  const by = ((values.reviewer as string | undefined) ?? context.env("BEACON_REVIEWER"))?.trim();
  if (
    reason === undefined || reason === "" || reason.length > MAX_REASON || !reason.isWellFormed()
  ) {
    throw new CliError(
      `Cannot redact: --reason "…" is required (the legal ground, at most ${MAX_REASON} characters)`,
      2,
    );
  }
  if (by === undefined || by === "" || by.length > MAX_REVIEWER || !by.isWellFormed()) {
    throw new CliError(
      "Cannot redact: say who you are with --reviewer NAME or BEACON_REVIEWER (it is recorded)",
      2,
    );
  }
  return { reason, by };
}

/**
 * What the erasure left, said plainly: on a remote database the files are the database server's;
 * on a file, a copy in free space from before, or a WAL another process kept from checkpointing.
 */
async function reportRemnants(
  context: Context,
  url: string,
  erased: Erasure,
  removed: Uint8Array | undefined,
): Promise<void> {
  if (erased === "remote") {
    await context.stdout.line(
      "the database is remote: the search index was merged, but freed pages and the WAL are " +
        "on the database server; erase them there (docs/review.md, Redaction)",
    );
  } else if (
    erased === "complete" && removed !== undefined && removed.length >= MIN_REMNANT_BYTES &&
    await fileHolds(embeddedFilePath(url), removed)
  ) {
    await context.stdout.line(
      "copies of the old content remain in free space of the database file (written before " +
        "every connection erased what it freed): stop the server and run VACUUM on the file " +
        "(docs/review.md, Redaction)",
    );
  } else if (erased === "wal busy") {
    await context.stdout.line(
      "the WAL checkpoint did not complete (another process has the database open): the old " +
        "bytes stay in the -wal file until it does; stop the server, whose close checkpoints " +
        "and removes it (docs/review.md, Redaction)",
    );
  }
}

/**
 * Runs `redact`.
 *
 * @param context Outputs, environment, clock.
 * @param values Parsed options.
 * @param typed The receipt id or a unique prefix.
 * @returns The exit status.
 * @throws {CliError} Status 2 without a reason or an operator name, 1 for an unknown id or one
 *   already redacted.
 */
export async function redactCommand(
  context: Context,
  values: OptionValues,
  typed: string,
): Promise<number> {
  const { reason, by } = redactionParts(context, values);
  // Only the key holder redacts: the record is signed, and verify refuses one that is not.
  const key = await configuredKey(context);
  if (key === undefined) {
    throw new CliError(
      "Cannot redact: BEACON_SIGNING_KEY is not set (a redaction record must be signed with " +
        "the Beacon's key)",
    );
  }
  const config = databaseConfig(values.database as string, context.env);
  const database = await openForAppending(config, context.now);
  try {
    const id = await resolveId(database.client, typed, "redact");
    const createdAt = new Date(context.now()).toISOString();
    const { outcome, erased, removed } = await redact(
      database.client,
      { id, reason, by, createdAt },
      async (record) => ({ signature: await signRedaction(key, record), publicKey: key.publicKey }),
      isEmbedded(config.url) && config.url !== ":memory:",
    );
    if (outcome !== "redacted") throw new CliError(`Cannot redact ${safeText(id)}: ${outcome}`);
    await context.stdout.line(
      `${safeText(id)} redacted ${createdAt} by ${safeText(by)}: content removed; digest, size ` +
        "and its place in the Merkle tree kept; record signed by key " + key.publicKey,
    );
    await reportRemnants(context, config.url, erased, removed);
    return 0;
  } finally {
    await database.close();
  }
}
