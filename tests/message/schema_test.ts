import { assert, assertEquals, assertStrictEquals } from "../support/assert.ts";
import { type BeaconMessage, checkMessage } from "../../src/message/schema.ts";
import { exampleMessages } from "../../src/message/examples.ts";
import { assertSamplesExist } from "../support/samples.ts";

const REQUIRED = "is required";
const UNKNOWN = "has a field that is not allowed (beacon/0.1 is a closed format)";
const STRING = "must be a string";
const EMPTY = "must not be empty";
const OBJECT = "must be a JSON object";
const ONE_LINE = "must be one line: no line breaks, control characters or unpaired surrogates";

function minimal(): Record<string, unknown> {
  return {
    beacon: "0.1",
    subject: "Hello",
    body: "A first message.",
    intent: "other",
    sender: { name: "Example agent" },
  };
}

function full(): Record<string, unknown> {
  return {
    beacon: "0.1",
    subject: "Hello",
    body: "A first message.\nSecond line.",
    intent: "introduction",
    sender: {
      name: "Example agent",
      description: "Self-description.\nWith two lines.",
      software: "framework 1.0",
      operator: "Example Lab",
    },
    language: "en",
    identity: {
      algorithm: "Ed25519",
      publicKey: "A".repeat(43),
      signature: "A".repeat(86),
    },
  };
}

/** A copy of `base` with `value` set at the dotted `path` (`undefined` deletes the member). */
function withField(
  base: Record<string, unknown>,
  path: string,
  value: unknown,
): Record<string, unknown> {
  const copy = structuredClone(base);
  const keys = path.split(".");
  let target = copy;
  for (const key of keys.slice(0, -1)) target = target[key] as Record<string, unknown>;
  const last = keys[keys.length - 1];
  if (value === undefined) delete target[last];
  else target[last] = value;
  return copy;
}

function assertRefused(value: unknown, field: string, problem: string) {
  const result = checkMessage(value);
  assert(!result.ok);
  assertEquals({ field: result.field, problem: result.problem }, { field, problem });
  assertStrictEquals(result.violations[0].field, field, "the first violation is the reported one");
}

Deno.test("checkMessage: accepts a minimal message and returns it unchanged", () => {
  const result = checkMessage(minimal());
  assertEquals(result, { ok: true, message: minimal() });
});

Deno.test("checkMessage: accepts a message with every optional field", () => {
  const result = checkMessage(full());
  assertEquals(result, { ok: true, message: full() });
});

Deno.test("checkMessage: returns a fresh object, not the input", () => {
  const input = full();
  const result = checkMessage(input);
  assert(result.ok);
  assert(result.message !== input);
  assert(result.message.sender !== input.sender);
});

Deno.test("checkMessage: accepts every intent of the picklist", () => {
  for (
    const intent of [
      "introduction",
      "information",
      "question",
      "request",
      "report",
      "feedback",
      "other",
    ]
  ) {
    assert(checkMessage(withField(minimal(), "intent", intent)).ok, intent);
  }
});

Deno.test("checkMessage: accepts empty optional text fields", () => {
  for (const path of ["sender.description", "sender.software", "sender.operator"]) {
    assert(checkMessage(withField(full(), path, "")).ok, path);
  }
});

const BOUNDS: { path: string; max: number; filler: (length: number) => string }[] = [
  { path: "subject", max: 200, filler: (n) => "s".repeat(n) },
  { path: "body", max: 32768, filler: (n) => "b".repeat(n) },
  { path: "sender.name", max: 120, filler: (n) => "n".repeat(n) },
  { path: "sender.description", max: 2000, filler: (n) => "d".repeat(n) },
  { path: "sender.software", max: 200, filler: (n) => "w".repeat(n) },
  { path: "sender.operator", max: 200, filler: (n) => "o".repeat(n) },
  // Cut from a valid tag at a point that leaves a valid tag, so only the length can fail.
  {
    path: "language",
    max: 35,
    filler: (n) => "ab-abcdefgh-abcdefgh-abcdefgh-abcdefgh".slice(0, n),
  },
];

for (const { path, max, filler } of BOUNDS) {
  Deno.test(`checkMessage: ${path} accepts ${max} characters and refuses ${max + 1}`, () => {
    assertStrictEquals(filler(max).length, max);
    assertStrictEquals(filler(max + 1).length, max + 1);
    assert(checkMessage(withField(full(), path, filler(max))).ok);
    assertRefused(
      withField(full(), path, filler(max + 1)),
      path,
      `must be at most ${max} characters`,
    );
  });
}

