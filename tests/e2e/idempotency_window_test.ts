/**
 * The idempotency window and what it shares (docs/threat-model.md §6.21):
 * the default window is one hour; within it a replay is given only for the same content, from the
 * same source (IPv4 address or IPv6 /64), which is what clients behind one address share.
 */
import { assert, assertEquals, assertNotEquals } from "../support/assert.ts";
import { createBeacon } from "../../src/beacon.ts";

const SUBMIT = "http://127.0.0.1/beacon/0.1/submissions";

function submission(key: string, body: string): Request {
  return new Request(SUBMIT, {
    method: "POST",
    headers: { "content-type": "text/plain; charset=utf-8", "idempotency-key": key },
    body,
  });
}

async function answer(response: Response): Promise<{ status: number; id?: string; code?: string }> {
  const json = await response.json();
  return { status: response.status, id: json.receipt?.id, code: json.error?.code };
}

Deno.test("the default idempotency window is one hour", async () => {
  let now = Date.parse("2026-01-01T00:00:00Z");
  const beacon = createBeacon({ database: { url: ":memory:" }, rateLimit: "off", now: () => now });
  const from = { remoteAddress: "192.0.2.7" };
  try {
    const first = await answer(await beacon.fetch(submission("k-1", "hello"), from));
    assertEquals(first.status, 202);
    now += 59 * 60_000;
    const retry = await answer(await beacon.fetch(submission("k-1", "hello"), from));
    assertEquals(retry.id, first.id, "a retry 59 minutes later replays");
    now += 2 * 60_000; // 61 minutes after the first
    const later = await answer(await beacon.fetch(submission("k-1", "hello"), from));
    assertEquals(later.status, 202);
    assertNotEquals(later.id, first.id, "after the window the key stores a new submission");
  } finally {
    await beacon.close();
  }
});

Deno.test("clients behind one address share replays only for the same key and the same bytes", async () => {
  const beacon = createBeacon({ database: { url: ":memory:" }, rateLimit: "off" });
  try {
    const victim = await answer(
      await beacon.fetch(submission("k-shared", "the victim's text"), {
        remoteAddress: "198.51.100.1",
      }),
    );
    assertEquals(victim.status, 202);
    // A neighbour behind the same NAT address, or in the same IPv6 /64, who knows the key:
    const neighbour = { remoteAddress: "198.51.100.1" };
    const guessWrong = await answer(
      await beacon.fetch(submission("k-shared", "a guess"), neighbour),
    );
    assertEquals(
      guessWrong.code,
      "idempotency_key_reused",
      "learns the key was used, nothing more",
    );
    assertEquals(guessWrong.id, undefined);
    const guessRight = await answer(
      await beacon.fetch(submission("k-shared", "the victim's text"), neighbour),
    );
    assertEquals(guessRight.id, victim.id, "the exact bytes replay the victim's receipt");
    // Another IPv4 address, or another /64, shares nothing: the same key and bytes store anew.
    for (const remoteAddress of ["198.51.100.2", "2001:db8:0:1::1"]) {
      const elsewhere = await answer(
        await beacon.fetch(submission("k-shared", "the victim's text"), { remoteAddress }),
      );
      assertEquals(elsewhere.status, 202);
      assert(elsewhere.id !== victim.id, remoteAddress);
    }
    const sameSlash64 = [
      await answer(
        await beacon.fetch(submission("k-6", "v6 text"), { remoteAddress: "2001:db8::1" }),
      ),
      await answer(
        await beacon.fetch(submission("k-6", "v6 text"), { remoteAddress: "2001:db8::ffff:2" }),
      ),
    ];
    assertEquals(sameSlash64[1].id, sameSlash64[0].id, "one /64 is one source");
  } finally {
    await beacon.close();
  }
});
