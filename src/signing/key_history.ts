/**
 * Which key vouches for which rows of the log, across rotations (./rotation.ts).
 *
 * A rotation statement retires its previous key at `lastSeq`: that key's intake signatures vouch
 * for rows up to there, and its heads may cover at most that many rows; the new key vouches for
 * every row after it. So the log is one chain across keys: the rows decide the leaves, whichever
 * key checked them, and each key's heads stop at its boundary. A row after a retired key's
 * boundary that only that key signed is never covered: a copy of a retired (leaked) key cannot
 * extend the log (docs/keys.md, "A leaked key").
 *
 * The history is read backwards from a key one trusts: the server from its configured key, a
 * verifier from the key it pinned. A statement counts only when the new key's signature verifies
 * (it is the key that continues the log) and it names this log; following one forwards, from
 * the previous key to the new, needs the previous key's signature too (`followTrust`).
 *
 * @module
 */
import { IntakeSignatures } from "./log_audit.ts";
import type { ReceiptSignature, SignedReceiptFields } from "./receipt.ts";
import { type RotationStatement, verifyRotation } from "./rotation.ts";

/** The rows one key vouches for: `seq` from `firstSeq` to `lastSeq` (Infinity: still current). */
export interface KeyRange {
  readonly publicKey: string;
  readonly firstSeq: number;
  readonly lastSeq: number;
  /** The statement that retired it, for a previous key. */
  readonly retiredBy?: RotationStatement;
}

/**
 * A previous key as the discovery document and the JWKS publish it: the rows its receipts and
 * heads may stand for, and when it was retired.
 */
export interface PreviousKey {
  readonly publicKey: string;
  /** `sha256:<hex>` of the raw key. */
  readonly fingerprint: string;
  readonly firstSeq: number;
  readonly lastSeq: number;
  /** The rotation statement's `createdAt`. */
  readonly retiredAt: string;
}

/** A statement that verifies, by its new key, and whether the previous key signed it too. */
export type ValidRotations = ReadonlyMap<
  string,
  { readonly statement: RotationStatement; readonly byPrevious: boolean }
>;

/**
 * The statements of `log` that verify, by new key (the first of each: the table's unique index
 * keeps one anyway).
 */
export async function validRotations(
  statements: readonly RotationStatement[],
  log: string,
): Promise<ValidRotations> {
  const valid = new Map<string, { statement: RotationStatement; byPrevious: boolean }>();
  for (const statement of statements) {
    if (statement.log !== log || valid.has(statement.newKey)) continue;
    const verdict = await verifyRotation(statement);
    if (verdict.valid) valid.set(statement.newKey, { statement, byPrevious: verdict.byPrevious });
  }
  return valid;
}

/**
 * The keys of a log, oldest first, each with the rows it vouches for.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { KeyHistory } from "./key_history.ts";
 *
 * const history = new KeyHistory([
 *   { publicKey: "A", firstSeq: 1, lastSeq: 5 },
 *   { publicKey: "B", firstSeq: 6, lastSeq: Infinity },
 * ]);
 * assert.deepEqual(history.keysFor(5), ["A"]);
 * assert.deepEqual(history.keysFor(6), ["B"]);
 * assert.ok(history.mayCover("A", 5) && !history.mayCover("A", 6) && history.mayCover("B", 9));
 * ```
 */
export class KeyHistory {
  readonly ranges: readonly KeyRange[];

  constructor(ranges: readonly KeyRange[]) {
    this.ranges = ranges;
  }

  /** Keys that each vouch for every row: a log without rotations. */
  static whole(keys: Iterable<string>): KeyHistory {
    return new KeyHistory([...keys].map((publicKey) => ({
      publicKey,
      firstSeq: 1,
      lastSeq: Infinity,
    })));
  }

  /**
   * The history that ends at `current`: its own rows after the statement that made it current,
   * the previous key's before, and so on back to the first key. A statement whose boundary is
   * past the later one's, or that names a key already met, ends the walk (it cannot be part of
   * one chain).
   */
  static endingAt(current: string, rotations: ValidRotations): KeyHistory {
    const ranges: KeyRange[] = [];
    const seen = new Set([current]);
    let key = current;
    let upper = Infinity;
    let retiredBy: RotationStatement | undefined;
    while (true) {
      const made = rotations.get(key)?.statement;
      const usable = made !== undefined && made.lastSeq <= upper && !seen.has(made.previousKey);
      ranges.unshift({
        publicKey: key,
        firstSeq: usable ? made.lastSeq + 1 : 1,
        lastSeq: upper,
        ...(retiredBy === undefined ? {} : { retiredBy }),
      });
      if (!usable) break;
      seen.add(made.previousKey);
      key = made.previousKey;
      upper = made.lastSeq;
      retiredBy = made;
    }
    return new KeyHistory(ranges);
  }

  /** The key that signs now: the last one. */
  get current(): string {
    return this.ranges.at(-1)!.publicKey;
  }