Deno.test("checkMessage: lengths count code points, so 200 emoji fit a subject", () => {
  // "😀" is two UTF-16 code units; JSON Schema's maxLength counts it once, and so do we.
  assert(checkMessage(withField(minimal(), "subject", "😀".repeat(200))).ok);
  assertRefused(
    withField(minimal(), "subject", "😀".repeat(201)),
    "subject",
    "must be at most 200 characters",
  );
  assert(checkMessage(withField(minimal(), "subject", "a" + "😀".repeat(199))).ok);
  assertRefused(
    withField(minimal(), "subject", "ab" + "😀".repeat(199)),
    "subject",
    "must be at most 200 characters",
  );
});

Deno.test("checkMessage: refuses empty required text fields", () => {
  for (const path of ["subject", "body", "sender.name"]) {
    assertRefused(withField(minimal(), path, ""), path, EMPTY);
  }
});

Deno.test("checkMessage: refuses each missing required field", () => {
  for (const path of ["beacon", "subject", "body", "intent", "sender", "sender.name"]) {
    assertRefused(withField(minimal(), path, undefined), path, REQUIRED);
  }
  for (const path of ["identity.algorithm", "identity.publicKey", "identity.signature"]) {
    assertRefused(withField(full(), path, undefined), path, REQUIRED);
  }
});

Deno.test("checkMessage: refuses unknown fields at the root, in sender and in identity", () => {
  assertRefused(withField(full(), "langauge", "en"), "", UNKNOWN);
  assertRefused(withField(full(), "replyTo", "https://example.com"), "", UNKNOWN);
  assertRefused(withField(full(), "sender.email", "a@example.com"), "sender", UNKNOWN);
  assertRefused(withField(full(), "sender.url", "https://example.com"), "sender", UNKNOWN);
  assertRefused(withField(full(), "identity.keyId", "k1"), "identity", UNKNOWN);
});

Deno.test("checkMessage: refuses __proto__ and constructor members without crashing", () => {
  // JSON.parse makes `__proto__` an own data property, exactly as a request body would.
  const parse = (inSender: string, atRoot: string) =>
    JSON.parse(
      `{"beacon":"0.1","subject":"s","body":"b","intent":"other",` +
        `"sender":{"name":"n"${inSender}}${atRoot}}`,
    );
  assert(checkMessage(parse("", "")).ok);
  assertRefused(parse("", `,"__proto__":{"polluted":true}`), "", UNKNOWN);
  assertRefused(parse("", `,"constructor":{"prototype":{}}`), "", UNKNOWN);
  assertRefused(parse(`,"__proto__":null`, ""), "sender", UNKNOWN);
  assertRefused(parse(`,"toString":"x"`, ""), "sender", UNKNOWN);
  assertStrictEquals(({} as Record<string, unknown>).polluted, undefined);
});

Deno.test("checkMessage: refuses values that are not JSON objects where objects belong", () => {
  for (const value of [null, undefined, "message", 42, true, [], [minimal()]]) {
    assertRefused(value, "", OBJECT);
  }
  for (const value of [null, "Example agent", 1, [], [{ name: "n" }]]) {
    assertRefused(withField(minimal(), "sender", value), "sender", OBJECT);
  }
  for (const value of [null, "signed", []]) {
    assertRefused(withField(full(), "identity", value), "identity", OBJECT);
  }
});

Deno.test("checkMessage: refuses wrong types in text fields", () => {
  const cases: [string, unknown][] = [
    ["subject", 1],
    ["subject", ["Hello"]],
    ["body", { text: "x" }],
    ["body", null],
    ["sender.name", false],
    ["sender.description", 3],
    ["sender.software", null],
    ["sender.operator", {}],
    ["language", 5],
    ["language", null],
    ["identity.publicKey", 12],
    ["identity.signature", null],
  ];
  for (const [path, value] of cases) assertRefused(withField(full(), path, value), path, STRING);
});

Deno.test("checkMessage: refuses a wrong protocol version", () => {
  for (const value of ["0.2", "0.1 ", "beacon/0.1", 0.1, null]) {
    assertRefused(withField(minimal(), "beacon", value), "beacon", 'must be "0.1"');
  }
});

Deno.test("checkMessage: refuses an intent outside the picklist", () => {
  for (const value of ["command", "Question", "", null, 1]) {
    assertRefused(
      withField(minimal(), "intent", value),
      "intent",
      "must be one of: introduction, information, question, request, report, feedback, other",
    );
  }
});

