/**
 * The writer thread (see writer_thread.ts): owns the write connection of an embedded database
 * and runs each commit it is sent, in order, replying when it is durable.
 *
 * @module
 */
/// <reference lib="deno.worker" />
import type { Client } from "@libsql/client";
import { openClient } from "./client.ts";
import type { WriterReply, WriterRequest } from "./writer_thread.ts";

let client: Client | undefined;

function reply(message: WriterReply): void {
  self.postMessage(message);
}

self.onmessage = async (event: MessageEvent<WriterRequest>) => {
  const request = event.data;
  if (request.type === "open") {
    try {
      client = await openClient({ url: request.url });
      reply({ type: "opened" });
    } catch (error) {
      reply({ type: "done", id: -1, ok: false, error: (error as Error)?.name ?? "unknown" });
    }
  } else if (request.type === "commit") {
    try {
      const result = await client!.execute({ sql: request.sql, args: request.args });
      const returned = result.rows.map((row) => row[0]);
      reply({ type: "done", id: request.id, ok: true, returned });
    } catch (error) {
      // Only the error's name and code cross the thread: never a message that may quote data.
      const code = (error as { code?: unknown })?.code;
      reply({
        type: "done",
        id: request.id,
        ok: false,
        error: typeof code === "string" ? code : (error as Error)?.name ?? "unknown",
      });
    }
  } else {
    client?.close();
    client = undefined;
    reply({ type: "closed" });
  }
};
