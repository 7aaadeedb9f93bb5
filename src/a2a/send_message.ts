/**
 * `SendMessage` (A2A §3.1.1, §9.4.1): an A2A message becomes a Beacon submission, stored through
 * the same intake as the native protocol, and the answer is `{"task": Task}` in
 * `TASK_STATE_SUBMITTED` whose id is the receipt id and whose metadata is the native receipt.
 *
 * The steps, each refusing before the next one costs more:
 *
 * 1. Validate the request (§3.3.2, §13.4): -32602 naming the field, never its value.
 * 2. `configuration.taskPushNotificationConfig` → -32003. The spec does not say what a server
 *    without push does with it, and the JS SDK silently drops it; the Beacon refuses, because
 *    a client that asked to be called back must not believe it will be (design principle 1).
 * 3. Any `raw` or `url` part → -32005 ContentTypeNotSupportedError (§3.1.1 for unsupported
 *    media): raw bytes evade text review, and a URL is an address the Beacon never resolves.
 * 4. The content: exactly one `data` part holding a valid beacon/0.1 message makes a
 *    structured submission (its `data`, serialised); otherwise a message with a non-blank
 *    `text` part is stored whole as an unstructured submission; otherwise -32602.
 * 5. A non-empty `message.taskId` → -32001 when no such task exists (§3.1.1), -32004 when it
 *    does; a non-empty `message.contextId` → -32004. Each submission opens a new task:
 *    continuing one would mean returning to stored content.
 * 6. Store, keyed by `messageId` and the SHA-256 of the message's RFC 8785 canonical form
 *    ({@linkcode idempotencyKeyOf}): a retry of the same message from the same source within the
 *    window returns the same task, whatever its member order; the same `messageId` with other
 *    content is a new submission. A2A 1.0 makes `messageId` creator-chosen and defines no rule
 *    for a reused one, and clients (the official conformance suite among them) build ids from a
 *    prefix and send several messages under one; refusing those would break them.
 *
 * §3.2.2 makes blocking the default: without `returnImmediately` the server waits for a
 * terminal or interrupted state. A Beacon task never leaves `TASK_STATE_SUBMITTED` by
 * automation (people read submissions later), so waiting would never end; the task is returned
 * at once in either mode (docs/a2a.md, "Deviations").
 *
 * @module
 */
import type { Intake, Receipt } from "../intake/accept.ts";
import type { JsonValue } from "../json/value.ts";
import { sha256Hex } from "../bytes.ts";
import { canonicalJson } from "../json/canonical.ts";
import { checkIdentity, type IdentityCheck } from "../message/identity.ts";
import { type BeaconMessage, checkMessage } from "../message/schema.ts";
import { nativeReceipt, statusUrl } from "../native/receipt.ts";
import { OutcomeUnknownError } from "../errors.ts";
import { A2AFailure, type FieldViolation, invalidParams } from "./errors.ts";
import { isJsonObject, type JsonObject } from "../json/value.ts";
import {
  checkTenant,
  INT32_MAX,
  member,
  optionalBoolean,
  optionalInteger,
  optionalObject,
  optionalString,
  optionalStringArray,
  requiredId,
} from "./params.ts";

/** Longest accepted `messageId`, in code points (it is part of the stored idempotency key). */
export const MAX_MESSAGE_ID_LENGTH = 128;

/** Most parts accepted in one message. */
export const MAX_PARTS = 64;

/** The `Part` content members (A2A §4.1 `Part`: exactly one is set). */
const CONTENT_MEMBERS: readonly PartContent[] = ["text", "raw", "url", "data"];

/** Which content member a part holds. */
export type PartContent = "text" | "raw" | "url" | "data";

/** A `SendMessageRequest` that passed validation. */
export interface CheckedSendMessage {
  /** The message exactly as parsed (stored whole for an unstructured submission). */
  readonly message: JsonObject;
  /** `message.messageId`. */
  readonly messageId: string;
  /** The parts, in order, with the content member each holds. */
  readonly parts: readonly { readonly content: PartContent; readonly part: JsonObject }[];
  /** `message.taskId` when non-empty. */
  readonly taskId: string | undefined;
  /** `message.contextId` when non-empty. */
  readonly contextId: string | undefined;
  /** Whether `configuration.taskPushNotificationConfig` was set. */
  readonly wantsPush: boolean;
}

/** What will be stored for a message. */
export type MappedContent =
  | {
    readonly kind: "structured";
    readonly content: Uint8Array<ArrayBuffer>;
    /** The data part's value, checked against the message schema. */
    readonly message: BeaconMessage;
  }
  | { readonly kind: "unstructured"; readonly content: Uint8Array<ArrayBuffer> };