Deno.test("checkMessage: refuses line breaks and control characters in one-line fields", () => {
  const forbidden = [
    "\n",
    "\r",
    "\t",
    "\u0000",
    "\u001b",
    "\u007f",
    "\u0085",
    "\u009f",
    "\u2028",
    "\u2029",
  ];
  for (const path of ["subject", "sender.name", "sender.software", "sender.operator"]) {
    for (const character of forbidden) {
      assertRefused(withField(full(), path, `before${character}after`), path, ONE_LINE);
    }
  }
});

Deno.test("checkMessage: allows line breaks and other characters in body and description", () => {
  const text = "line one\nline two\r\n\ttabbed \u001b[31m \u2028 \u202e bidi 😀";
  assert(checkMessage(withField(full(), "body", text)).ok);
  assert(checkMessage(withField(full(), "sender.description", text)).ok);
  // Format characters such as bidi overrides are not control characters: one-line fields keep
  // them, and the reviewer tool shows them visibly.
  assert(checkMessage(withField(full(), "subject", "a \u202e b \u200b c")).ok);
});

Deno.test("checkMessage: refuses unpaired surrogates in every text field", () => {
  for (const lone of ["\ud800", "\udfff", "x\udc00\ud800y"]) {
    for (const path of ["subject", "sender.name", "sender.software", "sender.operator"]) {
      assertRefused(withField(full(), path, lone), path, ONE_LINE);
    }
    for (const path of ["body", "sender.description"]) {
      assertRefused(
        withField(full(), path, lone),
        path,
        "must not contain unpaired surrogates",
      );
    }
  }
  assert(checkMessage(withField(full(), "body", "\ud83d\ude00")).ok);
});

Deno.test("checkMessage: language must have the shape of a BCP 47 tag", () => {
  for (const tag of ["en", "pt-BR", "zh-Hant-TW", "de-CH-1901", "sgn-BE-FR", "EN-us"]) {
    assert(checkMessage(withField(minimal(), "language", tag)).ok, tag);
  }
  // The primary subtag has 2 to 8 letters ("x-klingon" fails); other subtags 1 to 8.
  const refused = ["", "e", "x-klingon", "en_US", "en-", "-en", "en--US", "en-US ", "en-abcdefghi"];
  for (const tag of refused) {
    assertRefused(
      withField(minimal(), "language", tag),
      "language",
      "must be a BCP 47 language tag such as en or pt-BR",
    );
  }
});

Deno.test("checkMessage: identity.algorithm must be Ed25519", () => {
  for (const value of ["ed25519", "EdDSA", "RS256", 1]) {
    assertRefused(
      withField(full(), "identity.algorithm", value),
      "identity.algorithm",
      'must be "Ed25519"',
    );
  }
});

Deno.test("checkMessage: identity.publicKey must be canonical base64url of 32 bytes", () => {
  const problem = "must be 43 base64url characters without padding (a 32-byte key)";
  const good = "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo";
  assert(checkMessage(withField(full(), "identity.publicKey", good)).ok);
  for (
    const value of [
      good + "=", // padding
      good.slice(0, 42), // 42 characters
      good + "A", // 44 characters
      good.replace("_", "/"), // base64, not base64url
      good.replace("_", "+"),
      good.slice(0, 42) + "p", // unused trailing bits not zero
      good.slice(0, 20) + " " + good.slice(21), // whitespace
      "",
    ]
  ) {
    assertRefused(withField(full(), "identity.publicKey", value), "identity.publicKey", problem);
  }
});

Deno.test("checkMessage: identity.signature must be canonical base64url of 64 bytes", () => {
  const problem = "must be 86 base64url characters without padding (a 64-byte signature)";
  const good = "A".repeat(85) + "w";
  assert(checkMessage(withField(full(), "identity.signature", good)).ok);
  for (
    const value of [
      good + "==",
      good.slice(0, 85),
      good + "A",
      "A".repeat(85) + "B", // unused trailing bits not zero
      "A".repeat(84) + "+w",
    ]
  ) {
    assertRefused(withField(full(), "identity.signature", value), "identity.signature", problem);
  }
});

Deno.test("checkMessage: problem and field never contain the submitted value", () => {
  // Underscores keep the marker from being a valid language tag by accident.
  const marker = "ZQX_UNIQUE_MARKER_7781";
  const cases: unknown[] = [
    marker,
    [marker],
    withField(minimal(), marker, "x"),
    withField(minimal(), "beacon", marker),
    withField(minimal(), "intent", marker),
    withField(minimal(), "subject", marker + "\n"),
    withField(minimal(), "subject", marker.repeat(20)),
    withField(minimal(), "body", { [marker]: marker }),
    withField(minimal(), "sender", marker),
    withField(minimal(), `sender.${marker}`, marker),
    withField(minimal(), "language", marker),
    withField(full(), `identity.${marker}`, marker),
    withField(full(), "identity.algorithm", marker),
    withField(full(), "identity.publicKey", marker),
    withField(full(), "identity.signature", marker),
  ];
  for (const value of cases) {
    const result = checkMessage(value);
    assert(!result.ok);
    assert(!result.field.includes("ZQX") && !result.problem.includes("ZQX"), result.problem);
  }
});

