/**
 * `GET /beacon/0.1/submissions/{id}`: the status of a receipt id, `{id, state, receivedAt}`, and
 * `log` once a published checkpoint covers it.
 * Ids are capabilities (128 random bits), so knowing one is the only authorisation; an id that is
 * not even well-formed is answered `404` without touching the database.
 *
 * @module
 */
import { BeaconError } from "../http/errors.ts";
import { jsonResponse } from "../http/json.ts";
import type { Intake } from "../intake/accept.ts";
import type { RouteHandler } from "../http/route.ts";

/**
 * The status route handler.
 *
 * @param intake Finds the submission.
 * @param loggedSize The size of the newest published checkpoint (0 before the first): a
 *   submission it covers gets `"log": {"index": N}`, its leaf's 0-based index in the signed log,
 *   against which `…/inclusion` proves it (docs/protocol-0.1.md §6.5).
 */
export function statusHandler(intake: Intake, loggedSize: () => Promise<number>): RouteHandler {
  return async (context) => {
    const id = context.params.id ?? "";
    const found = await intake.find(id);
    if (found === undefined) throw new BeaconError("not_found", "No submission with this id");
    context.log.outcome = "served";
    context.log.receiptId = found.id;
    const status: Record<string, unknown> = {
      id: found.id,
      state: "received",
      receivedAt: found.receivedAt,
    };
    if (found.seq !== undefined && found.seq <= await loggedSize()) {
      status.log = { index: found.seq - 1 };
    }
    return jsonResponse(200, status);
  };
}
