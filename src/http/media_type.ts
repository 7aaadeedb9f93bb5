/**
 * Reading `Content-Type` (RFC 9110 §8.3.1): type/subtype are case-insensitive, parameters are
 * `name=value` pairs whose names are case-insensitive; quoted values are unquoted.
 *
 * @module
 */

/** A parsed media type. */
export interface MediaType {
  /** `type/subtype`, lowercase. */
  readonly essence: string;
  /** The `charset` parameter, lowercase, if present. */
  readonly charset: string | undefined;
}

/** Parses a `Content-Type` value; undefined when absent or malformed. */
export function parseMediaType(value: string | null): MediaType | undefined {
  if (value === null) return undefined;
  const parts = value.split(";");
  const essence = parts[0].trim().toLowerCase();
  if (!/^[a-z0-9!#$&^_.+-]+\/[a-z0-9!#$&^_.+-]+$/.test(essence)) return undefined;
  let charset: string | undefined;
  for (let i = 1; i < parts.length; i++) {
    const eq = parts[i].indexOf("=");
    if (eq < 0) continue;
    if (parts[i].slice(0, eq).trim().toLowerCase() !== "charset") continue;
    charset = parts[i].slice(eq + 1).trim().replace(/^"(.*)"$/, "$1").toLowerCase();
  }
  return { essence, charset };
}
