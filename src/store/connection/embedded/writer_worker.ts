/**
 * The writer thread (see writer_thread.ts): owns the write connection of an embedded database
 * and runs each commit it is sent, in order, replying when it is durable.
 *
 * @module
 */
/// <reference lib="deno.worker" />
import { EmbeddedConnection } from "./checked_connection.ts";
import type { WriterReply, WriterRequest } from "./writer_thread.ts";

let connection: EmbeddedConnection | undefined;

function reply(message: WriterReply): void {
  self.postMessage(message);
}

/** Only the error's code or name crosses the thread: never a message that may quote data. */
function errorCode(error: unknown): string {
  const code = (error as { code?: unknown })?.code;
  return typeof code === "string" ? code : (error as Error)?.name ?? "unknown";
}

// Commits run one at a time, in the order they were sent: each waits for the one before.
let queue = Promise.resolve();

self.onmessage = (event: MessageEvent<WriterRequest>) => {
  const request = event.data;
  queue = queue.then(async () => {
    if (request.type === "open") {
      try {
        connection = await EmbeddedConnection.open(request.url, {
          walLimitBytes: request.walLimitBytes,
        });
        reply({ type: "opened" });
      } catch (error) {
        reply({ type: "done", id: -1, error: errorCode(error) });
      }
    } else if (request.type === "commit") {
      try {
        reply({
          type: "done",
          id: request.id,
          seqs: await connection!.commit(request.rows, request.batch),
        });
      } catch (error) {
        reply({ type: "done", id: request.id, error: errorCode(error) });
      }
    } else {
      connection?.close();
      connection = undefined;
      reply({ type: "closed" });
    }
  });
};
