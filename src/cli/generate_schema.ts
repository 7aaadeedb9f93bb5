/**
 * Generates `schemas/message.schema.json` from the valibot message schema, so the published
 * JSON Schema can never drift from the validator the Beacon runs (a test compares the committed
 * file with {@linkcode renderMessageSchema}).
 *
 * ```sh
 * deno run src/cli/generate_schema.ts                                # print to stdout
 * deno run --allow-write=schemas src/cli/generate_schema.ts --write  # update the file
 * ```
 *
 * @module
 */

import { messageJsonSchema } from "../message/json_schema.ts";

/**
 * Where the generated schema is committed, resolved from this module so the script works from
 * any working directory.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { MESSAGE_SCHEMA_URL } from "./generate_schema.ts";
 *
 * assert.ok(MESSAGE_SCHEMA_URL.pathname.endsWith("/schemas/message.schema.json"));
 * ```
 */
export const MESSAGE_SCHEMA_URL: URL = new URL(
  "../../schemas/message.schema.json",
  import.meta.url,
);

/**
 * The exact text of `schemas/message.schema.json`: the JSON Schema with 2-space indentation
 * and a trailing newline (the layout `deno fmt` keeps unchanged).
 *
 * @returns The file content.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { renderMessageSchema } from "./generate_schema.ts";
 *
 * assert.equal(JSON.parse(renderMessageSchema()).title, "beacon/0.1 message");
 * ```
 */
export function renderMessageSchema(): string {
  return JSON.stringify(messageJsonSchema(), null, 2) + "\n";
}

if (import.meta.main) {
  const text = renderMessageSchema();
  if (Deno.args.includes("--write")) {
    await Deno.writeTextFile(MESSAGE_SCHEMA_URL, text);
    console.error(`wrote ${MESSAGE_SCHEMA_URL.pathname}`);
  } else {
    await Deno.stdout.write(new TextEncoder().encode(text));
  }
}
