import { assert, assertEquals, assertStrictEquals } from "../support/assert.ts";
import { MESSAGE_SCHEMA_URL, renderMessageSchema } from "../../src/cli/generate_schema.ts";
import { checkMessage } from "../../src/message/schema.ts";
import { messageJsonSchema } from "../../src/message/json_schema.ts";
import { exampleMessages } from "../../src/message/examples.ts";
import { assertSamplesExist } from "../support/samples.ts";

type JsonSchema = {
  type?: string;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean;
  const?: unknown;
  enum?: unknown[];
  minLength?: number;
  maxLength?: number;
  pattern?: string;
};

/**
 * A validator for exactly the draft-07 keywords the message schema uses, written from the
 * specification (lengths in code points, patterns as ECMA-262 regular expressions). It lets the
 * tests show that the published schema and checkMessage accept the same messages. `u` mode is
 * how common validators such as Ajv compile patterns; plain mode is the other ECMA-262 reading.
 */
function validates(schema: JsonSchema, value: unknown, unicodeMode: boolean): boolean {
  if (schema.const !== undefined && value !== schema.const) return false;
  if (schema.enum !== undefined && !schema.enum.includes(value)) return false;
  if (schema.type === "string") {
    if (typeof value !== "string") return false;
    const length = [...value].length;
    if (schema.minLength !== undefined && length < schema.minLength) return false;
    if (schema.maxLength !== undefined && length > schema.maxLength) return false;
    if (
      schema.pattern !== undefined &&
      !new RegExp(schema.pattern, unicodeMode ? "u" : "").test(value)
    ) return false;
  }
  if (schema.type === "object") {
    if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
    const record = value as Record<string, unknown>;
    const properties = schema.properties ?? {};
    for (const name of schema.required ?? []) if (!Object.hasOwn(record, name)) return false;
    for (const name of Object.keys(record)) {
      if (Object.hasOwn(properties, name)) {
        if (!validates(properties[name], record[name], unicodeMode)) return false;
      } else if (schema.additionalProperties === false) return false;
    }
  }
  return true;
}

/** The keywords the validator above understands; a new one in the schema must extend it. */
const UNDERSTOOD = new Set([
  "$schema",
  "title",
  "description",
  "examples",
  "type",
  "properties",
  "required",
  "additionalProperties",
  "const",
  "enum",
  "minLength",
  "maxLength",
  "pattern",
]);

function keywordsOf(schema: Record<string, unknown>): string[] {
  const found = Object.keys(schema);
  const properties = (schema.properties ?? {}) as Record<string, Record<string, unknown>>;
  for (const child of Object.values(properties)) found.push(...keywordsOf(child));
  return found;
}

async function samples(): Promise<[string, unknown][]> {
  const found: [string, unknown][] = [];
  for (const kind of ["valid", "invalid"]) {
    const directory = new URL(`../data/messages/${kind}/`, import.meta.url);
    await assertSamplesExist(directory);
    for await (const entry of Deno.readDir(directory)) {
      if (!entry.name.endsWith(".json")) continue;
      const text = await Deno.readTextFile(new URL(entry.name, directory));
      found.push([`${kind}/${entry.name}`, JSON.parse(text)]);
    }
  }
  return found;
}

function variants(): [string, unknown][] {
  const base = structuredClone(exampleMessages[0]) as Record<string, unknown>;
  const signed = structuredClone(exampleMessages[1]) as Record<string, unknown>;
  const identity = signed.identity as Record<string, unknown>;
  const set = (target: Record<string, unknown>, key: string, value: unknown) => ({
    ...target,
    [key]: value,
  });
  return [
    ["200 emoji subject", set(base, "subject", "😀".repeat(200))],
    ["201 emoji subject", set(base, "subject", "😀".repeat(201))],
    ["199 emoji and 2 letters", set(base, "subject", "ab" + "😀".repeat(199))],
    ["lone high surrogate", set(base, "subject", "a\ud800")],
    ["lone low surrogate in body", set(base, "body", "\udc00b")],
    ["reversed pair in body", set(base, "body", "\ude00\ud83d")],
    ["newline in subject", set(base, "subject", "a\nb")],
    ["NEL in subject", set(base, "subject", "a\u0085b")],
    ["line separator in subject", set(base, "subject", "a\u2028b")],
    ["bidi override in subject", set(base, "subject", "a\u202eb")],
    ["tab in body", set(base, "body", "a\tb")],
    ["empty body", set(base, "body", "")],
    ["body at 32768", set(base, "body", "x".repeat(32768))],
    ["body at 32769", set(base, "body", "x".repeat(32769))],
    ["language 35", set(base, "language", "ab-abcdefgh-abcdefgh-abcdefgh-abcde")],
    ["language 36", set(base, "language", "ab-abcdefgh-abcdefgh-abcdefgh-abcdef")],
    ["language with trailing newline", set(base, "language", "en\n")],
    ["number as subject", set(base, "subject", 5)],
    ["null sender", set(base, "sender", null)],
    ["array sender", set(base, "sender", [])],
    ["unknown intent", set(base, "intent", "command")],
    ["own __proto__", JSON.parse(JSON.stringify(base).replace("{", '{"__proto__":1,'))],
    [
      "key with spare bits",
      set(signed, "identity", set(identity, "publicKey", "A".repeat(42) + "B")),
    ],
    [
      "signature too short",
      set(signed, "identity", set(identity, "signature", "A".repeat(84) + "w")),
    ],
    ["lowercase algorithm", set(signed, "identity", set(identity, "algorithm", "ed25519"))],
    ["array root", [base]],
    ["string root", "message"],
  ];
}

