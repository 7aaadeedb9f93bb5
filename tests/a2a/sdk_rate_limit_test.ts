/**
 * A 429 an SDK can act on: through the official `@a2a-js/sdk` 1.3.0 client, a refused
 * `SendMessage` surfaces as the SDK's typed error for -32603 whose `data` carries the wait, the
 * same number as the `Retry-After` header, as docs/a2a.md shows a caller reading it.
 */
import { ClientFactory, JsonRpcTransportFactory } from "@a2a-js/sdk/client";
import { assert, assertStrictEquals } from "../support/assert.ts";
import { serveBeacon } from "../support/in_process.ts";
import { sdkTextRequest as request } from "../support/sdk.ts";

/** The wait an `@a2a-js/sdk` caller reads from a refusal (the snippet in docs/a2a.md). */
function retryAfterSeconds(error: unknown): number | undefined {
  const data = (error as { data?: { reason?: string; metadata?: Record<string, string> }[] })
    .data;
  const info = data?.find((detail) => detail.reason === "RATE_LIMITED");
  return info === undefined ? undefined : Number(info.metadata?.retryAfterSeconds);
}

Deno.test("@a2a-js/sdk 1.3.0: a refused SendMessage carries the wait in the error's data", async () => {
  const served = await serveBeacon({ rateLimit: "1/1m" });
  const headers: string[] = [];
  const recording: typeof fetch = async (input, init) => {
    const response = await fetch(input, init);
    const retry = response.headers.get("retry-after");
    if (retry !== null) headers.push(retry);
    return response;
  };
  try {
    const client = await new ClientFactory({
      transports: [new JsonRpcTransportFactory({ fetchImpl: recording })],
    }).createFromUrl(served.url);
    await client.sendMessage(request("first"));
    let caught: unknown;
    try {
      await client.sendMessage(request("second"));
    } catch (error) {
      caught = error;
    }
    assert(caught !== undefined, "the second submission is refused");
    assertStrictEquals((caught as { envelopeCode?: number }).envelopeCode, -32603);
    const wait = retryAfterSeconds(caught);
    assert(wait !== undefined && wait > 0, `the wait is in the error: ${String(caught)}`);
    assertStrictEquals(headers.length, 1);
    assertStrictEquals(String(wait), headers[0], "the same number as Retry-After");
    assertStrictEquals(await served.count(), 1);
  } finally {
    await served.close();
  }
});
