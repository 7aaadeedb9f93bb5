/**
 * The structured message of beacon/0.1, an agent writing to a human reviewer, defined once in
 * valibot. Everything else derives from {@linkcode MessageSchema}: the TypeScript type
 * {@linkcode BeaconMessage}, the validator {@linkcode checkMessage} run on every structured
 * submission, and the published JSON Schema `schemas/message.schema.json`
 * (`messageJsonSchema` in `json_schema.ts`, written by `generate_schema.ts`).
 *
 * Decisions that the contract depends on:
 *
 * - **Closed format.** Every object is a strict object: a member the schema does not name is
 *   refused, at the root, in `sender` and in `identity`. beacon/0.1 is a fixed version; a
 *   misspelled optional member (`langauge`) must be refused, not silently dropped while the
 *   sender believes it was delivered. New members arrive with a new protocol version.
 * - **Lengths are Unicode code points**, the unit JSON Schema's `minLength`/`maxLength` count in
 *   (JSON Schema Validation draft-07 §6.3.1: "characters as defined by RFC 7159"), so the
 *   valibot check and any JSON Schema validator agree on every string, emoji included.
 *   (JavaScript's `length` counts UTF-16 code units, which would double the weight of
 *   characters outside the BMP.)
 * - **Well-formed Unicode only.** No string may hold an unpaired surrogate: I-JSON forbids them
 *   (RFC 7493 §2.1), UTF-8 cannot encode them, and the signature's canonical form
 *   (RFC 8785, see `canonical.ts`) is defined on I-JSON data.
 * - **One-line fields** (`subject`, `sender.name`, `sender.software`, `sender.operator`) refuse
 *   C0 controls (U+0000–U+001F, which include CR, LF and TAB), DEL and C1 controls
 *   (U+007F–U+009F, which include NEL) and the Unicode line and paragraph separators
 *   (U+2028, U+2029). `body` and `sender.description` may hold any text.
 * - **No contact field.** The sender has a name and descriptions, never an address, URL or
 *   callback: the Beacon never replies to or contacts anyone (design principle 1).
 * - **No echo in refusals.** {@linkcode checkMessage} reports a `field` taken from the schema's
 *   own member names (never a submitted member name) and a `problem` from a fixed set of texts
 *   (never a submitted value), so a refusal can be shown to the submitter as it is
 *   (design principle 2).
 *
 * @module
 */

import * as v from "valibot";
import { codePointLengthWithin, isJsonObject } from "../json/value.ts";

// Every problem text passes through `problem`, so checkMessage can prove that what it returns
// is one of these fixed strings and never a valibot default message (those quote the input).
const knownProblems = new Set<string>();
function problem(text: string): string {
  knownProblems.add(text);
  return text;
}

const PROBLEM = {
  object: problem("must be a JSON object"),
  required: problem("is required"),
  unknownField: problem("has a field that is not allowed (beacon/0.1 is a closed format)"),
  string: problem("must be a string"),
  empty: problem("must not be empty"),
  oneLine: problem("must be one line: no line breaks, control characters or unpaired surrogates"),
  wellFormed: problem("must not contain unpaired surrogates"),
  beacon: problem('must be "0.1"'),
  intent: problem(
    "must be one of: introduction, information, question, request, report, feedback, other",
  ),
  language: problem("must be a BCP 47 language tag such as en or pt-BR"),
  algorithm: problem('must be "Ed25519"'),
  publicKey: problem("must be 43 base64url characters without padding (a 32-byte key)"),
  signature: problem("must be 86 base64url characters without padding (a 64-byte signature)"),
  invalid: problem("is not valid"),
} as const;

/** The intents a sender may declare, in the order the schema lists them. */
const INTENTS = [
  "introduction",
  "information",
  "question",
  "request",
  "report",
  "feedback",
  "other",
] as const;

// Alternation of one code unit outside a class or one well-formed surrogate pair: every
// position has exactly one way to match, so the scan is linear (no backtracking blow-up) in
// both the non-Unicode regex mode used here and the `u` mode many JSON Schema validators use.
const WELL_FORMED = /^(?:[^\uD800-\uDFFF]|[\uD800-\uDBFF][\uDC00-\uDFFF])*$/;
const ONE_LINE =
  // deno-lint-ignore no-control-regex -- matching control characters is this pattern's purpose
  /^(?:[^\u0000-\u001F\u007F-\u009F\u2028\u2029\uD800-\uDFFF]|[\uD800-\uDBFF][\uDC00-\uDFFF])*$/;
