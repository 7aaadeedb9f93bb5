/**
 * `GET /beacon/0.1/tree-head`: the latest signed tree head of the Beacon's key
 * (src/transparency/signer.ts), so that monitors can keep tree heads outside the database
 * (docs/protocol-0.1.md §6.5). The document is the checkpoint's signed members plus the signature
 * and key:
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
import type { Context } from "../http/context.ts";
import type { RouteHandler } from "../http/route.ts";
import type { ConsistencyProof, SignedTreeHead } from "../transparency/signer.ts";

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

/** A tree size in a query: a decimal safe integer without sign or leading zeros. */
export const TREE_SIZE = /^(?:0|[1-9][0-9]{0,15})$/;

/**
 * Serves a proof document with the validators of the documents (src/http/cacheable.ts):
 * `Last-Modified` the time of the head it was built under (`asOf`), and `max-age` as given.
 */
export async function serveProof(
  context: Context,
  body: Record<string, unknown>,
  asOf: string,
  maxAgeSeconds: number,
): Promise<Response> {
  const modified = new Date(asOf);
  context.log.outcome = "served";
  return serveDocument(
    context.request,
    await prepareDocument(body, {
      lastModified: Number.isNaN(modified.getTime()) ? new Date(0) : modified,
      maxAgeSeconds,
    }),
  );
}

const NO_PROOF = "No consistency proof for those sizes: give first and second with " +
  "0 ≤ first ≤ second ≤ the latest tree head's treeSize";

/**
 * `GET /beacon/0.1/tree-head/consistency?first=M&second=N`: the consistency proof between the
 * trees of M and N submissions (RFC 9162 §2.1.4.1), so that a monitor holding the head of size M
 * can check that the head of size N only appended to it (§2.1.4.2):
 *
 * ```json
 * {"first":3,"second":7,"proof":["<64 hex>", …]}
 * ```
 *
 * Sizes up to the latest head's. Anything else (a missing, repeated, malformed or larger size) is
 * `404 not_found`: there is no such proof. A proof never changes, so it is cacheable like the
 * documents.
 *
 * @param prove Builds the proof (src/transparency/signer.ts), undefined beyond the latest head.
 * @returns The handler.
 */
export function consistencyHandler(
  prove: (first: number, second: number) => Promise<ConsistencyProof | undefined>,
): RouteHandler {
  return async (context) => {
    const query = context.url.searchParams;
    // Each size exactly once: `first=1&first=2` names no one proof, and answering with either
    // value would be a guess (a cache keyed on one of them would store the other's answer).
    const firsts = query.getAll("first");
    const seconds = query.getAll("second");
    const [first = "", second = ""] = [firsts[0], seconds[0]];
    if (
      firsts.length !== 1 || seconds.length !== 1 || !TREE_SIZE.test(first) ||
      !TREE_SIZE.test(second) || Number(first) > Number(second)
    ) {
      throw new BeaconError("not_found", NO_PROOF);
    }
    const proof = await prove(Number(first), Number(second));
    if (proof === undefined) throw new BeaconError("not_found", NO_PROOF);
    return await serveProof(
      context,
      { first: proof.first, second: proof.second, proof: proof.proof },
      proof.asOf,
      TREE_HEAD_MAX_AGE_SECONDS,
    );
  };
}
