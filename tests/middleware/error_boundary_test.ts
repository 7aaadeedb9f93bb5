import { assertEquals } from "../support/assert.ts";
import { errorBoundary } from "../../src/middleware/error_boundary.ts";
import { StorageError } from "../../src/errors.ts";
import { BeaconError } from "../../src/http/errors.ts";
import { contextFor as context } from "../support/context.ts";

Deno.test("errorBoundary() maps a refusal to its code without reporting it", async () => {
  const reported: unknown[] = [];
  const ctx = context();
  const response = await errorBoundary((e) => reported.push(e))(ctx, () => {
    throw new BeaconError("invalid_message", "Field subject is required");
  });
  assertEquals(response.status, 422);
  assertEquals(await response.json(), {
    error: { code: "invalid_message", message: "Field subject is required" },
  });
  assertEquals(reported.length, 0);
  assertEquals(ctx.log, { outcome: "refused", code: "invalid_message" });
});

Deno.test("errorBoundary() answers an unknown error 500 with a fixed message and reports it", async () => {
  const reported: unknown[] = [];
  const secret = new Error("SQLITE_CORRUPT at /var/lib/secret.db line 7");
  const response = await errorBoundary((e) => reported.push(e))(context(), () => {
    throw secret;
  });
  assertEquals(response.status, 500);
  const text = await response.text();
  assertEquals(JSON.parse(text), { error: { code: "internal", message: "Internal error" } });
  assertEquals(text.includes("secret"), false);
  assertEquals(reported, [secret]);
});

Deno.test("errorBoundary() maps a storage failure to 503 unavailable", async () => {
  const response = await errorBoundary(() => {
    throw new Error("a failing hook must not change the answer");
  })(context(), () => {
    throw new StorageError(new Error("connection refused"));
  });
  assertEquals(response.status, 503);
  assertEquals((await response.json()).error.code, "unavailable");
});

Deno.test("errorBoundary() maps a thrown non-Error value too", async () => {
  const response = await errorBoundary(undefined)(context(), () => {
    throw "a string";
  });
  assertEquals(response.status, 500);
});
