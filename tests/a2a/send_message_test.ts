/**
 * SendMessage's validation and mapping without a server: what is structured, what is
 * unstructured, what is refused and in which order, and the exact bytes chosen for storage.
 */
import { assert, assertEquals, assertStrictEquals } from "../support/assert.ts";
import {
  checkSendMessage,
  mapContent,
  MAX_MESSAGE_ID_LENGTH,
  MAX_PARTS,
  refuseContinuation,
} from "../../src/a2a/send_message.ts";
import { A2AFailure } from "../../src/a2a/errors.ts";
import type { Intake } from "../../src/intake/accept.ts";
import type { SubmissionStore } from "../../src/store/store.ts";
import { realIntakeAndStore } from "../support/intake.ts";
import type { JsonObject } from "../../src/json/value.ts";
import { exampleMessages } from "../../src/message/examples.ts";

const decoder = new TextDecoder();
const beaconMessage = () => structuredClone(exampleMessages[0]) as unknown as JsonObject;

function params(parts: unknown[], extra: Record<string, unknown> = {}): JsonObject {
  return { message: { messageId: "m-1", role: "ROLE_USER", parts, ...extra } } as JsonObject;
}

function failureOf(run: () => unknown): A2AFailure {
  try {
    run();
  } catch (error) {
    assert(error instanceof A2AFailure);
    return error;
  }
  throw new Error("expected a refusal");
}

/** A real intake on an in-memory database holding one submission; returns its receipt id. */
async function intakeWithOne(): Promise<{ intake: Intake; known: string; store: SubmissionStore }> {
  const { intake, store } = await realIntakeAndStore();
  const { receipt } = await intake.accept({
    surface: "a2a",
    kind: "unstructured",
    contentType: "application/json",
    content: new TextEncoder().encode("{}"),
    source: "192.0.2.1",
  });
  return { intake, known: receipt.id, store };
}

Deno.test("checkSendMessage() returns the checked message, with empty ids as unset", () => {
  const checked = checkSendMessage(params([{ text: "hi" }], { taskId: "", contextId: "" }));
  assertStrictEquals(checked.messageId, "m-1");
  assertEquals(checked.parts.map((part) => part.content), ["text"]);
  assertStrictEquals(checked.taskId, undefined);
  assertStrictEquals(checked.contextId, undefined);
  assertStrictEquals(checked.wantsPush, false);
});

Deno.test("checkSendMessage() accepts role ROLE_USER or its ProtoJSON number 1 only", () => {
  checkSendMessage(params([{ text: "hi" }], { role: 1 }));
  for (const role of ["ROLE_AGENT", 2, "ROLE_UNSPECIFIED", 0, "user", null]) {
    assertStrictEquals(
      failureOf(() => checkSendMessage(params([{ text: "hi" }], { role }))).metadata.field,
      "message.role",
    );
  }
});

Deno.test("checkSendMessage() bounds messageId and the number of parts", () => {
  checkSendMessage({
    message: {
      messageId: "m".repeat(MAX_MESSAGE_ID_LENGTH),
      role: "ROLE_USER",
      parts: [{ text: "x" }],
    },
  });
  const long = {
    message: {
      messageId: "m".repeat(MAX_MESSAGE_ID_LENGTH + 1),
      role: "ROLE_USER",
      parts: [{ text: "x" }],
    },
  };
  assertStrictEquals(failureOf(() => checkSendMessage(long)).metadata.field, "message.messageId");
  checkSendMessage(params(Array(MAX_PARTS).fill({ text: "x" })));
  assertStrictEquals(
    failureOf(() => checkSendMessage(params(Array(MAX_PARTS + 1).fill({ text: "x" })))).metadata
      .field,
    "message.parts",
  );
});

Deno.test("checkSendMessage() requires exactly one content member per part; null is unset", () => {
  checkSendMessage(params([{ text: "x", url: null, raw: null, data: null }]));
  for (const part of [{}, { text: "a", data: 1 }, { raw: "", url: "" }, { data: null }]) {
    assertStrictEquals(
      failureOf(() => checkSendMessage(params([part]))).metadata.field,
      "message.parts[0]",
    );
  }
  assertStrictEquals(
    failureOf(() => checkSendMessage(params([{ text: "a" }, { url: 1 }]))).metadata.field,
    "message.parts[1].url",
  );
  assertStrictEquals(
    failureOf(() => checkSendMessage(params([{ text: "a", filename: 1 }]))).metadata.field,
    "message.parts[0].filename",
  );
});

Deno.test("checkSendMessage() notes a push config and validates the ignored configuration", () => {
  const push = checkSendMessage({
    ...params([{ text: "x" }]),
    configuration: { taskPushNotificationConfig: { url: "u" } },
  });
  assertStrictEquals(push.wantsPush, true);
  const fine = checkSendMessage({
    ...params([{ text: "x" }]),
    configuration: {
      returnImmediately: true,
      historyLength: 0,
      acceptedOutputModes: ["text/plain"],
      taskPushNotificationConfig: null,
    },
  });
  assertStrictEquals(fine.wantsPush, false);
  assertStrictEquals(
    failureOf(() =>
      checkSendMessage({
        ...params([{ text: "x" }]),
        configuration: { acceptedOutputModes: "text/plain" },
      })
    ).metadata.field,
    "configuration.acceptedOutputModes",
  );
});

