/**
 * `review list`: the newest submissions, one compact line each, for triage.
 *
 * Columns: receipt id, time received (UTC, to the minute), type (surface `nat` native or
 * `a2a`, and kind `msg` structured or `text` unstructured: `nat/msg`), size, signer (first 8 hex digits of the key fingerprint, `/ok` when the
 * signature verified at intake, `/NO` when it did not; `-` unsigned), latest review status
 * (`new` when unreviewed), a `!` when the content holds characters shown escaped, and the
 * subject or first words. Everything from the submission is rendered by render.ts.
 *
 * @module
 */
import { interpretContent, previewOf, renderContent } from "./content.ts";
import { openForReading } from "./database.ts";
import type { Context } from "./io.ts";
import {
  FILTER_OPTIONS,
  filtersFrom,
  integerOption,
  type OptionValues,
  widthFrom,
} from "./options.ts";
import { latestSubmissions, type SubmissionRow } from "./queries.ts";
import { databaseConfig } from "./database.ts";
import { displayWidth, Findings, safeBlock, safeExcerpt, safeJson, safeText } from "./render.ts";

/** The options of `list`. */
export const LIST_OPTIONS = {
  ...FILTER_OPTIONS,
  limit: { type: "string" },
  json: { type: "boolean" },
} as const;

/**
 * A byte count in few columns: `512B`, `1.5K`, `64.0K`, `1.2M` (at most 5 columns below 1000 MiB).
 *
 * @param bytes The count.
 * @returns The short text.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { shortSize } from "./list.ts";
 *
 * assert.equal(shortSize(1536), "1.5K");
 * ```
 */
export function shortSize(bytes: number): string {
  if (bytes < 1024) return `${bytes}B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)}K`;
  return `${(bytes / 1024 / 1024).toFixed(1)}M`;
}

/**
 * The type column: surface (`nat` native, `a2a`) and kind (`msg` structured, `text`
 * unstructured), e.g. `nat/msg`.
 *
 * @param surface The stored surface.
 * @param kind The stored kind.
 * @returns At most 8 characters.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { typeColumn } from "./list.ts";
 *
 * assert.equal(typeColumn("a2a", "unstructured"), "a2a/text");
 * ```
 */
export function typeColumn(surface: string, kind: string): string {
  const from = surface === "native" ? "nat" : surface === "a2a" ? "a2a" : "?";
  return from + "/" + (kind === "structured" ? "msg" : kind === "unstructured" ? "text" : "?");
}

/**
 * The signer column: `a1b2c3d4/ok`, `a1b2c3d4/NO` or `-`.
 *
 * @param fingerprint The stored `sha256:<hex>` fingerprint, or null.
 * @param verified Whether the signature verified at intake.
 * @returns The column text (stored values, so render it before printing).
 */
export function signerColumn(fingerprint: string | null, verified: boolean | null): string {
  if (fingerprint === null) return "-";
  return fingerprint.replace(/^sha256:/, "").slice(0, 8) + (verified ? "/ok" : "/NO");
}

const HEADER = [
  "RECEIPT".padEnd(30),
  "RECEIVED (UTC)".padEnd(16),
  "TYPE".padEnd(8),
  "SIZE".padEnd(5),
  "SIGNER".padEnd(11),
  "STATUS".padEnd(9),
  " ",
  "SUBJECT OR FIRST WORDS",
].join(" ");

function line(row: SubmissionRow, width: number, findings: Findings): string {
  const view = interpretContent(row.contentType, row.content);
  const rendered = renderContent(view, width);
  findings.addAll(rendered.findings);
  const columns = [
    safeText(row.id).padEnd(30),
    safeText(row.receivedAt.slice(0, 16).replace("T", " ")).padEnd(16),
    typeColumn(row.surface, row.kind).padEnd(8),
    shortSize(row.size).padEnd(5),
    safeText(signerColumn(row.identityFingerprint, row.identityVerified)).padEnd(11),
    (row.status ?? "new").padEnd(9),
    rendered.findings.any ? "!" : " ",
  ].join(" ");
  const room = Math.max(20, width - displayWidth(columns) - 1);
  return columns + " " + safeExcerpt(previewOf(view), room);
}

/**
 * Runs `list`.
 *
 * @param context Outputs, environment, clock.
 * @param values Parsed options.
 * @returns The exit status.
 */
export async function listCommand(context: Context, values: OptionValues): Promise<number> {
  const filters = filtersFrom(values, context.now());
  const limit = integerOption(values, "limit", 50, 100_000);
  const width = widthFrom(values, context.terminalColumns);
  const database = await openForReading(databaseConfig(values.database as string, context.env));
  try {
    const rows = await latestSubmissions(database.client, database.schema, filters, limit);
    if (values.json === true) {
      const items = rows.map((row) => {
        const view = interpretContent(row.contentType, row.content);
        return {
          seq: row.seq,
          id: row.id,
          receivedAt: row.receivedAt,
          surface: row.surface,
          kind: row.kind,
          contentType: row.contentType,
          size: row.size,
          digest: row.digest,
          signer: row.identityFingerprint === null
            ? null
            : { fingerprint: row.identityFingerprint, verified: row.identityVerified === true },
          status: row.status,
          preview: previewOf(view),
          escaped: renderContent(view, width).findings.toJSON(),
        };
      });
      await context.stdout.line(safeJson(items, 2));
      return 0;
    }
    if (rows.length === 0) {
      await context.stdout.line("no submissions match");
      return 0;
    }
    const findings = new Findings();
    const lines = [HEADER];
    let flagged = 0;
    for (const row of rows) {
      const before = new Findings();
      const text = line(row, width, before);
      if (before.any) flagged++;
      findings.addAll(before);
      lines.push(text);
    }
    await context.stdout.line(lines.join("\n"));
    if (flagged > 0) {
      const summary = findings.summary()?.replace("warning: ", "");
      const footer = `! ${flagged} of ${rows.length} submissions: ${summary}`;
      await context.stdout.line(
        safeBlock(footer, new Findings(), { width, continuation: "  " }).join("\n"),
      );
    }
    if (rows.length === limit) {
      await context.stdout.line(`(newest ${limit} shown; --limit N shows more)`);
    }
    return 0;
  } finally {
    await database.close();
  }
}
