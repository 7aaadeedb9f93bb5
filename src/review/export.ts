/**
 * `review export`: every matching submission as one JSON object per line (NDJSON), oldest
 * first, to stdout or `--out FILE`.
 *
 * Streaming in constant memory: rows are read in keyset pages of 500 (`WHERE seq > last ORDER
 * BY seq LIMIT 500`) and each page is written before the next is read, so memory holds one page
 * whatever the size of the store. A progress bar is drawn on stderr only when stderr is a
 * terminal (`Deno.stderr.isTerminal()`), so pipes and files get clean output.
 *
 * Each line (members in this order):
 *
 * ```json
 * {"seq":1,"id":"…","contextId":"…","receivedAt":"…","surface":"native","kind":"structured",
 *  "contentType":"application/json","size":123,"digest":"sha256:…","sourceHash":"…",
 *  "identity":{"fingerprint":"sha256:…","verified":true},"idempotencyKey":null,
 *  "status":"reviewed","contentEncoding":"utf-8","content":"…"}
 * ```
 *
 * `content` holds the stored bytes as text when they are well-formed UTF-8
 * (`contentEncoding: "utf-8"`), otherwise as base64 (RFC 4648 §4, `contentEncoding: "base64"`).
 * `identity` is null for unsigned submissions, `status` null when unreviewed. The JSON is
 * written so that printing it is harmless: characters the renderer would escape are JSON
 * `\uXXXX` escapes (render.ts `safeJson`); parsing gives back the exact content.
 *
 * @module
 */
import { decodeUtf8Strict } from "../json/strict_json.ts";
import { databaseConfig, openForReading } from "./database.ts";
import { CliError, type Context, type Output, Progress, textOutput } from "./io.ts";
import { FILTER_OPTIONS, filtersFrom, type OptionValues } from "./options.ts";
import { countSubmissions, submissionPages, type SubmissionRow } from "./queries.ts";
import { safeJson } from "./render.ts";

/** The options of `export`. */
export const EXPORT_OPTIONS = {
  ...FILTER_OPTIONS,
  out: { type: "string" },
} as const;

/** Rows per keyset page. */
export const EXPORT_PAGE_SIZE = 500;

/**
 * Standard base64 with padding (RFC 4648 §4).
 *
 * @param bytes The bytes.
 * @returns The encoding.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { base64 } from "./export.ts";
 *
 * assert.equal(base64(new Uint8Array([0xff, 0xfe])), "//4=");
 * ```
 */
export function base64(bytes: Uint8Array): string {
  let binary = "";
  for (let i = 0; i < bytes.length; i += 0x8000) {
    binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  }
  return btoa(binary);
}

/**
 * The export record of one row.
 *
 * @param row The stored row.
 * @returns A JSON-ready object.
 */
export function exportRecord(row: SubmissionRow): Record<string, unknown> {
  const text = decodeUtf8Strict(row.content);
  return {
    seq: row.seq,
    id: row.id,
    contextId: row.contextId,
    receivedAt: row.receivedAt,
    surface: row.surface,
    kind: row.kind,
    contentType: row.contentType,
    size: row.size,
    digest: row.digest,
    sourceHash: row.sourceHash,
    identity: row.identityFingerprint === null
      ? null
      : { fingerprint: row.identityFingerprint, verified: row.identityVerified === true },
    idempotencyKey: row.idempotencyKey,
    status: row.status,
    contentEncoding: text === undefined ? "base64" : "utf-8",
    content: text ?? base64(row.content),
  };
}

/**
 * Runs `export`.
 *
 * @param context Outputs, environment, clock.
 * @param values Parsed options.
 * @returns The exit status.
 */
export async function exportCommand(context: Context, values: OptionValues): Promise<number> {
  const filters = filtersFrom(values, context.now());
  const database = await openForReading(databaseConfig(values.database as string, context.env));
  let file: Deno.FsFile | undefined;
  try {
    const path = values.out as string | undefined;
    let out: Output = context.stdout;
    if (path !== undefined) {
      try {
        // createNew: an export never overwrites a file, which may be an earlier export.
        file = await Deno.open(path, { write: true, createNew: true });
      } catch (error) {
        if (error instanceof Deno.errors.AlreadyExists) {
          throw new CliError(`Cannot export: ${path} already exists`);
        }
        throw new CliError(`Cannot export: cannot create ${path} (${(error as Error).name})`);
      }
      out = textOutput(file);
    }
    const total = context.progress === undefined
      ? 0
      : await countSubmissions(database.client, database.schema, filters);
    const progress = new Progress(context.progress, "export", total);
    let done = 0;
    for await (
      const page of submissionPages(database.client, database.schema, filters, EXPORT_PAGE_SIZE)
    ) {
      await out.write(page.map((row) => safeJson(exportRecord(row)) + "\n").join(""));
      done += page.length;
      await progress.update(done);
    }
    await progress.finish();
    await context.stderr.line(
      `exported ${done} submission${done === 1 ? "" : "s"}` +
        (path === undefined ? "" : ` to ${path}`),
    );
    return 0;
  } finally {
    file?.close();
    await database.close();
  }
}
