/**
 * `review show <id>`: one submission in full. The receipt fields first (what the Beacon
 * recorded), then the signature result, the review history, a warning line when anything was
 * escaped, and the content, every line of which is prefixed (`| `) or labelled, escaped and
 * wrapped by render.ts. The warning line is repeated after the content, where a long body
 * ends.
 *
 * The digest is recomputed from the stored bytes and compared, and for a native structured
 * message the sender's signature is checked again, so a row changed after intake shows here
 * too (see also `verify`).
 *
 * @module
 */
import { sha256Digest } from "../bytes.ts";
import { checkIdentity } from "../message/identity.ts";
import { checkMessage } from "../message/schema.ts";
import { interpretContent, renderContent } from "./content.ts";
import { databaseConfig, openForReading } from "./database.ts";
import { CliError, type Context } from "./io.ts";
import type { OptionValues } from "./options.ts";
import { widthFrom } from "./options.ts";
import { findSubmission, reviewEvents, type SubmissionRow } from "./queries.ts";
import { Findings, safeBlock } from "./render.ts";

/** The options of `show`. */
export const SHOW_OPTIONS: Record<string, never> = {};

async function signatureLines(row: SubmissionRow): Promise<[string, string][]> {
  if (row.identityFingerprint === null) return [["signature", "unsigned"]];
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
 * Runs `show`.
 *
 * @param context Outputs, environment, clock.
 * @param values Parsed options.
 * @param id The receipt id.
 * @returns The exit status.
 * @throws {CliError} When no submission has that id.
 */
export async function showCommand(
  context: Context,
  values: OptionValues,
  id: string,
): Promise<number> {
  const width = widthFrom(values, context.terminalColumns);
  const database = await openForReading(databaseConfig(values.database as string, context.env));
  try {
    const row = await findSubmission(database.client, database.schema, id);
    if (row === undefined) throw new CliError(`Cannot show: no submission has receipt id ${id}`);
    const events = await reviewEvents(database.client, database.schema, id);
    const actual = await sha256Digest(row.content);
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
        (row.size === row.content.length ? "" : ` (MISMATCH: ${row.content.length} stored)`),
    );
    field(
      "digest",
      row.digest +
        (actual === row.digest ? " (matches the content)" : ` (MISMATCH: content is ${actual})`),
    );
    field("context", row.contextId);
    field("source", `${row.sourceHash} (salted hash of the sending address)`);
    if (row.idempotencyKey !== null) field("idempotency key", row.idempotencyKey);
    for (const [label, text] of await signatureLines(row)) field(label, text);
    field("status", row.status ?? "new (no review event)");
    events.forEach((event, i) =>
      field(
        i === 0 ? "history" : "",
        `${event.createdAt} ${event.status}` +
          (event.reviewer === null ? "" : ` by ${event.reviewer}`) +
          (event.note === null ? "" : `: ${event.note}`),
      )
    );
    findings.addAll(content.findings);
    const summary = findings.summary();
    const warning = summary === undefined
      ? []
      : safeBlock(summary, new Findings(), { width, continuation: "         " });
    if (summary !== undefined) lines.push("", ...warning);
    lines.push("", "--- content " + "-".repeat(Math.max(0, width - 13)));
    lines.push(...content.lines);
    lines.push("--- end " + "-".repeat(Math.max(0, width - 9)));
    lines.push(...warning);
    await context.stdout.line(lines.join("\n"));
    return 0;
  } finally {
    await database.close();
  }
}
