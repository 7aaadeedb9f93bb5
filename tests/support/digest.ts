/**
 * The receipt digest computed independently of the Beacon's own SHA-256 (with WebCrypto), so
 * tests check the Beacon against a second implementation.
 *
 * @module
 */

/** `sha256:<lowercase hex>` of `bytes`. */
export async function sha256(bytes: Uint8Array<ArrayBuffer>): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  return "sha256:" + Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join("");
}