function checkRole(message: JsonObject): void {
  const role = member(message, "role");
  // ProtoJSON writes enums as names; parsers also accept the number (ROLE_USER = 1).
  if (role === "ROLE_USER" || role === 1) return;
  if (role === undefined || role === "ROLE_UNSPECIFIED" || role === 0) {
    throw invalidParams("message.role", "is required");
  }
  throw invalidParams("message.role", "must be ROLE_USER");
}

function checkPart(value: JsonValue, path: string): { content: PartContent; part: JsonObject } {
  if (!isJsonObject(value)) throw invalidParams(path, "must be an object");
  let content: PartContent | undefined;
  let present = 0;
  for (const name of CONTENT_MEMBERS) {
    if (member(value, name) === undefined) continue;
    content = name;
    present++;
  }
  if (present !== 1 || content === undefined) {
    throw invalidParams(path, "must have exactly one of text, raw, url or data");
  }
  // `data` is any JSON value (google.protobuf.Value); the others are strings (raw is base64).
  if (content !== "data") optionalString(value, content, `${path}.${content}`);
  optionalObject(value, "metadata", `${path}.metadata`);
  optionalString(value, "filename", `${path}.filename`);
  optionalString(value, "mediaType", `${path}.mediaType`);
  return { content, part: value };
}

/**
 * Validates `SendMessageRequest` params (A2A §1.1 of the notes; proto `SendMessageRequest`).
 * Throws one -32602 naming the first bad field and listing every one (each part, each member).
 * Unknown members are ignored (A2A §5.7).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { checkSendMessage } from "./send_message.ts";
 *
 * const checked = checkSendMessage({
 *   message: { messageId: "m-1", role: "ROLE_USER", parts: [{ text: "Hello" }] },
 * });
 * assert.equal(checked.messageId, "m-1");
 * ```
 */
export function checkSendMessage(params: JsonObject | undefined): CheckedSendMessage {
  const request = params ?? {};
  const found = new Violations();
  found.check(checkTenant, request);
  const message = found.check(optionalObject, request, "message", "message");
  if (message === undefined) {
    if (member(request, "message") === undefined) {
      found.check(throwInvalidParams, "message", "is required");
    }
    found.throwAny();
  }
  const messageId = found.check(
    requiredId,
    message!,
    "messageId",
    "message.messageId",
    MAX_MESSAGE_ID_LENGTH,
  );
  found.check(checkRole, message!);
  const rawParts = found.check(checkParts, message!) ?? [];
  const parts: { content: PartContent; part: JsonObject }[] = [];
  for (let index = 0; index < rawParts.length; index++) {
    const part = found.check(checkPart, rawParts[index], `message.parts[${index}]`);
    if (part !== undefined) parts.push(part);
  }
  const taskId = found.check(optionalString, message!, "taskId", "message.taskId");
  const contextId = found.check(optionalString, message!, "contextId", "message.contextId");
  found.check(optionalObject, message!, "metadata", "message.metadata");
  found.check(optionalStringArray, message!, "extensions", "message.extensions");
  found.check(optionalStringArray, message!, "referenceTaskIds", "message.referenceTaskIds");

  const configuration = found.check(optionalObject, request, "configuration", "configuration");
  let wantsPush = false;
  if (configuration !== undefined) {
    // Accepted and without effect: the output is always the JSON task, there is no history
    // to shorten, and the answer is immediate in either mode (see the module documentation).
    found.check(
      optionalStringArray,
      configuration,
      "acceptedOutputModes",
      "configuration.acceptedOutputModes",
    );
    found.check(
      optionalInteger,
      configuration,
      "historyLength",
      "configuration.historyLength",
      0,
      INT32_MAX,
    );
    found.check(
      optionalBoolean,
      configuration,
      "returnImmediately",
      "configuration.returnImmediately",
    );
    wantsPush = found.check(
      optionalObject,
      configuration,
      "taskPushNotificationConfig",
      "configuration.taskPushNotificationConfig",
    ) !== undefined;
  }
  found.check(optionalObject, request, "metadata", "metadata");
  found.throwAny();
  return {
    message: message!,
    messageId: messageId!,
    parts,
    taskId: taskId === "" ? undefined : taskId,
    contextId: contextId === "" ? undefined : contextId,
    wantsPush,
  };
}

/** Throws the -32602 for `path`. */
function throwInvalidParams(path: string, description: string): never {
  throw invalidParams(path, description);
}

/** `message.parts`: a non-empty array of at most {@linkcode MAX_PARTS}. */
function checkParts(message: JsonObject): readonly JsonValue[] {
  const value = member(message, "parts");
  if (value === undefined) throw invalidParams("message.parts", "is required");
  if (!Array.isArray(value)) throw invalidParams("message.parts", "must be an array");
  if (value.length === 0) throw invalidParams("message.parts", "must not be empty");
  if (value.length > MAX_PARTS) {
    throw invalidParams("message.parts", `must have at most ${MAX_PARTS} parts`);
  }
  return value;
}

