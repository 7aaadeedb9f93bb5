/**
 * The A2A 1.0 JSON-RPC methods (A2A §9.4; method names are PascalCase, §9.1) and what the Beacon
 * does for each: one working operation and the spec's own errors for the rest (the design's
 * A2A table; docs/a2a.md has one example exchange per method).
 *
 * | method | answer |
 * |---|---|
 * | `SendMessage` | `{"task": Task}` in `TASK_STATE_SUBMITTED` (send_message.ts) |
 * | `GetTask` | `{id, contextId, status}`; unknown → -32001 |
 * | `CancelTask` | known → -32002 (append-only store); unknown → -32001 |
 * | `ListTasks` | params validated, then always the empty list |
 * | `SendStreamingMessage`, `SubscribeToTask` | -32004 (§3.3.4: `streaming` is false) |
 * | the four push-config methods | -32003 (§3.3.4: `pushNotifications` is false) |
 * | `GetExtendedAgentCard` | -32004 (§3.3.4: `extendedAgentCard` is not true) |
 *
 * Capability gates answer before any params are read: the operation does not exist here, so
 * there is nothing to validate.
 *
 * @module
 */
import type { Intake } from "../intake/accept.ts";
import type { SubmissionSummary } from "../store/store.ts";
import { A2AFailure, invalidParams } from "./errors.ts";
import type { JsonObject } from "../json/value.ts";
import {
  checkTenant,
  INT32_MAX,
  isRfc3339,
  member,
  optionalBoolean,
  optionalInteger,
  optionalObject,
  optionalString,
  requiredId,
  TASK_STATES,
} from "./params.ts";
import { type MethodOptions, sendMessage } from "./send_message.ts";

export type { MethodOptions } from "./send_message.ts";

/** A method's answer: the JSON-RPC `result`, with facts for the request log. */
export interface MethodOutcome {
  /** The JSON-RPC `result`. */
  readonly result: unknown;
  /** `accepted`, `replayed` or `served`. */
  readonly outcome: "accepted" | "replayed" | "served";
  /** The receipt id the request concerned, when it stored or found one. */
  readonly receiptId?: string;
}

/** One method: params (undefined when the request had none) to an outcome, or a throw. */
export type Method = (
  params: JsonObject | undefined,
  context: MethodOptions,
) => Promise<MethodOutcome>;

/** ListTasks `pageSize` when the client gives none (proto `ListTasksRequest`). */
export const DEFAULT_PAGE_SIZE = 50;

/** Largest ListTasks `pageSize` (proto `ListTasksRequest`: 1 to 100). */
export const MAX_PAGE_SIZE = 100;

/**
 * The task's id and status. Ids are capabilities (128 random bits), so holding one is the only
 * authorisation, as for the native status endpoint; an id that is not even a receipt id's shape
 * is unknown without a database read (§3.3.2: unknown and invisible look the same).
 */
async function findTask(
  params: JsonObject | undefined,
  intake: Intake,
): Promise<SubmissionSummary> {
  const request = params ?? {};
  checkTenant(request);
  const id = requiredId(request, "id", "id");
  return await lookUp(id, intake);
}

async function lookUp(id: string, intake: Intake): Promise<SubmissionSummary> {
  const found = await intake.find(id);
  if (found === undefined) throw new A2AFailure("taskNotFound", undefined, { field: "id" });
  return found;
}

/**
 * `GetTask` (§3.1.3): id, contextId and status only. `historyLength` is validated (§3.2.4) and
 * trivially honoured: a Beacon task never has history to return.
 */
const getTask: Method = async (params, { intake }) => {
  optionalInteger(params ?? {}, "historyLength", "historyLength", 0, INT32_MAX);
  const found = await findTask(params, intake);
  return {
    result: {
      id: found.id,
      contextId: found.contextId,
      status: { state: "TASK_STATE_SUBMITTED", timestamp: found.receivedAt },
    },
    outcome: "served",
    receiptId: found.id,
  };
};

/** `CancelTask` (§3.1.5): nothing stored is ever changed, so a known task is not cancelable. */
const cancelTask: Method = async (params, { intake }) => {
  optionalObject(params ?? {}, "metadata", "metadata");
  await findTask(params, intake);
  throw new A2AFailure("taskNotCancelable");
};

/**
 * `ListTasks` (§3.1.4): validated, then empty. The list MUST hold only tasks visible to the
 * caller; callers are anonymous and a task is visible only to whoever holds its id, which a
 * list request cannot prove, so no task is visible to it. An enumerable list would hand out
 * other submitters' receipt ids.
 */
