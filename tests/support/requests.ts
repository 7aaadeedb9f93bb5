/**
 * Request builders shared by the tests: the A2A `SendMessage` request every surface test sends
 * (JSON-RPC 2.0 over `POST /a2a/v1`, `A2A-Version: 1.0`), built in one place.
 *
 * @module
 */

/** What a `SendMessage` request may set. */
export interface SendMessageOptions {
  /** The message's parts; default one text part. */
  readonly parts?: readonly unknown[];
  /** The message id; default a random UUID (every request a new message). */
  readonly messageId?: string;
  /** The JSON-RPC id; default 1. */
  readonly id?: number | string;
}

/** The JSON-RPC body of a `SendMessage` request. */
export function sendMessageBody(options: SendMessageOptions = {}): string {
  return JSON.stringify({
    jsonrpc: "2.0",
    id: options.id ?? 1,
    method: "SendMessage",
    params: {
      message: {
        messageId: options.messageId ?? crypto.randomUUID(),
        role: "ROLE_USER",
        parts: options.parts ?? [{ text: "hi" }],
      },
    },
  });
}

/** A `SendMessage` request to the Beacon at `origin` (no trailing slash). */
export function sendMessageRequest(origin: string, options: SendMessageOptions = {}): Request {
  return new Request(`${origin}/a2a/v1`, {
    method: "POST",
    headers: { "content-type": "application/json", "a2a-version": "1.0" },
    body: sendMessageBody(options),
  });
}