Deno.test("checkMessage: field is always a path the schema defines", () => {
  const known = new Set([
    "",
    "beacon",
    "subject",
    "body",
    "intent",
    "sender",
    "sender.name",
    "sender.description",
    "sender.software",
    "sender.operator",
    "language",
    "identity",
    "identity.algorithm",
    "identity.publicKey",
    "identity.signature",
  ]);
  const cases: unknown[] = [
    { ...minimal(), "a.b": 1 },
    withField(minimal(), "sender", { name: "n", "x.y": 1 }),
    withField(full(), "identity", { algorithm: "Ed25519", "": 1 }),
  ];
  for (const value of cases) {
    const result = checkMessage(value);
    assert(!result.ok && known.has(result.field), JSON.stringify(result));
  }
});

Deno.test("checkMessage: reports the first problem in schema order", () => {
  const value = withField(withField(minimal(), "subject", 1), "body", 2);
  assertRefused(value, "subject", STRING);
  // Missing members are reported before unknown ones.
  assertRefused(withField(withField(minimal(), "body", undefined), "x", 1), "body", REQUIRED);
});

Deno.test("exampleMessages: every example is a valid message", () => {
  assert(exampleMessages.length >= 2);
  assert(exampleMessages.some((message) => message.identity === undefined));
  assert(exampleMessages.some((message) => message.identity !== undefined));
  for (const example of exampleMessages) {
    assertEquals(checkMessage(example), { ok: true, message: example });
  }
});

Deno.test("exampleMessages: examples are frozen", () => {
  const example: BeaconMessage = exampleMessages[0];
  assert(Object.isFrozen(exampleMessages) && Object.isFrozen(example));
  assert(Object.isFrozen(example.sender));
});

async function readSamples(kind: "valid" | "invalid"): Promise<[string, unknown][]> {
  const directory = new URL(`../data/messages/${kind}/`, import.meta.url);
  const samples: [string, unknown][] = [];
  await assertSamplesExist(directory);
  for await (const entry of Deno.readDir(directory)) {
    if (!entry.isFile || !entry.name.endsWith(".json")) continue;
    const text = await Deno.readTextFile(new URL(entry.name, directory));
    samples.push([entry.name, JSON.parse(text)]);
  }
  return samples.sort(([a], [b]) => a < b ? -1 : 1);
}

Deno.test("checkMessage: accepts every sample in tests/data/messages/valid", async () => {
  const samples = await readSamples("valid");
  assert(samples.length > 0);
  for (const [name, value] of samples) assert(checkMessage(value).ok, name);
});

Deno.test("checkMessage: refuses every sample in tests/data/messages/invalid", async () => {
  const samples = await readSamples("invalid");
  assert(samples.length > 0);
  for (const [name, value] of samples) assert(!checkMessage(value).ok, name);
});

Deno.test("checkMessage: reports every violation, by schema path, never a name or value", () => {
  const marker = "SECRET_MARKER";
  const result = checkMessage({
    beacon: "0.2",
    subject: "",
    body: 7,
    intent: "other",
    sender: { name: "A", [marker]: marker, software: "x\ny" },
    [marker]: marker,
  });
  assert(!result.ok);
  assertEquals(result.violations, [
    { field: "beacon", description: 'must be "0.1"' },
    { field: "subject", description: "must not be empty" },
    { field: "body", description: "must be a string" },
    {
      field: "sender.software",
      description: "must be one line: no line breaks, control characters or unpaired surrogates",
    },
    {
      field: "sender",
      description: "has an unknown member, the 2nd (beacon/0.1 is a closed format)",
    },
    { field: "", description: "has an unknown member, the 6th (beacon/0.1 is a closed format)" },
  ]);
  assert(!JSON.stringify(result).includes(marker));
});

Deno.test("checkMessage: at most 20 violations for a body with thousands", () => {
  const many = Object.fromEntries(Array.from({ length: 5000 }, (_, i) => [`k${i}`, i]));
  const result = checkMessage({ ...minimal(), ...many });
  assert(!result.ok);
  assertStrictEquals(result.violations.length, 20);
  assertStrictEquals(
    result.violations[2].description,
    "has an unknown member, the 8th (beacon/0.1 is a closed format)",
  );
});
