/**
 * A start under a new key continues the log, or is refused (docs/keys.md, "Rotating the key").
 *
 * When the store's latest tree head was signed by another key than the configured one, the start
 * is a rotation only if the operator names that key in `BEACON_PREVIOUS_SIGNING_KEYS` (its public
 * key, or its seed to co-sign). Then a rotation statement (src/signing/rotation.ts) is recorded
 * once, before anything is signed under the new key: the previous key vouches for the rows up to
 * the last one stored now, the new key for every row after. Two instances starting with the same
 * new key record one statement (the table is unique by new key); both read back the one that
 * stands. Otherwise the start is refused in one line naming the previous key's fingerprint and
 * the setting (`SigningKeyChanged`): the log never silently freezes. On a store no head was signed
 * over yet (heads off), the previous key is the named one whose signature the last row carries.
 *
 * A retired key never becomes current again: its statement bounds what it vouches for, and a
 * start under it would sign past that bound (what a copy of a leaked key would do).
 *
 * @module
 */
import { fromBase64url } from "../bytes.ts";
import { keyFingerprint } from "../signing/ed25519.ts";
import { parseSigningKey, type SigningKey, signingKeyFromSeed } from "../signing/key.ts";
import { latestHeadKey, SigningKeyChanged } from "../signing/key_change.ts";
import { KeyHistory, validRotations } from "../signing/key_history.ts";
import { IntakeSignatures } from "../signing/log_audit.ts";
import { rotationFromRow, type RotationStatement, signRotation } from "../signing/rotation.ts";
import { LogRows, type Statements } from "../store/log_rows.ts";
import { signedRowOf } from "./signed_row.ts";

/** What {@linkcode continueLog} needs. */
export interface ContinuityOptions {
  readonly statements: Statements;
  /** The configured key. */
  readonly key: SigningKey;
  /** `BEACON_PREVIOUS_SIGNING_KEYS`: base64url public keys or seeds, as given. */
  readonly previousKeys: readonly string[];
  /** The log's origin, which the statement names. */
  readonly origin: string;
  readonly now: () => number;
}

/** The previous key as named: its public key, and the key itself when its seed was given. */
async function named(
  entries: readonly string[],
  publicKey: string,
): Promise<{ key?: SigningKey } | undefined> {
  for (const entry of entries) {
    // A public key and a seed have the same form (43 base64url characters): an entry is the
    // previous key's seed when the public key it derives is that key (RFC 8032 §5.1.5).
    if (entry === publicKey) return {};
    let seed: Uint8Array;
    try {
      seed = parseSigningKey(entry, "BEACON_PREVIOUS_SIGNING_KEYS");
    } catch {
      continue;
    }
    const key = await signingKeyFromSeed(seed);
    if (key.publicKey === publicKey) return { key };
  }
  return undefined;
}

/**
 * The key that signed the log last when no tree head names one (heads off, as on Workers until its
 * scheduled handler runs, or a store never signed): the named key whose signature the last stored
 * row carries.
 */
async function lastRowKey(
  rows: LogRows,
  entries: readonly string[],
): Promise<{ publicKey: string; fingerprint: string } | undefined> {
  const last = await rows.lastSeq();
  if (last === 0 || entries.length === 0) return undefined;
  const [row] = await rows.signedRows(last, last);
  if (row === undefined) return undefined;
  const signed = signedRowOf(row);
  for (const entry of entries) {
    // An entry is a public key, or a seed whose public key it derives (see `named`).
    const candidates = [entry];
    try {
      candidates.push((await signingKeyFromSeed(parseSigningKey(entry))).publicKey);
    } catch {
      // not a seed's form
    }
    for (const publicKey of candidates) {
      if (fromBase64url(publicKey)?.length !== 32) continue;
      const check = new IntakeSignatures([publicKey]);
      if (await check.verifies(signed.fields, signed.stored)) {
        return { publicKey, fingerprint: await fingerprintOf(publicKey) };
      }
    }
  }
  return undefined;
}

async function fingerprintOf(publicKey: string): Promise<string> {
  const raw = fromBase64url(publicKey);
  return raw === undefined ? publicKey : await keyFingerprint(raw);
}

/**
 * Checks that the configured key may continue the log, recording a rotation statement when the
 * operator named the previous key.
 *
 * @returns The statement recorded or found for this key, if the log rotated to it.
 * @throws {SigningKeyChanged} When the key changed without the previous key named, or the
 *   configured key was retired.
 */
export async function continueLog(
  options: ContinuityOptions,
): Promise<RotationStatement | undefined> {
  const { statements, key, previousKeys, origin, now } = options;
  const rows = new LogRows(statements);
  let rotations = await validRotations((await rows.rotations()).map(rotationFromRow), origin);
  for (const { statement } of rotations.values()) {
    if (statement.previousKey === key.publicKey) {
      throw new SigningKeyChanged(
        await fingerprintOf(statement.newKey),
        key.fingerprint,
        `the configured key was retired by a rotation to it at seq ${statement.lastSeq}, and a ` +
          "retired key never signs again",
      );
    }
  }
  const history = KeyHistory.endingAt(key.publicKey, rotations);
  let latest = await latestHeadKey(rows);
  if (latest === undefined && !history.ranges.some((range) => range.retiredBy !== undefined)) {
    const signer = await lastRowKey(rows, previousKeys);
    if (signer !== undefined && signer.publicKey !== key.publicKey) latest = signer;
  }
  if (latest === undefined || history.keys().includes(latest.publicKey)) {
    return rotations.get(key.publicKey)?.statement;
  }
  const previous = await named(previousKeys, latest.publicKey);
  if (previous === undefined) {
    throw new SigningKeyChanged(
      latest.fingerprint,
      key.fingerprint,
      previousKeys.length === 0 ? undefined : "BEACON_PREVIOUS_SIGNING_KEYS does not name it",
    );
  }
  const statement = await signRotation(
    {
      previousKey: latest.publicKey,
      newKey: key.publicKey,
      lastSeq: await rows.lastSeq(),
      log: origin,
      createdAt: new Date(now()).toISOString(),
    },
    key,
    previous.key,
  );
  await rows.recordRotation(statement);
  rotations = await validRotations((await rows.rotations()).map(rotationFromRow), origin);
  const recorded = rotations.get(key.publicKey)?.statement;
  if (recorded === undefined || recorded.previousKey !== latest.publicKey) {
    // Another statement for this key stands (recorded by a writer, or for another previous key).
    throw new SigningKeyChanged(
      latest.fingerprint,
      key.fingerprint,
      "a rotation statement to the configured key from another key is recorded already",
    );
  }
  return recorded;
}
