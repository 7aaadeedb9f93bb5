/**
 * `GET /beacon/0.1/tree-head`: the latest signed tree head of the Beacon's key (src/tree_heads.ts),
 * so that monitors can keep tree heads outside the database (docs/protocol-0.1.md §6.5). The
 * document is the checkpoint's signed members plus the signature and key:
 *
 * ```json
 * {"algorithm":"Ed25519","treeSize":3,"rootHash":"<64 hex>","createdAt":"…Z",
 *  "publicKey":"<base64url>","signature":"<base64url>"}
 * ```
 *
 * It is served with the validators of the other documents (src/http/cacheable.ts), `Last-Modified`
 * being the head's time. Before the first head is signed the answer is `404 not_found`.
 *
 * @module
 */
import { BeaconError } from "../http/errors.ts";
import { type CachedDocument, prepareDocument, serveDocument } from "../http/cacheable.ts";
import type { RouteHandler } from "../http/route.ts";
import type { SignedTreeHead } from "../tree_heads.ts";

/** How long a client may reuse a tree head without asking again, in seconds. */
export const TREE_HEAD_MAX_AGE_SECONDS = 60;

/**
 * The published form of a signed tree head.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { treeHeadDocument } from "./tree_head.ts";
 *
 * const head = treeHeadDocument({
 *   seq: 1,
 *   treeSize: 0,
 *   rootHash: "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
 *   createdAt: "2025-06-01T00:00:00.000Z",
 *   signature: "sig",
 *   publicKey: "key",
 * });
 * assert.deepEqual(Object.keys(head), [
 *   "algorithm", "treeSize", "rootHash", "createdAt", "publicKey", "signature",
 * ]);
 * ```
 */
export function treeHeadDocument(head: SignedTreeHead): Record<string, unknown> {
  return {
    algorithm: "Ed25519",
    treeSize: head.treeSize,
    rootHash: head.rootHash,
    createdAt: head.createdAt,
    publicKey: head.publicKey,
    signature: head.signature,
  };
}

/**
 * The route handler.
 *
 * @param latest The latest head of the Beacon's key, from the database.
 * @returns The handler: 200 (or 304) with the head, 404 before the first one.
 */
export function treeHeadHandler(latest: () => Promise<SignedTreeHead | undefined>): RouteHandler {
  // The prepared document of the last head served: one per head, not one per request.
  let cached: { seq: number; document: CachedDocument } | undefined;
  return async (context) => {
    const head = await latest();
    if (head === undefined) {
      throw new BeaconError("not_found", "No tree head has been signed yet");
    }
    if (cached?.seq !== head.seq) {
      const modified = new Date(head.createdAt);
      cached = {
        seq: head.seq,
        document: await prepareDocument(treeHeadDocument(head), {
          lastModified: Number.isNaN(modified.getTime()) ? new Date(0) : modified,
          maxAgeSeconds: TREE_HEAD_MAX_AGE_SECONDS,
        }),
      };
    }
    context.log.outcome = "served";
    return serveDocument(context.request, cached.document);
  };
}
