/**
 * The log's checkpoints as C2SP signed notes (c2sp.org/tlog-checkpoint, c2sp.org/signed-note),
 * the format Go's checksum database, Sigstore, Sigsum and the witness network publish:
 *
 * ```text
 * beacon.example/beacon/0.1/log
 * 5
 * 4XZ0cJrqYwR3vbUe7z6FJ8v7TT6r7sX0oH6mXV2u2lE=
 *
 * — beacon.example/beacon/0.1/log Az3grlVgI0n1xTGnGHM…
 * ```
 *
 * The body is the origin (the log's fixed name), the tree size in decimal and the RFC 6962 root in
 * standard base64, each ending in a newline. A signature line is an em dash, the key name, and
 * base64 of the key id (the first 4 bytes of SHA-256(name ‖ "\n" ‖ 0x01 ‖ public key), 0x01 being
 * the Ed25519 signature type) followed by the 64-byte Ed25519 signature over the body. The key
 * name is the origin (tlog-checkpoint: "the key name SHOULD be the origin").
 *
 * @module
 */
import { base64, fromBase64, fromBase64url, sha256 } from "../bytes.ts";
import { verifyEd25519 } from "./ed25519.ts";

/** The signature type of Ed25519 in signed notes (c2sp.org/signed-note, "Signature types"). */
const ED25519_TYPE = 0x01;

const utf8 = new TextEncoder();

/** Whether `name` may be a note key name and a checkpoint origin: printable, no space, no `+`. */
export function isNoteName(name: string): boolean {
  return name.length > 0 && name.length <= 256 && /^[\x21-\x2a\x2c-\x7e]+$/.test(name);
}

/** The 4-byte key id of an Ed25519 key named `name` (c2sp.org/signed-note). */
export function noteKeyId(name: string, publicKey: Uint8Array): Uint8Array {
  const input = new Uint8Array([...utf8.encode(name + "\n"), ED25519_TYPE, ...publicKey]);
  return sha256(input).subarray(0, 4);
}

/**
 * The verifier key of a note signer in the text form Go's `note.NewVerifier` and the witness
 * tooling read: `<name>+<key id, 8 hex digits>+<base64 of 0x01 ‖ public key>`.
 *
 * @param name The key name (the log's origin).
 * @param publicKey The raw Ed25519 public key in base64url, as the discovery document gives it.
 * @throws {RangeError} When the name or the key cannot be a note key.
 */
export function noteVerifierKey(name: string, publicKey: string): string {
  const raw = fromBase64url(publicKey);
  if (!isNoteName(name) || raw?.length !== 32) {
    throw new RangeError("Cannot name a note key: bad name or public key");
  }
  const id = Array.from(noteKeyId(name, raw), (byte) => byte.toString(16).padStart(2, "0")).join(
    "",
  );
  return `${name}+${id}+${base64(new Uint8Array([ED25519_TYPE, ...raw]))}`;
}

/** The body of a checkpoint (c2sp.org/tlog-checkpoint): origin, size, base64 root. */
export function checkpointBody(origin: string, size: number, root: Uint8Array): string {
  return `${origin}\n${size}\n${base64(root)}\n`;
}

/**
 * Signs a checkpoint body as a note under `origin`: the signature line's base64 (key id and
 * signature), which is what is stored; {@linkcode checkpointNote} assembles the note.
 */
export async function signCheckpointNote(
  privateKey: CryptoKey,
  publicKey: string,
  origin: string,
  body: string,
): Promise<string> {
  const raw = fromBase64url(publicKey)!;
  const signature = new Uint8Array(
    await crypto.subtle.sign("Ed25519", privateKey, utf8.encode(body)),
  );
  return base64(new Uint8Array([...noteKeyId(origin, raw), ...signature]));
}

/** The signed note: the body, a blank line, and the signature line. */
export function checkpointNote(origin: string, body: string, signature: string): string {
  return `${body}\n\u2014 ${origin} ${signature}\n`;
}

/**
 * Whether `signature` (a signature line's base64: key id and Ed25519 signature) is the key's
 * signature over `body` as a note of the key named `name`. Never throws.
 */
export async function verifyNoteSignature(
  publicKey: Uint8Array<ArrayBuffer>,
  name: string,
  body: string,
  signature: string,
): Promise<boolean> {
  const signed = fromBase64(signature);
  if (signed === undefined) return false;
  const id = noteKeyId(name, publicKey);
  if (signed.length !== 68 || !signed.subarray(0, 4).every((byte, i) => byte === id[i])) {
    return false;
  }
  return await verifyEd25519(publicKey, utf8.encode(body), signed.slice(4));
}

/** A checkpoint as read from a note whose signature verified. */
export interface VerifiedCheckpoint {
  readonly origin: string;
  readonly size: number;
  readonly root: Uint8Array;
}

/**
 * Opens a checkpoint note signed by the key named `origin` (raw Ed25519 key, base64url):
 * the checkpoint when the note is well formed, a signature line of that key verifies over its
 * body, and the body names that origin; otherwise undefined. Lines of other keys are ignored.
 * Never throws.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { base64url } from "../bytes.ts";
 * import { checkpointBody, checkpointNote, openCheckpointNote, signCheckpointNote } from "./note.ts";
 *
 * const keys = await crypto.subtle.generateKey("Ed25519", false, ["sign", "verify"]) as CryptoKeyPair;
 * const publicKey = base64url(new Uint8Array(await crypto.subtle.exportKey("raw", keys.publicKey)));
 * const body = checkpointBody("example.org/log", 3, new Uint8Array(32));
 * const signature = await signCheckpointNote(keys.privateKey, publicKey, "example.org/log", body);
 * const note = checkpointNote("example.org/log", body, signature);
 * assert.equal((await openCheckpointNote(note, "example.org/log", publicKey))?.size, 3);
 * assert.equal(await openCheckpointNote(note.replace("\n3\n", "\n4\n"), "example.org/log", publicKey), undefined);
 * ```
 */
export async function openCheckpointNote(
  note: string,
  origin: string,
  publicKey: string,
): Promise<VerifiedCheckpoint | undefined> {
  const raw = fromBase64url(publicKey);
  const split = note.lastIndexOf("\n\n");
  if (raw?.length !== 32 || split < 0 || !note.endsWith("\n")) return undefined;
  const body = note.slice(0, split + 1);
  let verified = false;
  for (const line of note.slice(split + 2, -1).split("\n")) {
    const match = /^\u2014 (\S+) (\S+)$/.exec(line);
    if (match === null) return undefined;
    if (match[1] === origin && await verifyNoteSignature(raw, origin, body, match[2])) {
      verified = true;
    }
  }
  const lines = body.split("\n");
  if (!verified || lines[0] !== origin || !/^(?:0|[1-9][0-9]{0,15})$/.test(lines[1] ?? "")) {
    return undefined;
  }
  const root = fromBase64(lines[2] ?? "");
  const size = Number(lines[1]);
  if (!Number.isSafeInteger(size) || root?.length !== 32) return undefined;
  return { origin, size, root };
}