Deno.test("mapContent() stores exactly one valid data part as structured: the data, serialised", () => {
  const data = beaconMessage();
  const mapped = mapContent(checkSendMessage(params([{ text: "beside" }, { data }])));
  assertStrictEquals(mapped.kind, "structured");
  assertStrictEquals(decoder.decode(mapped.content), JSON.stringify(data));
});

Deno.test("mapContent() stores other messages with non-blank text whole, as unstructured", () => {
  const input = params([{ text: "hello", metadata: { k: "v" } }, { data: { not: "beacon" } }], {
    extensions: [],
  });
  const mapped = mapContent(checkSendMessage(input));
  assertStrictEquals(mapped.kind, "unstructured");
  assertStrictEquals(decoder.decode(mapped.content), JSON.stringify(input.message));
  // Two valid data parts are not "exactly one": the text makes it unstructured.
  const two = mapContent(
    checkSendMessage(params([{ data: beaconMessage() }, { data: beaconMessage() }, { text: "t" }])),
  );
  assertStrictEquals(two.kind, "unstructured");
});

Deno.test("mapContent() refuses messages with nothing storable with -32602", () => {
  const blank = failureOf(() => mapContent(checkSendMessage(params([{ text: " \n\t" }]))));
  assertStrictEquals(blank.metadata.field, "message.parts");
  const twoData = failureOf(() => mapContent(checkSendMessage(params([{ data: 1 }, { data: 2 }]))));
  assertStrictEquals(twoData.metadata.field, "message.parts");
  const { intent: _, ...noIntent } = beaconMessage();
  const invalid = failureOf(() => mapContent(checkSendMessage(params([{ data: noIntent }]))));
  assertStrictEquals(invalid.kind, "invalidParams");
  assertStrictEquals(invalid.metadata.field, "message.parts[0].data.intent");
  const notObject = failureOf(() => mapContent(checkSendMessage(params([{ data: "text" }]))));
  assertStrictEquals(notObject.metadata.field, "message.parts[0].data");
});

Deno.test("mapContent() refuses raw and url parts with -32005, before looking at content", () => {
  for (const file of [{ raw: "AAAA" }, { url: "https://example.com/x" }]) {
    const failure = failureOf(() =>
      mapContent(checkSendMessage(params([{ data: beaconMessage() }, file])))
    );
    assertStrictEquals(failure.kind, "contentTypeNotSupported");
    assertStrictEquals(failure.metadata.field, `message.parts[1].${Object.keys(file)[0]}`);
  }
});

Deno.test("mapContent() refuses a push config with -32003 before anything else", () => {
  const checked = checkSendMessage({
    ...params([{ url: "https://example.com" }]),
    configuration: { taskPushNotificationConfig: {} },
  });
  assertStrictEquals(failureOf(() => mapContent(checked)).kind, "pushNotificationNotSupported");
});

Deno.test("refuseContinuation(): unknown taskId -32001, known -32004, contextId -32004", async () => {
  const { intake, known, store } = await intakeWithOne();
  const unknown = "C".repeat(30);
  const expectKind = async (
    taskId: string | undefined,
    contextId: string | undefined,
    kind: string,
  ) => {
    try {
      await refuseContinuation({ taskId, contextId }, intake);
    } catch (error) {
      assert(error instanceof A2AFailure, String(error));
      assertStrictEquals(error.kind, kind);
      return;
    }
    throw new Error("expected a refusal");
  };
  try {
    await refuseContinuation({ taskId: undefined, contextId: undefined }, intake);
    await expectKind(unknown, undefined, "taskNotFound");
    await expectKind(known, undefined, "unsupportedOperation");
    await expectKind(undefined, "any-context", "unsupportedOperation");
    await expectKind(unknown, "any-context", "taskNotFound");
  } finally {
    await store.close();
  }
  // A taskId that is not a receipt id's shape is unknown without a database read: the store is
  // closed now, so a read would fail with a storage error instead.
  await expectKind("short", undefined, "taskNotFound");
  await expectKind("../../../../etc/passwd/xx", undefined, "taskNotFound");
});

Deno.test("checkSendMessage() lists every bad field in one -32602, first one first", () => {
  const failure = failureOf(() =>
    checkSendMessage({
      tenant: "t",
      message: {
        messageId: "",
        role: "ROLE_AGENT",
        parts: [{ text: "ok" }, { url: 1 }, {}, { text: "x", filename: 2 }],
        metadata: [],
      },
      configuration: { historyLength: -1 },
    })
  );
  assertStrictEquals(failure.metadata.field, "tenant");
  assertEquals(failure.violations?.map((violation) => violation.field), [
    "tenant",
    "message.messageId",
    "message.role",
    "message.parts[1].url",
    "message.parts[2]",
    "message.parts[3].filename",
    "message.metadata",
    "configuration.historyLength",
  ]);
  const many = failureOf(() => checkSendMessage(params(Array(64).fill({ filename: 1 }))));
  assertStrictEquals(many.violations?.length, 20, "bounded");
});
