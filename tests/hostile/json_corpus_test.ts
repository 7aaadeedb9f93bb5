/**
 * The strict-JSON corpus (tests/data/json/, see its manifest) through both endpoints of the real
 * HTTP server: never a 5xx, never a hang, every refused document refused with the right error
 * (native `400 invalid_json`, A2A -32700), and nothing stored for any refusal. Accepted documents
 * are not beacon messages (native `422`) and, but for the corpus's one real SendMessage request,
 * not valid A2A requests either.
 */
import { assert, assertEquals } from "../support/assert.ts";
import { serveBeacon } from "../support/in_process.ts";

const ROOT = new URL("../data/json/", import.meta.url);
const manifest: Record<string, { expect: "accept" | "reject"; reason?: string }> = JSON.parse(
  await Deno.readTextFile(new URL("manifest.json", ROOT)),
);

async function post(url: string, body: Uint8Array<ArrayBuffer>, headers: Record<string, string>) {
  const response = await fetch(url, {
    method: "POST",
    headers,
    body,
    signal: AbortSignal.timeout(10_000), // a hang fails the test instead of stalling CI
  });
  return { status: response.status, body: await response.json() };
}

Deno.test("every corpus document through both endpoints: no 5xx, right refusal, nothing stored", async () => {
  const served = await serveBeacon({});
  try {
    const names = Object.keys(manifest);
    let stored = 0;
    assert(names.length >= 60, "the corpus is present");
    for (const name of names) {
      const bytes = await Deno.readFile(new URL(name, ROOT));
      const expected = manifest[name].expect;

      const native = await post(`${served.url}/beacon/0.1/submissions`, bytes, {
        "content-type": "application/json",
      });
      assert(native.status < 500, `${name}: native ${native.status}`);
      if (expected === "reject") {
        assertEquals([native.status, native.body.error.code], [400, "invalid_json"], name);
      } else {
        assertEquals([native.status, native.body.error.code], [422, "invalid_message"], name);
      }

      const a2a = await post(`${served.url}/a2a/v1`, bytes, {
        "content-type": "application/json",
        "a2a-version": "1.0",
      });
      assertEquals(a2a.status, 200, name);
      if (expected === "reject") {
        assertEquals([a2a.body.error.code, a2a.body.id], [-32700, null], name);
      } else if ("result" in a2a.body) {
        assertEquals(a2a.body.result.task.status.state, "TASK_STATE_SUBMITTED", name);
        stored++;
      } else {
        assert([-32600, -32601, -32602].includes(a2a.body.error.code), name);
      }
      assertEquals(await served.count(), stored, `${name}: a refusal stored nothing`);
    }
    assertEquals(stored, 1, "exactly the corpus's one SendMessage request was stored");
  } finally {
    await served.close();
  }
});
