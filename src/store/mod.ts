/**
 * The store's public face for the Beacon's own tools (the reviewer's package in `review/`, which
 * imports the server only through this file, `src/signing/mod.ts` and `src/message/mod.ts`;
 * `review/tests/boundary_test.ts` keeps it so). It opens the same libSQL database the server
 * writes, with the same URL rules, durability settings and file guard, and applies the same
 * migrations; the submission path itself (`store.ts`, the committer) stays private.
 *
 * @example Open a database the way the server does and bring its schema up to date
 * ```ts
 * import assert from "node:assert/strict";
 * import { migrate, openClient } from "./mod.ts";
 *
 * const client = await openClient({ url: ":memory:" });
 * assert.ok(await migrate(client) > 0);
 * client.close();
 * ```
 *
 * @module
 */
export { DEFAULT_DATABASE_URL } from "../defaults.ts";
export { type DatabaseConfig, embeddedFilePath, isEmbedded, openClient } from "./client.ts";
export { missingIndexProblem } from "./file_guard.ts";
export { CHECKPOINT_COLUMNS, ROTATION_COLUMNS } from "./log_rows.ts";
export { migrate } from "./migrations.ts";
export {
  INTAKE_SIGNATURES_FROM,
  SHADOWED_BATCHES,
  signatureColumns,
  signatureJoin,
  signedFieldsOf,
  type StoredSignature,
  storedSignatureOf,
  type SubmissionKind,
  type Surface,
} from "./rows.ts";
