/**
 * `POST /beacon/0.1/submissions`: a structured message (`application/json`, valid against
 * schemas/message.schema.json) or an unstructured one (`text/plain; charset=utf-8`). Answers
 * `202 Accepted` with the receipt and a `Location` of the status resource (RFC 9110 §15.3.3),
 * only after the row is durably committed. The body has already been read under the size limit.
 *
 * @module
 */
import { OutcomeUnknownError } from "../errors.ts";
import { BeaconError } from "../http/errors.ts";
import { jsonResponse } from "../http/json.ts";
import type { Intake, SubmissionInput } from "../intake/accept.ts";
import { describeJsonRefusal, parseStrictJson } from "../json/strict_json.ts";
import { decodeUtf8Strict } from "../json/utf8.ts";
import type { RouteHandler } from "../http/route.ts";
import { checkIdentity, type IdentityCheck } from "../message/identity.ts";
import { checkMessage } from "../message/schema.ts";
import { parseMediaType } from "../http/media_type.ts";
import { nativeReceipt, statusUrl } from "./receipt.ts";
import type { PublicOrigin } from "../http/context.ts";

/** `Idempotency-Key` values: 1–128 visible ASCII characters (our bound; stored, never echoed). */
const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,128}$/;

/** What the submit endpoint needs. */
export interface SubmitOptions {
  readonly intake: Intake;
  /** The public origin for `Location` and the status URL. */
  readonly origin: PublicOrigin;
}

/** Turns the request into what the intake stores, or throws the refusal. */
export async function nativeSubmission(
  request: Request,
  body: Uint8Array<ArrayBuffer>,
  source: string,
): Promise<SubmissionInput> {
  const mediaType = parseMediaType(request.headers.get("content-type"));
  const charsetOk = mediaType?.charset === undefined || mediaType.charset === "utf-8";
  const idempotencyHeader = request.headers.get("idempotency-key");
  if (idempotencyHeader !== null && !IDEMPOTENCY_KEY.test(idempotencyHeader)) {
    throw new BeaconError(
      "invalid_message",
      "Idempotency-Key must be 1 to 128 visible ASCII characters",
    );
  }
  const idempotencyKey = idempotencyHeader ?? undefined;
  if (mediaType?.essence === "application/json" && charsetOk) {
    const parsed = parseStrictJson(body);
    if (!parsed.ok) {
      throw new BeaconError("invalid_json", describeJsonRefusal(parsed.refusal), {
        details: { offset: parsed.offset },
      });
    }
    const checked = checkMessage(parsed.value);
    if (!checked.ok) {
      // The message names the first problem; `fields` lists every one (bounded, schema paths
      // and fixed texts only: src/message/schema.ts).
      const where = checked.field === "" ? "The message" : `Field ${checked.field}`;
      throw new BeaconError("invalid_message", `${where} ${checked.problem}`, {
        details: { fields: checked.violations },
      });
    }
    const identity: IdentityCheck | undefined = await checkIdentity(checked.message);
    return {
      surface: "native",
      kind: "structured",
      contentType: "application/json",
      content: body,
      source,
      identity,
      idempotencyKey,
    };
  }
  if (mediaType?.essence === "text/plain" && charsetOk) {
    const text = decodeUtf8Strict(body);
    if (text === undefined) {
      throw new BeaconError("invalid_message", "The text is not well-formed UTF-8");
    }
    if (text.trim() === "") throw new BeaconError("invalid_message", "The text is empty");
    return {
      surface: "native",
      kind: "unstructured",
      contentType: "text/plain; charset=utf-8",
      content: body,
      source,
      idempotencyKey,
    };
  }
  throw new BeaconError("unsupported_media_type");
}

/** The submit route handler. */
export function submitHandler(options: SubmitOptions): RouteHandler {
  return async (context) => {
    const input = await nativeSubmission(
      context.request,
      context.body ?? new Uint8Array(0),
      context.source,
    );
    const origin = options.origin(context);
    let accepted;
    try {
      accepted = await options.intake.accept(input);
    } catch (error) {
      // The sender learns the id and where to look: the status URL tells the truth later.
      if (error instanceof OutcomeUnknownError) throw error.at((id) => statusUrl(origin, id));
      throw error;
    }
    const { receipt, replayed } = accepted;
    context.log.outcome = replayed ? "replayed" : "accepted";
    context.log.receiptId = receipt.id;
    const body = nativeReceipt(receipt, origin);
    // A replayed retry gets the same answer as the first attempt, marked as such.
    const headers: Record<string, string> = { location: body.receipt.status };
    if (replayed) headers["idempotent-replayed"] = "true";
    return jsonResponse(202, body, headers);
  };
}