/**
 * Collects -32602 violations instead of stopping at the first, so one answer names every field
 * at fault (A2A §9.5 BadRequest); each check still stops at its own first problem.
 */
class Violations {
  readonly #found: FieldViolation[] = [];

  /**
   * Runs one check with its arguments (passed, not captured in a closure: a valid request runs
   * some twenty checks); a -32602 it throws is recorded, anything else passes through.
   */
  check<A, B, C, D, E, T>(
    run: (a: A, b: B, c: C, d: D, e: E) => T,
    a: A,
    b?: B,
    c?: C,
    d?: D,
    e?: E,
  ): T | undefined {
    try {
      return run(a, b!, c!, d!, e!);
    } catch (error) {
      if (!(error instanceof A2AFailure) || error.kind !== "invalidParams") throw error;
      this.#found.push(...(error.violations ?? []));
      return undefined;
    }
  }

  /** Throws one -32602 naming the first violation and listing all, if any were found. */
  throwAny(): void {
    const [first] = this.#found;
    if (first !== undefined) throw invalidParams(first.field, first.description, this.#found);
  }
}

const encoder = new TextEncoder();

/**
 * Decides what is stored (steps 2 to 4 of the module documentation). Throws -32003, -32005 or
 * -32602. Nothing here reads the database.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { checkSendMessage, mapContent } from "./send_message.ts";
 *
 * const checked = checkSendMessage({
 *   message: { messageId: "m-1", role: "ROLE_USER", parts: [{ text: "Hello" }] },
 * });
 * assert.equal(mapContent(checked).kind, "unstructured");
 * ```
 */
export function mapContent(checked: CheckedSendMessage): MappedContent {
  if (checked.wantsPush) {
    throw new A2AFailure(
      "pushNotificationNotSupported",
      "Push notifications are not supported: remove configuration.taskPushNotificationConfig; " +
        "the Beacon never contacts anyone",
      { field: "configuration.taskPushNotificationConfig" },
    );
  }
  const parts = checked.parts;
  for (let index = 0; index < parts.length; index++) {
    const content = parts[index].content;
    if (content === "raw" || content === "url") {
      throw new A2AFailure(
        "contentTypeNotSupported",
        "File parts are not accepted: send text or data parts; a url is never fetched",
        { field: `message.parts[${index}].${content}`, supportedParts: "text, data" },
      );
    }
  }
  let dataIndex = -1;
  let dataParts = 0;
  let hasText = false;
  for (let index = 0; index < parts.length; index++) {
    const { content, part } = parts[index];
    if (content === "data") {
      dataIndex = index;
      dataParts++;
    }
    if (content === "text" && !hasText && String(part.text).trim() !== "") hasText = true;
  }
  let refusal: A2AFailure | undefined;
  if (dataParts === 1) {
    const index = dataIndex;
    const data = checked.parts[index].part.data;
    const result = checkMessage(data);
    if (result.ok) {
      return {
        kind: "structured",
        content: encoder.encode(JSON.stringify(data)),
        message: result.message,
      };
    }
    // checkMessage names schema fields only, never a submitted key (src/message/schema.ts).
    const base = `message.parts[${index}].data`;
    const pathOf = (field: string) => base + (field === "" ? "" : `.${field}`);
    refusal = invalidParams(
      pathOf(result.field),
      result.problem,
      result.violations.map(({ field, description }) => ({ field: pathOf(field), description })),
    );
  }
  if (hasText) {
    return { kind: "unstructured", content: encoder.encode(JSON.stringify(checked.message)) };
  }
  throw refusal ?? invalidParams(
    "message.parts",
    "must hold a non-blank text part or exactly one data part holding a beacon/0.1 message",
  );
}

/**
 * Refuses a message that names a task or a context (step 5). An id that is not even a
 * receipt id's shape (30 base64url characters) is unknown without asking the database.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { refuseContinuation } from "./send_message.ts";
 * import { realIntake } from "../../tests/support/intake.ts";
 *
 * const intake = await realIntake();
 * await refuseContinuation({ taskId: undefined, contextId: undefined }, intake); // a new task
 * await assert.rejects(
 *   refuseContinuation({ taskId: "not-a-receipt-id", contextId: undefined }, intake),
 *   { kind: "taskNotFound" },
 * );
 * ```
 */
export async function refuseContinuation(
  checked: Pick<CheckedSendMessage, "taskId" | "contextId">,
  intake: Intake,
): Promise<void> {
  if (checked.taskId !== undefined) {
    const known = await intake.find(checked.taskId) !== undefined;
    if (!known) throw new A2AFailure("taskNotFound", undefined, { field: "message.taskId" });
    throw new A2AFailure(
      "unsupportedOperation",
      "This operation is not supported: a task accepts no further messages; " +
        "send a new message without taskId",
      { field: "message.taskId" },
    );
  }
  if (checked.contextId !== undefined) {
    throw new A2AFailure(
      "unsupportedOperation",
      "This operation is not supported: each submission opens a new context; " +
        "send the message without contextId",
      { field: "message.contextId" },
    );
  }
}

/**
 * The idempotency key of an A2A message: the hex SHA-256 of its RFC 8785 canonical form, a
 * space, and the `messageId`. The digest comes first and has a fixed length, so no `messageId`
 * can make two keys collide. Because the key covers the content, the intake replays on any key
 * match (`idempotencyReplay: "any"`).
 *
 * @example
 * ```ts
 * import { idempotencyKeyOf } from "./send_message.ts";
 * const a = idempotencyKeyOf({ messageId: "m", role: "ROLE_USER", parts: [{ text: "Hi" }] });
 * const b = idempotencyKeyOf({ parts: [{ text: "Hi" }], role: "ROLE_USER", messageId: "m" });
 * a === b; // true
 * ```
 */
export function idempotencyKeyOf(message: JsonObject): string {
  // canonicalJson refuses an unpaired surrogate (RFC 8785 §3.2.2.2), so the UTF-8 hashed here
  // is the canonical form's own.
  return `${sha256Hex(canonicalJson(message))} ${String(message.messageId)}`;
}

/**
 * What an A2A method (src/a2a/methods.ts), {@linkcode sendMessage} among them, needs beyond its
 * params. The Beacon names what a component needs `<Component>Dependencies`.
 */
export interface MethodOptions {
  /** The intake shared with the native protocol. */
  readonly intake: Intake;
  /** The public origin, for the receipt's status URL. */
  readonly origin: string;
  /** The rate-limit source key of the sender (idempotency is per source). */
  readonly source: string;
}

/** The outcome of {@linkcode sendMessage}: the JSON-RPC result and log facts. */
export interface SendMessageOutcome {
  /** `{"task": Task}` (A2A §9.4.1 `SendMessageResponse`). */
  readonly result: { readonly task: Record<string, unknown> };
  /** The receipt of the stored submission (the first one, for a replay). */
  readonly receipt: Receipt;
  /** True when a retry got the first attempt's task back. */
  readonly replayed: boolean;
}

/**
 * Runs `SendMessage`: validates, maps, stores, and builds the task. Throws an `A2AFailure` or
 * a `StorageError`; `toJsonRpcError` maps each.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { sendMessage } from "./send_message.ts";
 * import { realIntake } from "../../tests/support/intake.ts";
 *
 * const message = { messageId: "m-1", role: "ROLE_USER", parts: [{ text: "Hello, reviewer." }] };
 * const dependencies = { intake: await realIntake(), origin: "http://127.0.0.1", source: "127.0.0.1" };
 * const first = await sendMessage({ message }, dependencies);
 * assert.deepEqual(first.result.task.status, {
 *   state: "TASK_STATE_SUBMITTED",
 *   timestamp: first.receipt.receivedAt,
 * });
 * assert.equal(first.replayed, false);
 * const retry = await sendMessage({ message }, dependencies);
 * assert.equal(retry.replayed, true);
 * assert.equal(retry.receipt.id, first.receipt.id);
 * ```
 */
export async function sendMessage(
  params: JsonObject | undefined,
  context: MethodOptions,
): Promise<SendMessageOutcome> {
  const checked = checkSendMessage(params);
  const mapped = mapContent(checked);
  // A new task (neither id set, the common case) needs no asynchronous step.
  if (checked.taskId !== undefined || checked.contextId !== undefined) {
    await refuseContinuation(checked, context.intake);
  }
  const identity: IdentityCheck | undefined = mapped.kind === "structured"
    ? await checkIdentity(mapped.message)
    : undefined;
  let accepted;
  try {
    accepted = await context.intake.accept({
      surface: "a2a",
      kind: mapped.kind,
      contentType: "application/json",
      content: mapped.content,
      source: context.source,
      identity,
      idempotencyKey: idempotencyKeyOf(checked.message),
      idempotencyReplay: "any",
    });
  } catch (error) {
    // The task id it would have, and where to look (docs/a2a.md, "indeterminate" outcome).
    if (error instanceof OutcomeUnknownError) {
      throw error.at((id) => statusUrl(context.origin, id));
    }
    throw error;
  }
  const { receipt, contextId, replayed } = accepted;
  const task = {
    id: receipt.id,
    contextId,
    status: { state: "TASK_STATE_SUBMITTED", timestamp: receipt.receivedAt },
    metadata: nativeReceipt(receipt, context.origin),
  };
  return { result: { task }, receipt, replayed };
}
