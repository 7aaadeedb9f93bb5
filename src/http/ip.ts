/**
 * IP address literals: dotted-quad IPv4 and RFC 4291 IPv6, read by the source key and the `Host`
 * grammar alike.
 *
 * @module
 */

/** The dotted-quad IPv4 address `text`, or undefined (leading zeros refused). */
export function parseIPv4(text: string): string | undefined {
  // One pass over the characters (no split, no regular expression): it runs on every request.
  let parts = 0;
  let digits = 0;
  let octet = 0;
  for (let i = 0; i <= text.length; i++) {
    const c = i === text.length ? DOT : text.charCodeAt(i);
    if (c === DOT) {
      if (digits === 0 || ++parts > 4) return undefined;
      digits = 0;
      octet = 0;
    } else if (c >= DIGIT_0 && c <= DIGIT_0 + 9) {
      // Leading zeros are refused: some parsers read them as octal (CVE-2021-29923 confusion).
      if (digits > 0 && octet === 0) return undefined;
      octet = octet * 10 + (c - DIGIT_0);
      if (++digits > 3 || octet > 255) return undefined;
    } else {
      return undefined;
    }
  }
  return parts === 4 ? text : undefined;
}

const DOT = 0x2e;
const DIGIT_0 = 0x30;

/** Parses an IPv6 address (RFC 4291 §2.2, including an embedded IPv4 tail) into 8 groups. */
export function parseIPv6(text: string): number[] | undefined {
  if (text.length > 45 || !text.includes(":")) return undefined;
  let tail: number[] = [];
  let head = text;
  const lastColon = text.lastIndexOf(":");
  const maybeV4 = text.slice(lastColon + 1);
  if (maybeV4.includes(".")) {
    const v4 = parseIPv4(maybeV4);
    if (v4 === undefined) return undefined;
    const b = v4.split(".").map(Number);
    tail = [(b[0] << 8) | b[1], (b[2] << 8) | b[3]];
    head = text.slice(0, lastColon + 1) + "0"; // placeholder keeps the split shape
  }
  const halves = head.split("::");
  if (halves.length > 2) return undefined;
  const parse = (part: string): number[] | undefined => {
    if (part === "") return [];
    const out: number[] = [];
    for (const group of part.split(":")) {
      if (!/^[0-9a-fA-F]{1,4}$/.test(group)) return undefined;
      out.push(parseInt(group, 16));
    }
    return out;
  };
  const left = parse(halves[0]);
  const right = halves.length === 2 ? parse(halves[1]) : [];
  if (left === undefined || right === undefined) return undefined;
  if (tail.length > 0) (right.length > 0 ? right : left).pop();
  const total = left.length + right.length + tail.length;
  if (halves.length === 1 && total !== 8) return undefined;
  if (halves.length === 2 && total > 7) return undefined;
  const zeros = new Array(8 - total).fill(0);
  return [...left, ...zeros, ...right, ...tail];
}
