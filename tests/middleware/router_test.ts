import { assertEquals } from "../support/assert.ts";
import { router } from "../../src/middleware/router.ts";
import type { Context } from "../../src/http/context.ts";
import { contextFor } from "../support/context.ts";

const context = (method: string, path: string): Context => contextFor(path, { method });

const route = router([
  { name: "doc", path: "/doc", methods: { GET: () => Promise.resolve(new Response("doc")) } },
  {
    name: "item",
    path: "/items/:id",
    methods: {
      GET: (ctx) => Promise.resolve(new Response(`item ${ctx.params.id}`)),
      POST: () => Promise.resolve(new Response("posted", { status: 202 })),
    },
  },
  { name: "slash", path: "/a/", methods: { POST: () => Promise.resolve(new Response("slash")) } },
]);

Deno.test("router() dispatches by path and method and fills parameters", async () => {
  assertEquals(await (await route(context("GET", "/doc"))).text(), "doc");
  assertEquals(await (await route(context("GET", "/items/abc"))).text(), "item abc");
  assertEquals((await route(context("POST", "/items/abc"))).status, 202);
  assertEquals(await (await route(context("POST", "/a/"))).text(), "slash");
});

Deno.test("router() answers 404 for unknown paths, empty parameters and extra segments", async () => {
  for (const path of ["/", "/nope", "/items/", "/items/a/b", "/doc/", "/a"]) {
    const response = await route(context("GET", path));
    assertEquals(response.status, 404, path);
    assertEquals((await response.json()).error.code, "not_found");
  }
});

Deno.test("router() answers 405 with Allow for a known path and another method", async () => {
  const response = await route(context("DELETE", "/items/x"));
  assertEquals(response.status, 405);
  assertEquals(response.headers.get("allow"), "GET, POST, HEAD, OPTIONS");
  assertEquals((await response.json()).error.code, "method_not_allowed");
});

Deno.test("router() answers HEAD from GET without a body", async () => {
  const response = await route(context("HEAD", "/doc"));
  assertEquals(response.status, 200);
  assertEquals(response.body, null);
});

Deno.test("router() answers a CORS preflight with the route's methods", async () => {
  const response = await route(context("OPTIONS", "/items/x"));
  assertEquals(response.status, 204);
  assertEquals(response.headers.get("access-control-allow-methods"), "GET, POST, HEAD, OPTIONS");
  assertEquals(
    response.headers.get("access-control-allow-headers")?.includes("a2a-version"),
    true,
  );
});