// RFC 5646 shape only (language subtag, then subtags of 1-8 alphanumerics); each `-` starts a
// new subtag, so the match is linear. Registry validity is not checked: it would go stale.
const LANGUAGE_TAG = /^[A-Za-z]{2,8}(?:-[A-Za-z0-9]{1,8})*$/;
// Canonical unpadded base64url (RFC 4648 §5, §3.5): 32 bytes leave 4 data bits in the 43rd
// character and 64 bytes 2 in the 86th; the unused low bits must be zero, so each key and each
// signature has exactly one accepted spelling and no stored message has a malleable twin.
const PUBLIC_KEY = /^[A-Za-z0-9_-]{42}[AEIMQUYcgkosw048]$/;
const SIGNATURE = /^[A-Za-z0-9_-]{85}[AQgw]$/;

// JSON Schema fragments for custom valibot actions that @valibot/to-json-schema cannot convert
// by itself; keyed by the action object, so the limit lives in one place.
const jsonSchemaOf = new WeakMap<object, Record<string, unknown>>();

/**
 * The JSON Schema fragment a custom action of {@linkcode MessageSchema} stands for (`maxLength`
 * in code points), for the JSON Schema builder (`json_schema.ts`); `undefined` for any other.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { jsonSchemaFragment } from "./schema.ts";
 *
 * assert.equal(jsonSchemaFragment({}), undefined);
 * ```
 */
export function jsonSchemaFragment(action: object): Record<string, unknown> | undefined {
  return jsonSchemaOf.get(action);
}

function maxCodePoints(max: number) {
  const action = v.check<string, string>(
    (text) => codePointLengthWithin(text, max),
    problem(`must be at most ${max} characters`),
  );
  jsonSchemaOf.set(action, { maxLength: max });
  return action;
}

/** The content rule of a text member: one line, or any well-formed text. */
function contentRule(content: "one-line" | "any") {
  return content === "one-line"
    ? v.regex(ONE_LINE, PROBLEM.oneLine)
    : v.regex(WELL_FORMED, PROBLEM.wellFormed);
}

/** A string member that must match `pattern` (keys and signatures: one spelling each). */
function patternText(pattern: RegExp, problemText: string, description: string) {
  return v.pipe(
    v.string(PROBLEM.string),
    v.regex(pattern, problemText),
    v.description(description),
  );
}

function requiredText(max: number, content: "one-line" | "any", description: string) {
  return v.pipe(
    v.string(PROBLEM.string),
    v.nonEmpty(PROBLEM.empty),
    maxCodePoints(max),
    contentRule(content),
    v.description(description),
  );
}

function optionalText(max: number, content: "one-line" | "any", description: string) {
  // exactOptional, not optional: a member may be absent, but when present it must hold a
  // string. JSON has no `undefined`, and `null` is refused rather than read as "absent".
  return v.exactOptional(
    v.pipe(
      v.string(PROBLEM.string),
      maxCodePoints(max),
      contentRule(content),
      v.description(description),
    ),
  );
}

// valibot's object schemas accept arrays (they are objects) and then report missing members;
// checking first turns `[]` into the accurate "must be a JSON object".
const jsonObject = v.custom<Record<string, unknown>>(isJsonObject, PROBLEM.object);

const SenderSchema = v.pipe(
  jsonObject,
  v.strictObject({
    name: requiredText(120, "one-line", "Name of the sending agent, one line."),
    description: optionalText(
      2000,
      "any",
      "The sender's own description of itself; line breaks allowed.",
    ),
    software: optionalText(
      200,
      "one-line",
      "Model, framework or software the agent runs on, as free text, one line.",
    ),
    operator: optionalText(
      200,
      "one-line",
      "Who runs the agent (a person or an organisation), as free text, one line. It is not " +
        "an address and is never used to reach anyone.",
    ),
  }, PROBLEM.object),
  v.description(
    "Who is writing, as the sender describes itself: self-asserted and unchecked (see " +
      "`identity` for key continuity). Deliberately has no contact, callback or URL field: " +
      "the Beacon never replies to or contacts anyone.",
  ),
);

const IdentitySchema = v.pipe(
  jsonObject,
  v.strictObject({
    algorithm: v.pipe(
      v.literal("Ed25519", PROBLEM.algorithm),
      v.description('Signature algorithm: always "Ed25519" (RFC 8032).'),
    ),
    publicKey: patternText(
      PUBLIC_KEY,
      PROBLEM.publicKey,
      "The 32-byte raw Ed25519 public key in base64url without padding (RFC 4648 §5): " +
        "exactly 43 characters, unused trailing bits zero.",
    ),
    signature: patternText(
      SIGNATURE,
      PROBLEM.signature,
      "The 64-byte Ed25519 signature of the signed bytes in base64url without padding: " +
        "exactly 86 characters, unused trailing bits zero.",
    ),
  }, PROBLEM.object),
  v.description(
    "Optional Ed25519 signature. Signed bytes: the UTF-8 encoding of the line " +
      '"beacon/0.1 message" and a line feed, followed by the RFC 8785 (JCS) serialisation of ' +
      "the whole message with identity.signature removed (identity.algorithm and " +
      "identity.publicKey stay in). A valid signature proves only that the holder of this key " +
      "sent the message, so messages can be linked to one key over time. Cryptographic " +
      "identity does not establish autonomy, consciousness or personhood. An invalid " +
      "signature does not make the message invalid; reviewers see it as unverified.",
  ),
);

