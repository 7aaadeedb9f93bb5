/**
 * The one audit loop over the submission log: the server's head signer (./signer.ts) and
 * `review verify` both walk the rows through it, so both judge a row alike. Per row, in `seq`
 * order, it says what {@linkcode LogWalk.check} finds (a gap, a row that cannot be a leaf, a row
 * the Beacon did not acknowledge) and gives the leaf; the signer stops at the first finding (no
 * head covers it), `review verify` reports every one.
 *
 * ## Which rows the Beacon acknowledged
 *
 * A row is acknowledged when its stored intake signature verifies under a key that vouches for its
 * `seq` (src/signing/key_history.ts: a retired key vouches for rows up to its rotation boundary
 * only; docs/protocol-0.1.md §6.2–6.4). Rows before the first `seq` that must carry one
 * (`intakeSignaturesFrom`, src/signing/log_audit.ts) are exempt. A caller that knows what it
 * committed may say so first ({@linkcode Acknowledgement.committed}): a row that reads exactly as
 * committed needs no signature check (src/signing/committed.ts); any other is checked by its
 * stored signature, so the verdicts are the same either way.
 *
 * @module
 */
import type { KeyRange, RangedIntakeSignatures, SignedRow } from "../signing/key_history.ts";
import type { LogRow, LogWalk, RootRecord, RowFinding } from "../signing/log_audit.ts";

/** Where the loop reads the rows from, and how it sees one. */
export interface AuditSource<R> {
  /**
   * The rows after the walk's size, in `seq` order, a page at a time. A page is read when the
   * caller has taken the previous one's rows, so a source may start each page where the walk is.
   */
  readonly pages: AsyncIterable<R[]>;
  /** The members its leaf is made of. */
  readonly logRow: (row: R) => LogRow;
  /** Its `seq`, its five signed members as it reads now, and its stored intake signature. */
  readonly signedRow: (row: R) => SignedRow;
  /**
   * Rows `low` to `high` read again with their stored signatures, when the pages carry none (the
   * server's pages do not: most of their rows are judged as committed). Without it, a page's rows
   * carry their signatures.
   */
  readonly withSignatures?: (low: number, high: number) => Promise<R[]>;
}

/** The rule that says whether the Beacon acknowledged a row. */
export interface Acknowledgement<R> {
  /** The stored intake signatures, each checked under the keys that vouch for its `seq`. */
  readonly intake: RangedIntakeSignatures;
  /**
   * The first `seq` judged: rows before it need no signature (stored before intake signatures
   * existed, or covered by a head of the log's keys already). `Infinity`: none is judged.
   */
  readonly from: number;
  /** Whether a row reads exactly as this process committed it (then it needs no check). */
  readonly committed?: (row: R) => boolean;
}

/** One row as the loop judged it. */
export interface AuditedRow<R> {
  /** The row as judged: read again with its stored signature where that had to be checked. */
  readonly row: R;
  readonly seq: number;
  /** What is wrong with it, in the walk's order; empty when nothing is. */
  readonly findings: readonly RowFinding[];
  /** Its leaf hash; undefined when its columns cannot make one. */
  readonly leaf?: Uint8Array;
  /**
   * Where it is unacknowledged: the retired key whose signature it carries past that key's
   * boundary (a copy of a retired key at work), if that is why.
   */
  readonly retired?: KeyRange;
}

/**
 * The rows of `source` in order, each checked by `walk` against `rule`. The caller appends each
 * row it takes (`walk.append`) before asking for the next: the walk's gap check continues from
 * the last row appended. Stopping early (leaving the loop) reads no further.
 *
 * @param walk The walk the rows continue.
 * @param source The rows.
 * @param rule Which rows the Beacon acknowledged.
 */
export async function* auditRows<R, E extends RootRecord>(
  walk: LogWalk<E>,
  source: AuditSource<R>,
  rule: Acknowledgement<R>,
): AsyncGenerator<AuditedRow<R>> {
  for await (const page of source.pages) {
    const verdicts = await acknowledged(page, source, rule);
    for (let at = 0; at < page.length; at++) {
      const row = page[at];
      const logRow = source.logRow(row);
      const { findings, leaf } = walk.check(logRow, verdicts[at]);
      const retired = verdicts[at]
        ? undefined
        : await rule.intake.retiredSigner(source.signedRow(row));
      yield { row, seq: logRow.seq, findings, leaf, retired };
    }
  }
}

/**
 * Whether the Beacon acknowledged each row of a page as it now reads, with the rows rewritten in
 * place where their stored signature had to be read. The rows to check are checked together, so
 * that a whole batch costs one root (`verifiesAll`).
 */
async function acknowledged<R>(
  rows: R[],
  source: AuditSource<R>,
  rule: Acknowledgement<R>,
): Promise<boolean[]> {
  const verdicts = new Array<boolean>(rows.length).fill(true);
  const unknown: number[] = [];
  for (let at = 0; at < rows.length; at++) {
    if (source.logRow(rows[at]).seq < rule.from) continue;
    // A row that reads otherwise than this process committed it is judged by its stored
    // signature, not held back: after a writer deleted the newest rows, SQLite hands their
    // `seq`s to the next genuine rows, which carry signatures of their own.
    if (rule.committed?.(rows[at]) !== true) unknown.push(at);
  }
  if (unknown.length === 0) return verdicts;
  let checked: (R | undefined)[] = unknown.map((at) => rows[at]);
  if (source.withSignatures !== undefined) {
    const signed = await source.withSignatures(
      source.logRow(rows[unknown[0]]).seq,
      source.logRow(rows[unknown.at(-1)!]).seq,
    );
    const bySeq = new Map(signed.map((row) => [source.logRow(row).seq, row]));
    // A row gone or changed since the page was read is judged as it reads now.
    checked = unknown.map((at) => bySeq.get(source.logRow(rows[at]).seq));
  }
  const present = checked.filter((row) => row !== undefined);
  const results = await rule.intake.verifiesAll(present.map(source.signedRow));
  let next = 0;
  unknown.forEach((at, i) => {
    const row = checked[i];
    if (row === undefined) verdicts[at] = false;
    else {
      rows[at] = row;
      verdicts[at] = results[next++];
    }
  });
  return verdicts;
}
