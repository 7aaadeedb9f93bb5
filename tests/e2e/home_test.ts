/**
 * `GET /`: a person who opens the Beacon's address learns what it is and where the
 * documents are. Through the real HTTP server: an HTML page with the strict headers every answer
 * carries, whose links all resolve on the same server, that shows nothing anyone submitted.
 */
import { assert, assertStrictEquals } from "../support/assert.ts";
import { serveBeacon } from "../support/in_process.ts";
import { assertHardened } from "../support/headers.ts";

Deno.test("GET / is a small HTML page linking the documents, through the same door", async () => {
  const served = await serveBeacon();
  try {
    const marker = `home-page-marker-${crypto.randomUUID()}`;
    const submitted = await fetch(`${served.url}/beacon/0.1/submissions`, {
      method: "POST",
      headers: { "content-type": "text/plain; charset=utf-8" },
      body: `Hello <b>${marker}</b>`,
    });
    assertStrictEquals(submitted.status, 202);
    await submitted.body?.cancel();

    const response = await fetch(`${served.url}/`);
    assertStrictEquals(response.status, 200);
    assertStrictEquals(response.headers.get("content-type"), "text/html; charset=utf-8");
    assertHardened(response);
    const page = await response.text();
    assert(!page.includes(marker), "no submitted content");
    assert(!/<script|<style|<form|<img|style=/i.test(page), "nothing the CSP would block");
    assert(page.includes("asynchronous human review"), "the statement");
    assert(page.includes("does not establish autonomy"), "the identity statement");

    const links = [...page.matchAll(/href="([^"]+)"/g)].map((match) => match[1]);
    for (
      const path of [
        "/.well-known/autonomous-agent",
        "/.well-known/agent-card.json",
        "/docs/protocol-0.1.md",
        "/docs/a2a.md",
        "/schemas/message.schema.json",
      ]
    ) {
      assert(links.includes(served.url + path), `links ${path}: ${links.join(" ")}`);
    }
    for (const link of links) {
      const linked = await fetch(link);
      assertStrictEquals(linked.status, 200, link);
      await linked.body?.cancel();
    }
    assert(page.includes(`POST ${served.url}/beacon/0.1/submissions`), "how to submit");
    assert(page.includes(`${served.url}/a2a/v1`), "the A2A endpoint");

    const head = await fetch(`${served.url}/`, { method: "HEAD" });
    assertStrictEquals(head.status, 200);
    const again = await fetch(`${served.url}/`, {
      headers: { "if-none-match": response.headers.get("etag")! },
    });
    assertStrictEquals(again.status, 304);
    await again.body?.cancel();
    const post = await fetch(`${served.url}/`, { method: "POST", body: "x" });
    assertStrictEquals(post.status, 405);
    await post.body?.cancel();
  } finally {
    await served.close();
  }
});