// deno-lint-ignore require-await -- every Method is async; this one only validates
const listTasks: Method = async (params) => {
  const request = params ?? {};
  checkTenant(request);
  optionalString(request, "contextId", "contextId");
  const status = member(request, "status");
  // ProtoJSON enums are names; parsers also accept the numbers 0 to 8.
  const knownStatus =
    (typeof status === "string" && (TASK_STATES as readonly string[]).includes(status)) ||
    (typeof status === "number" && Number.isInteger(status) && status >= 0 &&
      status < TASK_STATES.length);
  if (status !== undefined && !knownStatus) invalidStatus();
  const pageSize = optionalInteger(request, "pageSize", "pageSize", 1, MAX_PAGE_SIZE);
  optionalString(request, "pageToken", "pageToken");
  optionalInteger(request, "historyLength", "historyLength", 0, INT32_MAX);
  const after = optionalString(request, "statusTimestampAfter", "statusTimestampAfter");
  if (after !== undefined && !isRfc3339(after)) {
    throw invalidParams("statusTimestampAfter", "must be an RFC 3339 timestamp");
  }
  optionalBoolean(request, "includeArtifacts", "includeArtifacts");
  return {
    // All four members are REQUIRED in ListTasksResponse, even at their defaults (§3.1.4).
    result: { tasks: [], nextPageToken: "", pageSize: pageSize ?? DEFAULT_PAGE_SIZE, totalSize: 0 },
    outcome: "served",
  };
};

function invalidStatus(): never {
  throw invalidParams("status", "must be a TaskState name such as TASK_STATE_SUBMITTED");
}

function alwaysFailing(failure: () => A2AFailure): Method {
  return () => Promise.reject(failure());
}

const noStreaming = alwaysFailing(() =>
  new A2AFailure(
    "unsupportedOperation",
    "This operation is not supported: streaming is false in the agent card",
  )
);

const noPush = alwaysFailing(() => new A2AFailure("pushNotificationNotSupported"));

const noExtendedCard = alwaysFailing(() =>
  new A2AFailure(
    "unsupportedOperation",
    "This operation is not supported: the agent card does not declare extendedAgentCard",
  )
);

/** Every A2A 1.0 JSON-RPC method, by its exact name. */
export const METHODS: ReadonlyMap<string, Method> = new Map<string, Method>([
  ["SendMessage", async (params, context) => {
    const { result, receipt, replayed } = await sendMessage(params, context);
    return { result, outcome: replayed ? "replayed" : "accepted", receiptId: receipt.id };
  }],
  ["SendStreamingMessage", noStreaming],
  ["GetTask", getTask],
  ["ListTasks", listTasks],
  ["CancelTask", cancelTask],
  ["SubscribeToTask", noStreaming],
  ["CreateTaskPushNotificationConfig", noPush],
  ["GetTaskPushNotificationConfig", noPush],
  ["ListTaskPushNotificationConfigs", noPush],
  ["DeleteTaskPushNotificationConfig", noPush],
  ["GetExtendedAgentCard", noExtendedCard],
]);

/**
 * A2A 0.3 method names and their 1.0 replacements (A2A `docs/whats-new-v1.md`), so a client
 * that sends a 1.0 version header with 0.3 names learns the name to use.
 */
export const LEGACY_METHODS: ReadonlyMap<string, string> = new Map([
  ["message/send", "SendMessage"],
  ["message/stream", "SendStreamingMessage"],
  ["tasks/get", "GetTask"],
  ["tasks/cancel", "CancelTask"],
  ["tasks/resubscribe", "SubscribeToTask"],
  ["tasks/pushNotificationConfig/set", "CreateTaskPushNotificationConfig"],
  ["tasks/pushNotificationConfig/get", "GetTaskPushNotificationConfig"],
  ["tasks/pushNotificationConfig/list", "ListTaskPushNotificationConfigs"],
  ["tasks/pushNotificationConfig/delete", "DeleteTaskPushNotificationConfig"],
  ["agent/getAuthenticatedExtendedCard", "GetExtendedAgentCard"],
]);

/**
 * The method for a name, or a -32601 refusal. The refusal never repeats the name sent; for an
 * A2A 0.3 name it names the 1.0 method instead.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { methodFor } from "./methods.ts";
 * import { realIntake } from "../../tests/support/intake.ts";
 *
 * const dependencies = { intake: await realIntake(), origin: "http://127.0.0.1", source: "127.0.0.1" };
 * await assert.rejects(methodFor("GetTask")({ id: "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAA" }, dependencies), {
 *   kind: "taskNotFound",
 * });
 * assert.throws(() => methodFor("tasks/get"), { kind: "methodNotFound" }); // an A2A 0.3 name
 * ```
 */
export function methodFor(name: string): Method {
  const method = METHODS.get(name);
  if (method !== undefined) return method;
  const replacement = LEGACY_METHODS.get(name);
  if (replacement === undefined) throw new A2AFailure("methodNotFound");
  throw new A2AFailure(
    "methodNotFound",
    `Method not found: this is an A2A 0.3 method name; A2A 1.0 calls it ${replacement}`,
    { replacementMethod: replacement },
  );
}
