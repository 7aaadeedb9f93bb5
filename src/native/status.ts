/**
 * `GET /beacon/0.1/submissions/{id}`: the status of a receipt id, `{id, state, receivedAt}`.
 * Ids are capabilities (128 random bits), so knowing one is the only authorisation; an id that is
 * not even well-formed is answered `404` without touching the database.
 *
 * @module
 */
import { BeaconError } from "../http/errors.ts";
import { jsonResponse } from "../http/json.ts";
import type { Intake } from "../intake/accept.ts";
import type { RouteHandler } from "../http/route.ts";

/** The status route handler. */
export function statusHandler(intake: Intake): RouteHandler {
  return async (context) => {
    const id = context.params.id ?? "";
    const found = await intake.find(id);
    if (found === undefined) throw new BeaconError("not_found", "No submission with this id");
    context.log.outcome = "served";
    context.log.receiptId = found.id;
    return jsonResponse(200, { id: found.id, state: "received", receivedAt: found.receivedAt });
  };
}
