/**
 * The signed log over HTTP, in the ecosystem's formats (docs/protocol-0.1.md §6.5):
 *
 * - `GET <prefix>/checkpoint`: the newest checkpoint, a C2SP signed note
 *   (c2sp.org/tlog-checkpoint), `text/plain; charset=utf-8`, cacheable for a few seconds;
 * - `GET <prefix>/tile/<L>/<N>[.p/<W>]`: a hash tile (c2sp.org/tlog-tiles), the concatenated
 *   32-byte hashes, `application/octet-stream`, immutable: a tile never changes at any width;
 * - `GET /beacon/0.1/submissions/{id}/inclusion[?size=N]`: the inclusion proof of a receipt's
 *   submission (RFC 9162 §2.1.3) against the checkpoint of `N` leaves (default: the newest), to
 *   whoever holds the receipt id, like its status.
 *
 * Entry bundles (`<prefix>/tile/entries/…`) are not served, although c2sp.org/tlog-tiles says a
 * log SHOULD: a leaf holds a receipt id, and a receipt id authorises status reads (protocol §6.12),
 * so publishing the leaves would hand every receipt to everyone. A submitter checks its own
 * submission with its receipt and the inclusion proof; a monitor checks the log with the tiles.
 *
 * @module
 */
import { BeaconError } from "../http/errors.ts";
import type { RouteHandler } from "../http/route.ts";
import type { Intake } from "../intake/accept.ts";
import { parseTilePath, tileBytes } from "../signing/tiles.ts";
import type { InclusionProof, PublishedCheckpoint } from "../transparency/signer.ts";
import { serveProof, TREE_SIZE } from "./tree_head.ts";

/** How long a client may reuse a checkpoint before asking again (tlog-tiles: "a few seconds"). */
export const CHECKPOINT_MAX_AGE_SECONDS = 5;

/** How long a tile may be kept: it never changes (tlog-tiles: "long-lived caching"). */
const TILE_MAX_AGE_SECONDS = 31_536_000;

/** `GET <prefix>/checkpoint`. */
export function checkpointHandler(
  checkpoint: () => Promise<PublishedCheckpoint | undefined>,
): RouteHandler {
  return async (context) => {
    const published = await checkpoint();
    if (published === undefined) throw new BeaconError("not_found", "No checkpoint yet");
    context.log.outcome = "served";
    return new Response(published.note, {
      status: 200,
      headers: {
        "content-type": "text/plain; charset=utf-8",
        "cache-control": `public, max-age=${CHECKPOINT_MAX_AGE_SECONDS}`,
      },
    });
  };
}

/** `GET <prefix>/tile/…`: 404 for a path that names no tile the newest checkpoint covers. */
export function tileHandler(
  tile: (level: number, index: number, width: number) => Promise<readonly Uint8Array[] | undefined>,
): RouteHandler {
  return async (context) => {
    const named = parseTilePath(context.params["*"] ?? "");
    const entries = named === undefined
      ? undefined
      : await tile(named.level, named.index, named.width);
    if (entries === undefined) throw new BeaconError("not_found", "No such tile");
    context.log.outcome = "served";
    return new Response(tileBytes(entries), {
      status: 200,
      headers: {
        "content-type": "application/octet-stream",
        "cache-control": `public, max-age=${TILE_MAX_AGE_SECONDS}, immutable`,
      },
    });
  };
}

/** `GET /beacon/0.1/submissions/{id}/inclusion[?size=N]`. */
export function inclusionHandler(
  intake: Intake,
  prove: (index: number, size?: number) => Promise<InclusionProof | undefined>,
): RouteHandler {
  return async (context) => {
    const sizes = context.url.searchParams.getAll("size");
    const [size] = sizes;
    // One size, or none; a repeated or malformed one names no proof.
    if (sizes.length > 1 || (size !== undefined && !TREE_SIZE.test(size))) {
      throw new BeaconError("not_found", "No inclusion proof for that tree size");
    }
    const found = await intake.find(context.params.id ?? "");
    if (found?.seq === undefined) {
      throw new BeaconError("not_found", "No submission with this id");
    }
    context.log.receiptId = found.id;
    const proof = await prove(found.seq - 1, size === undefined ? undefined : Number(size));
    if (proof === undefined) {
      throw new BeaconError("not_found", "No checkpoint of that size covers this submission yet");
    }
    return await serveProof(
      context,
      { index: proof.index, treeSize: proof.treeSize, proof: proof.proof },
      proof.asOf,
      CHECKPOINT_MAX_AGE_SECONDS,
    );
  };
}