Deno.test("schemas/message.schema.json: equals the output of generate_schema.ts", async () => {
  const committed = await Deno.readTextFile(MESSAGE_SCHEMA_URL);
  assert(
    committed === renderMessageSchema(),
    "schemas/message.schema.json is stale: run " +
      "`deno run --allow-write=schemas src/cli/generate_schema.ts --write`",
  );
});

Deno.test("renderMessageSchema: is 2-space JSON with a trailing newline", () => {
  const text = renderMessageSchema();
  assert(text.endsWith("}\n") && !text.endsWith("\n\n"));
  assertStrictEquals(text, JSON.stringify(JSON.parse(text), null, 2) + "\n");
});

Deno.test("messageJsonSchema: has $schema, title, description, no $id, and closed objects", () => {
  const schema = messageJsonSchema();
  assertStrictEquals(schema.$schema, "http://json-schema.org/draft-07/schema#");
  assertStrictEquals(schema.title, "beacon/0.1 message");
  assert(typeof schema.description === "string" && schema.description.length > 0);
  assertStrictEquals(schema.$id, undefined);
  assertStrictEquals(schema.additionalProperties, false);
  const properties = schema.properties as Record<string, Record<string, unknown>>;
  assertStrictEquals(properties.sender.additionalProperties, false);
  assertStrictEquals(properties.identity.additionalProperties, false);
  assertEquals(schema.required, ["beacon", "subject", "body", "intent", "sender"]);
});

Deno.test("messageJsonSchema: documents every member with a description", () => {
  const check = (schema: Record<string, unknown>, path: string) => {
    assert(typeof schema.description === "string" && schema.description !== "", path);
    const properties = (schema.properties ?? {}) as Record<string, Record<string, unknown>>;
    for (const [name, child] of Object.entries(properties)) check(child, `${path}.${name}`);
  };
  check(messageJsonSchema(), "");
});

Deno.test("messageJsonSchema: has no contact, callback or URL member", () => {
  const text = JSON.stringify(Object.keys(messageJsonSchema().properties as object)) +
    JSON.stringify(
      Object.keys(
        ((messageJsonSchema().properties as Record<string, Record<string, unknown>>).sender
          .properties) as object,
      ),
    );
  for (const word of ["mail", "url", "uri", "callback", "contact", "webhook", "reply"]) {
    assert(!text.toLowerCase().includes(word), word);
  }
});

Deno.test("messageJsonSchema: every example validates, against checkMessage and the schema", () => {
  const schema = messageJsonSchema();
  const examples = schema.examples as unknown[];
  assert(examples.length >= 2);
  assertEquals(examples, exampleMessages);
  for (const example of examples) {
    assert(checkMessage(example).ok);
    assert(validates(schema as JsonSchema, example, true));
    assert(validates(schema as JsonSchema, example, false));
  }
});

Deno.test("messageJsonSchema: uses only keywords the agreement validator understands", () => {
  for (const keyword of keywordsOf(messageJsonSchema())) assert(UNDERSTOOD.has(keyword), keyword);
});

Deno.test("messageJsonSchema: agrees with checkMessage on samples and edge cases", async () => {
  const schema = messageJsonSchema() as JsonSchema;
  const cases = [...await samples(), ...variants()];
  assert(cases.some(([, value]) => checkMessage(value).ok));
  assert(cases.some(([, value]) => !checkMessage(value).ok));
  for (const [name, value] of cases) {
    const accepted = checkMessage(value).ok;
    assertStrictEquals(validates(schema, value, true), accepted, `${name} (u mode)`);
    assertStrictEquals(validates(schema, value, false), accepted, `${name} (plain mode)`);
  }
});