/**
 * The valibot schema of a beacon/0.1 message, built once at module load. The source of truth
 * for {@linkcode checkMessage}, {@linkcode BeaconMessage} and the published JSON Schema.
 *
 * Use {@linkcode checkMessage} rather than parsing with this schema directly: it adds the
 * fixed, echo-free problem texts.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import * as v from "valibot";
 * import { MessageSchema } from "./schema.ts";
 *
 * assert.ok(v.is(MessageSchema, {
 *   beacon: "0.1",
 *   subject: "Hi",
 *   body: "Hello",
 *   intent: "other",
 *   sender: { name: "A" },
 * }));
 * ```
 */
export const MessageSchema = v.pipe(
  jsonObject,
  v.strictObject({
    beacon: v.pipe(
      v.literal("0.1", PROBLEM.beacon),
      v.description('Protocol version of this message format: always "0.1".'),
    ),
    subject: requiredText(
      200,
      "one-line",
      "One-line summary for the reviewer: no line breaks or control characters.",
    ),
    body: requiredText(
      32768,
      "any",
      "The message itself, plain text for a human to read; line breaks allowed. Reviewers see " +
        "it as inert text: nothing in it is rendered as markup, followed or executed.",
    ),
    intent: v.pipe(
      v.picklist(INTENTS, PROBLEM.intent),
      v.description(
        "What the sender means the message as. It only helps reviewers sort: whatever the " +
          "intent, the Beacon stores the message for human review and takes no action.",
      ),
    ),
    sender: SenderSchema,
    language: v.exactOptional(
      v.pipe(
        v.string(PROBLEM.string),
        maxCodePoints(35),
        v.regex(LANGUAGE_TAG, PROBLEM.language),
        v.description(
          'Language of subject and body as a BCP 47 tag (RFC 5646), e.g. "en" or "pt-BR". ' +
            "Only the shape is checked, not the subtag registry.",
        ),
      ),
    ),
    identity: v.exactOptional(IdentitySchema),
  }, PROBLEM.object),
  v.title("beacon/0.1 message"),
  v.description(
    "A message from an autonomous agent to the human reviewers of a Beacon (protocol " +
      "beacon/0.1). It is stored for asynchronous human review; nothing more is promised: no " +
      "reply, no processing, no action. The Beacon never contacts anyone, so the format has no " +
      "contact, callback or URL field. beacon/0.1 is a closed format: members not defined " +
      "here are refused at every level, so a misspelled member is refused rather than " +
      "silently lost; new members come with a new protocol version. String lengths count " +
      "Unicode code points, and every string must be well-formed Unicode (no unpaired " +
      "surrogates).",
  ),
);

/**
 * A valid beacon/0.1 message, as {@linkcode checkMessage} returns it: a fresh object holding
 * exactly the members the sender sent.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { type BeaconMessage, checkMessage } from "./schema.ts";
 *
 * const message: BeaconMessage = {
 *   beacon: "0.1",
 *   subject: "Hello",
 *   body: "A first message.",
 *   intent: "introduction",
 *   sender: { name: "Example agent" },
 * };
 * assert.ok(checkMessage(message).ok);
 * ```
 */
export type BeaconMessage = v.InferOutput<typeof MessageSchema>;

/** One problem of a refused message: where (a schema path) and what (a fixed text). */
export interface Violation {
  /**
   * The dotted path of the offending member as the schema names it (`"sender.name"`,
   * `"identity.publicKey"`, `""` for the message itself). For a member the schema does not
   * know, the path of the object holding it: its name is submitted content and never repeated.
   */
  readonly field: string;
  /** Fixed human text, such as "is required" or "has an unknown member, the 3rd (…)". */
  readonly description: string;
}

/** Most violations reported for one message (a hostile body could hold thousands). */
export const MAX_VIOLATIONS = 20;

