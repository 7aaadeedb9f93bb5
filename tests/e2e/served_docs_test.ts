/**
 * The human-readable specifications are served by the Beacon itself, as Markdown, with the
 * hardening headers every response carries, and linked from the discovery document and the
 * agent card; the served text is the repository's text (the generated copy is not stale).
 */
import { assert, assertEquals, assertStrictEquals } from "../support/assert.ts";
import { serveBeacon } from "../support/in_process.ts";
import { SERVED_DOC_TEXTS } from "../../src/native/served_docs.ts";
import { readDocs, servedDocsModule } from "../../src/cli/generate_docs.ts";
import { assertHardened } from "../support/headers.ts";

const ROOT = new URL("../../", import.meta.url);

Deno.test("src/native/served_docs.ts matches docs/*.md", async () => {
  const texts = await readDocs(ROOT);
  const stale =
    "src/native/served_docs.ts is stale: run deno run --allow-read --allow-write=src/native " +
    "src/cli/generate_docs.ts --write";
  assertEquals(SERVED_DOC_TEXTS, texts, stale);
  const module = await Deno.readTextFile(new URL("src/native/served_docs.ts", ROOT));
  assertStrictEquals(module, servedDocsModule(texts), stale);
});

Deno.test("docs are served as text/markdown, hardened, cacheable, and linked", async () => {
  const served = await serveBeacon({ publicUrl: "https://beacon.example.com" });
  try {
    const discovery = await (await fetch(served.url + "/.well-known/autonomous-agent")).json();
    assertEquals(discovery.documentation, {
      protocol: "https://beacon.example.com/docs/protocol-0.1.md",
      a2a: "https://beacon.example.com/docs/a2a.md",
    });
    const card = await (await fetch(served.url + "/.well-known/agent-card.json")).json();
    assertStrictEquals(card.documentationUrl, discovery.documentation.a2a);
    for (const [name, url] of Object.entries(discovery.documentation)) {
      const response = await fetch(served.url + new URL(url as string).pathname);
      assertStrictEquals(response.status, 200, name);
      assertStrictEquals(response.headers.get("content-type"), "text/markdown; charset=utf-8");
      assertHardened(response, name);
      const text = await response.text();
      const file = (url as string).endsWith("a2a.md") ? "a2a.md" : "protocol-0.1.md";
      assertStrictEquals(text, await Deno.readTextFile(new URL(`docs/${file}`, ROOT)));
      const etag = response.headers.get("etag");
      assert(etag !== null);
      const cached = await fetch(served.url + new URL(url as string).pathname, {
        headers: { "if-none-match": etag },
      });
      assertStrictEquals(cached.status, 304);
      await cached.body?.cancel();
    }
    const post = await fetch(served.url + "/docs/a2a.md", { method: "POST", body: "x" });
    assertStrictEquals(post.status, 405);
    await post.body?.cancel();
  } finally {
    await served.close();
  }
});
