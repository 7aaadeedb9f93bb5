/**
 * Checking `params` members of A2A request messages (A2A §3.3.2, §13.4: validate all input;
 * missing REQUIRED fields are -32602 and SHOULD name the field).
 *
 * Conventions shared by every method, following ProtoJSON (A2A §5.5, §5.7):
 *
 * - A member that is absent or `null` is unset (ProtoJSON reads `null` as the default).
 * - Members we do not know are ignored (A2A §5.7 SHOULD), so a newer client still works.
 * - Field paths in errors are built from the names below and array indices only; a path never
 *   contains a key the client chose, and a problem text never contains a value.
 *
 * @module
 */
import type { JsonValue } from "../json/value.ts";
import { invalidParams } from "./errors.ts";
import { codePointLengthWithin, isJsonObject, type JsonObject } from "../json/value.ts";

/** The largest int32 (ProtoJSON integer fields of A2A are int32). */
export const INT32_MAX = 2_147_483_647;

/** The member `name` of `object`, or undefined when absent or null (ProtoJSON: unset). */
export function member(object: JsonObject, name: string): JsonValue | undefined {
  if (!Object.hasOwn(object, name)) return undefined;
  const value = object[name];
  return value === null ? undefined : value;
}

/** An optional string member; throws -32602 naming `path` when it is not a string. */
export function optionalString(object: JsonObject, name: string, path: string): string | undefined {
  const value = member(object, name);
  if (value !== undefined && typeof value !== "string") {
    throw invalidParams(path, "must be a string");
  }
  return value;
}

/** An optional boolean member. */
export function optionalBoolean(
  object: JsonObject,
  name: string,
  path: string,
): boolean | undefined {
  const value = member(object, name);
  if (value !== undefined && typeof value !== "boolean") {
    throw invalidParams(path, "must be a boolean");
  }
  return value;
}

/** An optional object member (a proto message or a `Struct`). */
export function optionalObject(
  object: JsonObject,
  name: string,
  path: string,
): JsonObject | undefined {
  const value = member(object, name);
  if (value !== undefined && !isJsonObject(value)) throw invalidParams(path, "must be an object");
  return value;
}

/** An optional array of strings. */
export function optionalStringArray(object: JsonObject, name: string, path: string): void {
  const value = member(object, name);
  if (value === undefined) return;
  if (!Array.isArray(value)) throw invalidParams(path, "must be an array of strings");
  value.forEach((item, index) => {
    if (typeof item !== "string") throw invalidParams(`${path}[${index}]`, "must be a string");
  });
}

/**
 * An optional int32 member in `[min, max]`. ProtoJSON also accepts integers written as
 * strings ("5"); the Beacon accepts only JSON numbers, as every A2A SDK sends them.
 */
export function optionalInteger(
  object: JsonObject,
  name: string,
  path: string,
  min: number,
  max: number,
): number | undefined {
  const value = member(object, name);
  if (value === undefined) return undefined;
  if (typeof value !== "number" || !Number.isInteger(value)) {
    throw invalidParams(path, "must be an integer");
  }
  if (value < min || value > max) {
    throw invalidParams(path, `must be from ${min} to ${max}`);
  }
  return value;
}

/** A required, non-empty string member of at most `maxLength` code points. */
export function requiredId(
  object: JsonObject,
  name: string,
  path: string,
  maxLength?: number,
): string {
  const value = optionalString(object, name, path);
  if (value === undefined) throw invalidParams(path, "is required");
  if (value === "") throw invalidParams(path, "must not be empty");
  if (maxLength !== undefined && !codePointLengthWithin(value, maxLength)) {
    throw invalidParams(path, `must be at most ${maxLength} characters`);
  }
  return value;
}

/**
 * `tenant` (A2A §8.3.2): clients MUST send the chosen interface's tenant or omit it. The
 * Beacon's interface declares none, so only an empty or absent tenant is one it issued; a
 * non-empty tenant names a partition that does not exist here, and accepting it would file the
 * request somewhere the client did not mean.
 */
export function checkTenant(params: JsonObject): void {
  const tenant = optionalString(params, "tenant", "tenant");
  if (tenant !== undefined && tenant !== "") {
    throw invalidParams("tenant", "must be empty: this interface declares no tenant");
  }
}

/** Every `TaskState` name (A2A §4.1, proto `TaskState`), in enum-number order. */
export const TASK_STATES = [
  "TASK_STATE_UNSPECIFIED",
  "TASK_STATE_SUBMITTED",
  "TASK_STATE_WORKING",
  "TASK_STATE_COMPLETED",
  "TASK_STATE_FAILED",
  "TASK_STATE_CANCELED",
  "TASK_STATE_INPUT_REQUIRED",
  "TASK_STATE_REJECTED",
  "TASK_STATE_AUTH_REQUIRED",
] as const;

/**
 * RFC 3339 `date-time` (§5.6), which ProtoJSON accepts for a `Timestamp` (A2A §5.6.1): a full
 * date, `T` (or `t`), a full time with optional fraction (at most nanoseconds), and `Z` or an
 * offset. Calendar validity is then checked with `Date`.
 */
const RFC3339 =
  /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.\d{1,9})?(?:[Zz]|[+-](\d{2}):(\d{2}))$/;

/**
 * Whether `text` is an RFC 3339 timestamp naming a real instant.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { isRfc3339 } from "./params.ts";
 *
 * assert.ok(isRfc3339("2026-01-01T00:00:00Z"));
 * assert.ok(!isRfc3339("2026-02-30T00:00:00Z"));
 * ```
 */
export function isRfc3339(text: string): boolean {
  const match = RFC3339.exec(text);
  if (match === null) return false;
  const [year, month, day, hour, minute, second] = match.slice(1, 7).map(Number);
  const offsetHours = match[7] === undefined ? 0 : Number(match[7]);
  const offsetMinutes = match[8] === undefined ? 0 : Number(match[8]);
  if (hour > 23 || minute > 59 || second > 60 || offsetHours > 23 || offsetMinutes > 59) {
    return false;
  }
  if (month < 1 || month > 12 || day < 1) return false;
  // Day 0 of the next month is the last day of this one. setUTCFullYear, unlike Date.UTC,
  // does not read years 0-99 as 1900-1999, so leap years stay right for every 4-digit year.
  const probe = new Date(0);
  probe.setUTCFullYear(year, month, 0);
  return day <= probe.getUTCDate();
}
