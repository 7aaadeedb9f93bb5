/**
 * What the tests send through the official `@a2a-js/sdk` client: one text message in the SDK
 * 1.3 shape (every member the generated types require).
 *
 * @module
 */
import { Role, type SendMessageRequest } from "@a2a-js/sdk";

/** A `SendMessage` request of one text part, with a fresh `messageId`. */
export function sdkTextRequest(text: string): SendMessageRequest {
  return {
    tenant: "",
    message: {
      messageId: crypto.randomUUID(),
      contextId: "",
      taskId: "",
      role: Role.ROLE_USER,
      parts: [{
        content: { $case: "text", value: text },
        metadata: undefined,
        filename: "",
        mediaType: "",
      }],
      metadata: undefined,
      extensions: [],
      referenceTaskIds: [],
    },
    configuration: undefined,
    metadata: undefined,
  };
}
