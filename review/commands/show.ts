/**
 * `review show <id>`: one submission in full. The receipt fields first (what the Beacon
 * recorded), then the signature result, the review history, a warning line when anything was
 * escaped, and the content, every line of which is prefixed (`| `) or labelled, escaped and
 * wrapped by render/mod.ts. The warning line is repeated after the content, where a long body
 * ends.
 *
 * The digest is recomputed from the stored bytes and compared, and for a native structured
 * message the sender's signature is checked again, so a row changed after intake shows here
 * too (see also `verify`). The receipt signature the intake stored with the row is checked
 * against the published key (data/receipt_signature.ts); nothing is signed here.
 *
 * @module
 */
import { fromBase64url, sha256Digest } from "../../src/signing/mod.ts";
import { checkIdentity, checkMessage } from "../../src/message/mod.ts";
import { interpretContent, renderContent } from "../render/content.ts";
import { databaseConfig, openForReading, type ReviewDatabase } from "../data/database.ts";
import { resolveId } from "../data/ids.ts";
import { CliError, type Context } from "../io.ts";
import { FILTER_OPTIONS, filtersFrom, type OptionValues, widthFrom } from "./options.ts";
import {
  countSubmissions,
  findSubmission,
  queuePage,
  type SubmissionRow,
} from "../data/queries.ts";
import { type ReviewEvent, reviewEvents } from "../data/events.ts";
import { Findings, safeBlock } from "../render/mod.ts";
import { receiptSignatureReport } from "../data/receipt_signature.ts";
import { readsAs } from "../search/reads_as.ts";
import { configuredKey, storedPublicKey } from "./verify.ts";

/** The options of `show`: `--trust KEY`, the published key receipt signatures are checked against. */
export const SHOW_OPTIONS = { trust: { type: "string" } } as const;

/** The options of `next`: the filters, and the key receipts are checked against, as for show. */
export const NEXT_OPTIONS = { ...FILTER_OPTIONS, ...SHOW_OPTIONS } as const;

async function signatureLines(row: SubmissionRow): Promise<[string, string][]> {
  if (row.identityFingerprint === null) return [["signature", "unsigned"]];
  if (row.redaction !== null) {
    return [
      ["signature", row.identityVerified ? "verified at intake" : "did NOT verify at intake"],
      [
        "signer key",
        row.identityFingerprint,
      ],
    ];
  }
  const lines: [string, string][] = [
    [
      "signature",
      row.identityVerified
        ? "verified at intake: the holder of this key sent it (key continuity, not who or " +
          "what the sender is)"
        : "did NOT verify at intake: the key below is only a claim",
    ],
    ["signer key", row.identityFingerprint],
  ];
  if (row.surface === "native" && row.kind === "structured") {
    let now: string;
    try {
      const checked = checkMessage(JSON.parse(new TextDecoder().decode(row.content)));
      if (!checked.ok) now = "the content is no longer a valid message";
      else {
        const identity = await checkIdentity(checked.message);
        const verified = identity?.verified === true;
        now = (verified ? "verified" : "NOT verified") +
          (verified === row.identityVerified ? "" : " (differs from the stored result!)");
      }
    } catch {
      now = "the content no longer parses";
    }
    lines.push(["re-checked now", now]);
  }
  return lines;
}

/**
 * The key a stored receipt signature is checked against: `--trust KEY` (the key the Beacon
 * publishes in its discovery document), else the public half of `BEACON_SIGNING_KEY` (used for
 * nothing else here: no review tool signs a receipt), else that of the key the server stored.
 *
 * @param context The environment.
 * @param database The open database.
 * @param trust The `--trust` value, if given.
 * @returns The raw Ed25519 public key, base64url, if known.
 */
export async function publishedKey(
  context: Context,
  database: ReviewDatabase,
  trust?: unknown,
): Promise<string | undefined> {
  if (typeof trust === "string") {
    if (fromBase64url(trust)?.length !== 32) {
      throw new CliError(
        "Cannot parse --trust: give a raw Ed25519 public key in base64url (43 characters)",
        2,
      );
    }
    return trust;
  }
  return (await configuredKey(context))?.publicKey ?? await storedPublicKey(database);
}

/**
 * Runs `show`.
 *
 * @param context Outputs, environment, clock.
 * @param values Parsed options.
 * @param typed The receipt id or a unique prefix.
 * @returns The exit status.
 * @throws {CliError} When no submission has that id.
 */
export async function showCommand(
  context: Context,
  values: OptionValues,
  typed: string,
): Promise<number> {
  const database = await openForReading(databaseConfig(values.database as string, context.env));
  try {
    const id = await resolveId(database.client, typed, "show");
    const row = await findSubmission(database.client, database.schema, id);
    if (row === undefined) throw new CliError(`Cannot show: no submission has receipt id ${id}`);
    await context.stdout.line(
      await describeRow(
        database,
        row,
        widthFrom(values, context.terminalColumns),
        await publishedKey(context, database, values.trust),
      ),
    );
    return 0;
  } finally {
    await database.close();
  }
}

/**
 * Runs `next`: the oldest new submission (matching the filters), shown in full, and how many
 * more are waiting.
 *
 * @param context Outputs, environment, clock.
 * @param values Parsed options.
 * @returns The exit status (0 also when the queue is empty).
 */
