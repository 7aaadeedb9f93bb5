/** Interpretation and rendering of stored content (review/render/content.ts). */
import { interpretContent, previewOf, renderContent } from "../render/content.ts";
import { assertEquals, assertStrictEquals } from "../../tests/support/assert.ts";
import { assertInert } from "./support.ts";

const bytes = (text: string) => new TextEncoder().encode(text);

Deno.test("interpretContent() recognises each stored form", () => {
  assertStrictEquals(interpretContent("text/plain; charset=utf-8", bytes("hi")).form, "text");
  const message = {
    beacon: "0.1",
    subject: "S",
    body: "B",
    intent: "other",
    sender: { name: "N" },
  };
  assertStrictEquals(
    interpretContent("application/json", bytes(JSON.stringify(message))).form,
    "message",
  );
  const a2a = {
    messageId: "m",
    role: "ROLE_USER",
    parts: [{ text: "t" }, { data: message }, { data: { x: 1 } }],
  };
  const view = interpretContent("application/json", bytes(JSON.stringify(a2a)));
  assertStrictEquals(view.form, "a2a");
  if (view.form === "a2a") {
    assertEquals(view.parts.map((part) => part.type), ["text", "message", "other"]);
  }
  assertStrictEquals(interpretContent("application/json", bytes("[1,2]")).form, "json");
  assertStrictEquals(interpretContent("application/json", bytes("{not json")).form, "text");
  assertStrictEquals(interpretContent("text/plain", new Uint8Array([0xff])).form, "binary");
});

Deno.test("previewOf() gives the subject or the first words", () => {
  const message = { beacon: "0.1", subject: "The subject", body: "B", intent: "other", sender: {} };
  assertStrictEquals(
    previewOf(interpretContent("application/json", bytes(JSON.stringify(message)))),
    "The subject",
  );
  assertStrictEquals(
    previewOf(interpretContent("text/plain", bytes("first words"))),
    "first words",
  );
  assertStrictEquals(
    previewOf(interpretContent("text/plain", new Uint8Array([0xff, 0]))),
    "(2 bytes, not UTF-8)",
  );
});

Deno.test("renderContent() labels fields, prefixes text and escapes hostile JSON members", () => {
  const hostile = {
    beacon: "0.1",
    subject: "Hi",
    body: "line one\nline two",
    intent: "other",
    sender: { name: "N" },
    "\u202Eextra": { "\x1b[1m": "v\u200B" },
  };
  const { lines, findings } = renderContent(
    interpretContent("application/json", bytes(JSON.stringify(hostile))),
    80,
  );
  assertEquals(lines.slice(0, 2), ["subject       Hi", "intent        other"]);
  assertEquals(lines.slice(-3), ["body", "  | line one", "  | line two"]);
  for (const line of lines) assertInert(line, "rendered line");
  assertStrictEquals(findings.count("bidi"), 1);
  assertStrictEquals(findings.count("escape"), 1);
  assertStrictEquals(findings.count("invisible"), 1);
});
