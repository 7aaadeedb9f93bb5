/**
 * The Ed25519 encodings that must never count as a signer's key: the 8 points of small order
 * (the torsion subgroup, RFC 8032 §5.1 cofactor 8) in their canonical encodings, and the
 * non-canonical encodings of some of them (y ≥ p, or x = 0 with the sign bit set), which lenient
 * verifiers decode to the same points. Written out by hand from the curve's definition (they are
 * the cases studied in "Taming the many EdDSAs", Chalkias et al. 2020), not produced by the
 * code under test.
 *
 * @module
 */

/** Canonical encodings of the 8 small-order points, hex, with each point's order. */
export const SMALL_ORDER_POINTS: readonly { hex: string; order: number }[] = [
  { hex: "0100000000000000000000000000000000000000000000000000000000000000", order: 1 },
  { hex: "ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f", order: 2 },
  { hex: "0000000000000000000000000000000000000000000000000000000000000000", order: 4 },
  { hex: "0000000000000000000000000000000000000000000000000000000000000080", order: 4 },
  { hex: "26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05", order: 8 },
  { hex: "26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc85", order: 8 },
  { hex: "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a", order: 8 },
  { hex: "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac03fa", order: 8 },
];

/** Non-canonical encodings of small-order points, hex. */
export const NON_CANONICAL_SMALL_ORDER: readonly string[] = [
  "0100000000000000000000000000000000000000000000000000000000000080", // x = 0, sign bit: order 1
  "ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff", // x = 0, sign bit: order 2
  "edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f", // y = p: order 4
  "edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff", // y = p, sign bit
  "eeffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f", // y = p + 1: order 1
  "eeffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff", // y = p + 1, sign bit
];

/** A non-canonical encoding (y = p + 3) of a point of large order. */
export const NON_CANONICAL_LARGE_ORDER =
  "f0ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f";

/** Hex to bytes. */
export function fromHex(hex: string): Uint8Array<ArrayBuffer> {
  return Uint8Array.from(hex.match(/../g) ?? [], (pair) => parseInt(pair, 16));
}

/**
 * A 64-byte signature R ‖ S with R the given encoding and S = 0: under a small-order key it
 * passes the cofactored equation [8][S]B = [8]R + [8][k]A of every lenient verifier, for every
 * message, because both sides are the neutral point.
 */
export function zeroSignature(rHex: string): Uint8Array<ArrayBuffer> {
  const signature = new Uint8Array(64);
  signature.set(fromHex(rHex));
  return signature;
}
