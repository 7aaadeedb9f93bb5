/**
 * The published JSON Schema of a beacon/0.1 message (`schemas/message.schema.json`), built from
 * the one valibot definition in `schema.ts` with the examples of `examples.ts`. It lives apart
 * from both so that the validator never depends on its own examples.
 *
 * @module
 */
import { toJsonSchema } from "@valibot/to-json-schema";
import { jsonSchemaFragment, MessageSchema } from "./schema.ts";
import { exampleMessages } from "./examples.ts";

/**
 * The JSON Schema (draft-07) of a beacon/0.1 message, derived from {@linkcode MessageSchema}
 * with `title`, `description` and the examples of `examples.ts` as `examples`. This is exactly
 * what `generate_schema.ts` writes to `schemas/message.schema.json`. A fresh object each call.
 *
 * Draft-07 because every common validator supports it; the keywords used here (`type`,
 * `properties`, `required`, `additionalProperties`, `const`, `enum`, `minLength`,
 * `maxLength`, `pattern`) mean the same in 2020-12.
 *
 * @returns The JSON Schema as a plain JSON object.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { messageJsonSchema } from "./json_schema.ts";
 *
 * assert.equal(messageJsonSchema().title, "beacon/0.1 message");
 * ```
 */
export function messageJsonSchema(): Record<string, unknown> {
  const generated = toJsonSchema(MessageSchema, {
    target: "draft-07",
    // The root and each nested object are pipes of two schemas (the array guard, then the
    // strict object); "output" converts from the last schema on, the strict object.
    typeMode: "output",
    errorMode: "throw",
    overrideAction: ({ valibotAction, jsonSchema }) => {
      const fragment = jsonSchemaFragment(valibotAction);
      return fragment === undefined ? undefined : { ...jsonSchema, ...fragment };
    },
  });
  const { $schema, title, description, ...rest } = generated;
  return { $schema, title, description, ...rest, examples: structuredClone(exampleMessages) };
}