  /** Every key, oldest first. */
  keys(): string[] {
    return this.ranges.map((range) => range.publicKey);
  }

  /** The keys whose intake signatures vouch for row `seq`. */
  keysFor(seq: number): string[] {
    return this.ranges.filter((r) => seq >= r.firstSeq && seq <= r.lastSeq).map((r) => r.publicKey);
  }

  /** Whether a head of `publicKey` over `treeSize` rows may count: not past the key's boundary. */
  mayCover(publicKey: string, treeSize: number): boolean {
    return this.ranges.some((r) => r.publicKey === publicKey && treeSize <= r.lastSeq);
  }

  /** The range of a retired key (one with a boundary), if `publicKey` is one. */
  retired(publicKey: string): KeyRange | undefined {
    return this.ranges.find((r) => r.publicKey === publicKey && r.lastSeq !== Infinity);
  }
}

/**
 * What a verifier that pinned `trusted` keys may trust: from each pinned key, forwards through
 * statements its holder signed (the previous key's signature), then the history that ends at the
 * newest key reached (a new key vouches for the rows before it). Without statements, or for
 * pinned keys outside the chain, each pinned key vouches for every row, as before rotations.
 *
 * @returns The history, and the statements followed forwards (to say so).
 */
export function followTrust(
  trusted: ReadonlySet<string>,
  rotations: ValidRotations,
): { history: KeyHistory; followed: RotationStatement[] } {
  const byPrevious = new Map<string, RotationStatement>();
  for (const { statement, byPrevious: signed } of rotations.values()) {
    if (signed && !byPrevious.has(statement.previousKey)) {
      byPrevious.set(statement.previousKey, statement);
    }
  }
  const followed: RotationStatement[] = [];
  let chain: KeyHistory | undefined;
  for (const key of trusted) {
    let tip = key;
    const path: RotationStatement[] = [];
    const seen = new Set([tip]);
    for (let next = byPrevious.get(tip); next !== undefined; next = byPrevious.get(tip)) {
      if (seen.has(next.newKey)) break;
      path.push(next);
      tip = next.newKey;
      seen.add(tip);
    }
    const history = KeyHistory.endingAt(tip, rotations);
    if (history.ranges.length > (chain?.ranges.length ?? 1)) {
      chain = history;
      followed.splice(0, followed.length, ...path);
    }
  }
  if (chain === undefined) return { history: KeyHistory.whole(trusted), followed };
  const inChain = new Set(chain.keys());
  const others = [...trusted].filter((key) => !inChain.has(key));
  return {
    history: new KeyHistory([...KeyHistory.whole(others).ranges, ...chain.ranges]),
    followed,
  };
}

/** A row's stored intake signature with what it signed and where it stands. */
export interface SignedRow {
  readonly seq: number;
  readonly fields: SignedReceiptFields;
  readonly stored: ReceiptSignature | undefined;
}

/**
 * {@linkcode IntakeSignatures} by row: each row is checked under the keys that vouch for its
 * `seq` only, so a row signed by a retired key after its boundary does not verify.
 */
export class RangedIntakeSignatures {
  readonly #history: KeyHistory;
  readonly #checkers = new Map<string, IntakeSignatures>();

  constructor(history: KeyHistory) {
    this.#history = history;
  }

  #checker(keys: readonly string[]): IntakeSignatures {
    const name = keys.join(",");
    let checker = this.#checkers.get(name);
    if (checker === undefined) this.#checkers.set(name, checker = new IntakeSignatures(keys));
    return checker;
  }

  /** Whether one row's signature verifies under a key that vouches for its `seq`. */
  verifies(row: SignedRow): Promise<boolean> {
    return this.#checker(this.#history.keysFor(row.seq)).verifies(row.fields, row.stored);
  }

  /** One verdict per row, in order; runs of rows under the same keys are checked together. */
  async verifiesAll(rows: readonly SignedRow[]): Promise<boolean[]> {
    const verdicts: boolean[] = [];
    for (let at = 0; at < rows.length;) {
      const keys = this.#history.keysFor(rows[at].seq);
      const name = keys.join(",");
      let end = at + 1;
      while (end < rows.length && this.#history.keysFor(rows[end].seq).join(",") === name) end++;
      verdicts.push(...await this.#checker(keys).verifiesAll(rows.slice(at, end)));
      at = end;
    }
    return verdicts;
  }

  /**
   * The retired key whose signature this row carries although it lies past that key's boundary
   * (a copy of a retired key at work), or undefined. Asked only of a row that did not verify.
   */
  async retiredSigner(row: SignedRow): Promise<KeyRange | undefined> {
    for (const range of this.#history.ranges) {
      if (range.lastSeq === Infinity || row.seq <= range.lastSeq) continue;
      if (await this.#checker([range.publicKey]).verifies(row.fields, row.stored)) return range;
    }
    return undefined;
  }
}
