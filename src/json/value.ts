/**
 * JSON values as the project handles them after a parse: the value types, the object guard and
 * the code-point length bound that JSON Schema's `maxLength` means (RFC 8259 §7 strings, counted
 * in Unicode code points, not UTF-16 units).
 *
 * @module
 */

/** A value that JSON can represent; what a successful parse returns. */
export type JsonValue =
  | null
  | boolean
  | number
  | string
  | JsonValue[]
  | { [key: string]: JsonValue };

/** A JSON object as parsed. */
export type JsonObject = { [key: string]: JsonValue };

/**
 * Whether a value is a JSON object (not an array, not null). valibot's and most schema checks
 * accept arrays as objects, so callers check this first.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { isJsonObject } from "./value.ts";
 *
 * assert.ok(isJsonObject({}));
 * assert.ok(!isJsonObject([]));
 * assert.ok(!isJsonObject(null));
 * ```
 */
export function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * Whether `text` has at most `limit` Unicode code points, giving up early past it (so a long
 * string costs little). A lone surrogate counts as one code point, as JSON Schema counts it.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { codePointLengthWithin } from "./value.ts";
 *
 * assert.ok(codePointLengthWithin("héllo", 5));
 * assert.ok(codePointLengthWithin("😀😀", 2));
 * assert.ok(!codePointLengthWithin("😀😀😀", 2));
 * ```
 */
export function codePointLengthWithin(text: string, limit: number): boolean {
  // A code point is one or two UTF-16 units, so these two bounds decide most strings at once.
  if (text.length <= limit) return true;
  if (text.length > limit * 2) return false;
  let count = 0;
  for (const _ of text) if (++count > limit) return false;
  return true;
}
