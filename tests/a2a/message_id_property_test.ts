/**
 * Property (fast-check) through the real HTTP server and a real database file: any sequence of
 * SendMessage requests that share one `messageId` stores every distinct content exactly once.
 * A repeat of earlier content, however its members are ordered, answers the task that content
 * first got; new content under the same `messageId` is a new task. Nothing answers
 * MESSAGE_ID_REUSED.
 */
import fc from "fast-check";
import { assert, assertStrictEquals } from "../support/assert.ts";
import { serveBeacon } from "../support/in_process.ts";

const TEXTS = ["First text.", "Second text.", "Third text.", "A fourth, longer text."];

/** The request body, with the message's members in the natural or the reversed order. */
function body(messageId: string, text: string, reversed: boolean, id: number): string {
  const part = reversed ? { mediaType: "text/plain", text } : { text, mediaType: "text/plain" };
  const message: Record<string, unknown> = { messageId, role: "ROLE_USER", parts: [part] };
  const ordered = reversed ? Object.fromEntries(Object.entries(message).reverse()) : message;
  return JSON.stringify({
    jsonrpc: "2.0",
    id,
    method: "SendMessage",
    params: { message: ordered },
  });
}

Deno.test("any sequence sharing one messageId stores each distinct content once", async () => {
  const served = await serveBeacon();
  let run = 0;
  try {
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.record({
            text: fc.integer({ min: 0, max: TEXTS.length - 1 }),
            reversed: fc.boolean(),
          }),
          { minLength: 1, maxLength: 8 },
        ),
        async (sends) => {
          const messageId = `shared-${++run}`;
          const taskOf = new Map<number, string>();
          for (const [index, send] of sends.entries()) {
            const response = await fetch(served.url + "/a2a/v1", {
              method: "POST",
              headers: { "content-type": "application/json", "a2a-version": "1.0" },
              body: body(messageId, TEXTS[send.text], send.reversed, index),
            });
            const answer = await response.json();
            assert(answer.result?.task !== undefined, JSON.stringify(answer));
            const taskId: string = answer.result.task.id;
            const earlier = taskOf.get(send.text);
            if (earlier === undefined) {
              assert(![...taskOf.values()].includes(taskId), "new content is a new task");
              taskOf.set(send.text, taskId);
            } else {
              assertStrictEquals(taskId, earlier, "repeated content replays its first task");
            }
          }
          const rows = await served.query(
            "SELECT count(*) AS n FROM submissions WHERE idempotency_key LIKE ?",
            [`a2a:% ${messageId}`],
          );
          assertStrictEquals(Number(rows[0].n), new Set(sends.map((send) => send.text)).size);
        },
      ),
      { numRuns: 40 },
    );
  } finally {
    await served.close();
  }
});
