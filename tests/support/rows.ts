/**
 * A row as `SubmissionStore.append` would hand it to a connection, for the store tests that
 * commit rows directly: an unstructured native submission whose content is its id.
 *
 * @module
 */
import type { NewSubmission } from "../../src/store/rows.ts";

/** A submission `id`; `overrides` replace any field (the idempotency key, the source hash, …). */
export function newSubmission(id: string, overrides: Partial<NewSubmission> = {}): NewSubmission {
  return {
    id,
    contextId: "ctx-" + id,
    receivedAt: new Date(0).toISOString(),
    surface: "native",
    kind: "unstructured",
    contentType: "text/plain; charset=utf-8",
    content: new TextEncoder().encode(id),
    digest: "sha256:00",
    sourceHash: "source",
    ...overrides,
  };
}