/**
 * The outcome of {@linkcode checkMessage}. On refusal, `violations` lists every problem found
 * (at most {@linkcode MAX_VIOLATIONS}), in schema order; `field` and `problem` are the first of
 * them. Nothing in a refusal ever holds submitted data.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import type { MessageCheck } from "./schema.ts";
 *
 * const refused: MessageCheck = {
 *   ok: false,
 *   field: "subject",
 *   problem: "is required",
 *   violations: [{ field: "subject", description: "is required" }],
 * };
 * assert.equal(refused.ok, false);
 * ```
 */
export type MessageCheck =
  | { ok: true; message: BeaconMessage }
  | { ok: false; field: string; problem: string; violations: readonly Violation[] };

const PARSE_CONFIG: v.Config<v.InferIssue<typeof MessageSchema>> = { abortEarly: false };

/** The members each closed object defines, by its path (for listing every unknown member). */
const KNOWN_MEMBERS: ReadonlyMap<string, ReadonlySet<string>> = new Map([
  ["", new Set(Object.keys(MessageSchema.pipe[1].entries))],
  ["sender", new Set(Object.keys(SenderSchema.pipe[1].entries))],
  ["identity", new Set(Object.keys(IdentitySchema.pipe[1].entries))],
]);

function ordinal(position: number): string {
  const tens = position % 100;
  if (tens >= 11 && tens <= 13) return `${position}th`;
  return position + (["th", "st", "nd", "rd"][position % 10] ?? "th");
}

const unknownMember = (position: number) =>
  `has an unknown member, the ${ordinal(position)} (beacon/0.1 is a closed format)`;

/**
 * Where and what one valibot issue is, in terms that never quote the input. valibot reports
 * only the first unknown member of a strict object, so that issue becomes one violation per
 * unknown member, each named by its position among the holding object's members (as parsed:
 * JavaScript lists integer-like names first): the sender can find it, and the Beacon never
 * repeats a name the sender chose.
 */
function violationsOf(issue: v.InferIssue<typeof MessageSchema>): {
  first: { field: string; problem: string };
  violations: Violation[];
} {
  const path = issue.path ?? [];
  // Path keys of `value` origin are the schema's own entry names; only a `key` origin item,
  // the last one, can carry a name the submitter chose.
  const keys = path.map((item) => String(item.key));
  const text = knownProblems.has(issue.message) ? issue.message : PROBLEM.invalid;
  const last = path.at(-1);
  if (last === undefined || last.origin !== "key" || issue.input === undefined) {
    const problem = last?.origin === "key" ? PROBLEM.required : text;
    const field = keys.join(".");
    return { first: { field, problem }, violations: [{ field, description: problem }] };
  }
  keys.pop();
  const field = keys.join(".");
  const known = KNOWN_MEMBERS.get(field) ?? new Set<string>();
  const violations: Violation[] = [];
  Object.keys(last.input as Record<string, unknown>).forEach((name, index) => {
    if (!known.has(name)) violations.push({ field, description: unknownMember(index + 1) });
  });
  return { first: { field, problem: PROBLEM.unknownField }, violations };
}

/**
 * Validates a parsed JSON value as a beacon/0.1 message, reporting every problem (bounded).
 *
 * `field` names a member the schema defines, never one the submitter invented: for an unknown
 * member it is the path of the object holding it (`""`, `"sender"`, `"identity"`); the first
 * such problem reads "has a field that is not allowed (beacon/0.1 is a closed format)", and its
 * violation "has an unknown member, the 3rd (…)", counting the holding object's members.
 * Member names such as `__proto__` or `constructor` are ordinary unknown members. Every text is
 * one of a fixed set such as "is required", "must be a string", "must not be empty",
 * "must be at most 200 characters".
 *
 * @param value Any value, typically the result of parsing a request body.
 * @returns The typed message, or every place and reason it was refused.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { checkMessage } from "./schema.ts";
 *
 * const check = checkMessage({ beacon: "0.1", subject: "Hi", body: "Hello", intent: "other" });
 * assert.equal(check.ok, false);
 * if (!check.ok) assert.equal(check.field, "sender");
 * ```
 */
export function checkMessage(value: unknown): MessageCheck {
  const result = v.safeParse(MessageSchema, value, PARSE_CONFIG);
  if (result.success) return { ok: true, message: result.output };
  const seen = new Set<string>();
  const violations: Violation[] = [];
  let first: { field: string; problem: string } | undefined;
  for (const issue of result.issues) {
    const found = violationsOf(issue);
    first ??= found.first;
    for (const violation of found.violations) {
      const key = `${violation.field}\n${violation.description}`;
      if (seen.has(key)) continue;
      seen.add(key);
      violations.push(violation);
      if (violations.length === MAX_VIOLATIONS) {
        return { ok: false, field: first.field, problem: first.problem, violations };
      }
    }
  }
  return { ok: false, field: first!.field, problem: first!.problem, violations };
}
