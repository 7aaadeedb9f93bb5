/**
 * Request bodies of an exact size with a unique id, built the same way as bench/wrk/unique.lua
 * builds them, for the one-off probes and for the autocannon fallback.
 *
 * @module
 */

const UNIT = "Benchmark message for asynchronous human review. ";

function filler(size: number): string {
  return UNIT.repeat(Math.floor(size / UNIT.length) + 1);
}

function padded(size: number, head: string, tail: string): string {
  const room = Math.max(0, size - head.length - tail.length);
  return head + filler(room).slice(0, room) + tail;
}

/**
 * An A2A `SendMessage` JSON-RPC request of `size` bytes whose `messageId` is `id`.
 *
 * @example
 * ```ts
 * const body = sendMessageBody("probe-1", 600, 1);
 * body.length; // 600
 * ```
 */
export function sendMessageBody(id: string, size: number, rpcId: number | string = 1): string {
  return padded(
    size,
    `{"jsonrpc":"2.0","id":${JSON.stringify(rpcId)},"method":"SendMessage","params":{"message":` +
      `{"messageId":"${id}","role":"ROLE_USER","parts":[{"text":"${id} `,
    `"}]}}}`,
  );
}

/** A plain text submission of `size` bytes that starts with `id`. */
export function textBody(id: string, size: number): string {
  return padded(size, `${id} `, "");
}

/** `size` bytes of filler text (the 413 scenario's body). */
export function fixedBody(size: number): string {
  return filler(size).slice(0, size);
}