export async function nextCommand(context: Context, values: OptionValues): Promise<number> {
  const filters = { ...filtersFrom(values, context.now()), status: undefined, unreviewed: true };
  const database = await openForReading(databaseConfig(values.database as string, context.env));
  try {
    const { rows, next } = await queuePage(database.client, database.schema, filters, undefined, 1);
    if (rows.length === 0) {
      await context.stdout.line("the queue is empty: no new submission matches");
      return 0;
    }
    await context.stdout.line(
      await describeRow(
        database,
        rows[0],
        widthFrom(values, context.terminalColumns),
        await publishedKey(context, database, values.trust),
      ),
    );
    const waiting = next === undefined
      ? 0
      : await countSubmissions(database.client, database.schema, filters) - 1;
    await context.stdout.line(
      `next: ${context.program} mark ${rows[0].id.slice(0, 12)} --status reviewed ` +
        `(${waiting === 0 ? "the last new one" : `${waiting} more new after it`}), ` +
        `or work through them all with ${context.program} triage`,
    );
    return 0;
  } finally {
    await database.close();
  }
}

/**
 * One submission in full, as `show`, `next` and `triage` print it: receipt fields, signature,
 * status and history, then the content, rendered inertly.
 *
 * @param database The open database.
 * @param row The submission.
 * @param width The output width.
 * @param publicKey The published key its stored receipt signature is checked against.
 * @returns The text (already rendered safe).
 */
export async function describeRow(
  database: ReviewDatabase,
  row: SubmissionRow,
  width: number,
  publicKey: string | undefined,
): Promise<string> {
  const events = await reviewEvents(database.client, database.schema, row.id);
  const actual = sha256Digest(row.content);
  const view = interpretContent(row.contentType, row.content);
  const content = renderContent(view, width);
  // Stored columns are our own writing, but a tampered database could hold anything: they go
  // through the same renderer, and their findings count too.
  const findings = new Findings();
  const lines: string[] = [];
  const field = (label: string, value: string) =>
    lines.push(
      ...safeBlock(value, findings, {
        width,
        indent: label.padEnd(16),
        continuation: " ".repeat(16),
        newlines: "escape",
      }),
    );
  field("receipt", row.id);
  field("received", row.receivedAt);
  field("surface", row.surface);
  field("kind", `${row.kind} (${row.contentType})`);
  field(
    "size",
    `${row.size} bytes` +
      (row.size === row.content.length || row.redaction !== null
        ? ""
        : ` (MISMATCH: ${row.content.length} stored)`),
  );
  field(
    "digest",
    row.digest +
      (row.redaction !== null && row.content.length === 0
        ? " (of the content as received; the content was redacted)"
        : actual === row.digest
        ? " (matches the content)"
        : ` (MISMATCH: content is ${actual})`),
  );
  field("context", row.contextId);
  field("source", `${row.sourceHash} (salted hash of the sending address)`);
  if (row.idempotencyKey !== null) field("idempotency key", row.idempotencyKey);
  for (const [label, text] of await signatureLines(row)) field(label, text);
  field("receipt sig", (await receiptSignatureReport(row, publicKey)).text);
  field("status", row.status ?? "new (no review event)");
  if (row.redaction !== null) {
    field(
      "REDACTED",
      `${row.redaction.createdAt} by ${row.redaction.by}, reason: ${row.redaction.reason}`,
    );
  }
  events.forEach((event, i) => field(i === 0 ? "history" : "", historyLine(event)));
  findings.addAll(content.findings);
  const summary = findings.summary();
  const warning = summary === undefined
    ? []
    : safeBlock(summary, new Findings(), { width, continuation: "         " });
  if (summary !== undefined) lines.push("", ...warning);
  // What look-alike words read as, as the console says it (search/reads_as.ts): the escaped
  // letters in the content show that a word mixes scripts, this says which word it imitates.
  const redacted = row.redaction !== null && row.content.length === 0;
  const words = redacted ? [] : readsAs(new TextDecoder().decode(row.content));
  if (words.length > 0) {
    lines.push(
      ...safeBlock(`reads as: ${words.join(", ")}`, new Findings(), {
        width,
        continuation: "          ",
      }),
    );
  }
  lines.push("", "--- content " + "-".repeat(Math.max(0, width - 13)));
  if (row.redaction !== null && row.content.length === 0) {
    lines.push("(content redacted: see REDACTED above)");
  } else lines.push(...content.lines);
  lines.push("--- end " + "-".repeat(Math.max(0, width - 9)));
  lines.push(...warning);
  return lines.join("\n");
}

/**
 * One review event as a history line, numbered within its submission's history:
 * `#2 2025-06-01T… reviewed by ana: note`.
 *
 * @param event The event.
 * @returns Untrusted text (the note and name); render it.
 */
export function historyLine(event: ReviewEvent): string {
  return `#${event.number} ${event.createdAt} ${event.status ?? "note"}` +
    (event.reviewer === null ? "" : ` by ${event.reviewer}`) +
    (event.supersedesNumber === null ? "" : ` (corrects the note of #${event.supersedesNumber})`) +
    (event.note === null ? "" : `: ${event.note}`);
}
