/**
 * The server signs its own tree heads: signed checkpoints (src/signing/checkpoint.ts, the table
 * `checkpoints`) over the submissions in `seq` order, so that `review verify --trust <published
 * key>` passes on a healthy install without anyone holding the private key by hand. A checkpoint
 * is the Beacon's signed tree head, in the spirit of RFC 6962 §3.5 / RFC 9162 §4.10: tree size,
 * RFC 6962 §2.1 root, time, Ed25519 signature under the `beacon/0.1 checkpoint` prefix.
 *
 * When a head is signed:
 *
 * - at start, once the database is open, when the log grew since the last head this key signed
 *   (on a new store, the empty tree: RFC 9162 §2.1.1);
 * - every `intervalMs` (`BEACON_CHECKPOINT_INTERVAL`, default 2 s) while it grows;
 * - at graceful shutdown ({@linkcode TreeHeadSchedule.stop}, called by `Beacon.close()`).
 *
 * The tree is built once per process ({@linkcode MerkleLog}): the first signing reads every row in
 * keyset pages (O(n) reads, about 64 bytes of memory per 256 rows); later ones read only the rows
 * after it, so the cost of one head does not grow with the log. While it reads, it checks what
 * it is about to vouch for:
 *
 * - `seq` without gaps;
 * - each new row's stored intake signature, from schema version 10's start on
 *   (src/signing/log_audit.ts): a row without one that verifies under the key was not
 *   acknowledged by the Beacon, so the head stops before it and the row is reported once
 *   (`TreeHeadWithheld`). A row this process committed itself is compared instead with the
 *   members it committed ({@linkcode TreeHeadSigner.committed}, src/signing/committed.ts),
 *   which costs no hash;
 * - the new tree extends every head of this key (RFC 9162 §2.1.4): the same root over that
 *   prefix, at every size, including heads another instance signed meanwhile.
 *
 * If a root differs, the store is known to be inconsistent (rows changed, inserted or removed
 * under a head): it never signs again in this process (a signature would vouch for the damage),
 * reports one `TreeHeadRefused` error, and goes on serving the largest head that verifies. Only
 * heads of this key bind it: a head row whose signature does not verify is not a head (ignored,
 * reported once, `TreeHeadIgnored`), and one under another key is `review verify`'s to weigh, so
 * a writer's garbage never stops the signer and is never served (`latest()` serves the largest
 * head that verifies). Content digests are `review verify`'s to check: the tree commits to each
 * row's digest, not its bytes.
 *
 * The same tree answers consistency proofs between any two sizes up to the served head
 * ({@linkcode TreeHeadSigner.consistency}), so a monitor holding an older head can check that a
 * newer one only appended (`review monitor`).
 *
 * Several instances on one database: the insert is one statement that appends only when no head
 * of this key already covers this size or more (`WHERE NOT EXISTS`), so concurrent signers add at
 * most one head per size, and heads of one key never go backwards. `review verify` accepts any
 * number of heads as long as each root matches.
 *
 * The timer is unref'd: it never keeps a process alive. On Workers nothing is scheduled (the
 * entry turns the interval off): work left after a response is cancelled there, and the first
 * signing's full read is more than a request should carry (docs/deploy.md).
 *
 * @module
 */
import { hex } from "./bytes.ts";
import {
  CHECKPOINT_COLUMNS,
  type CheckpointFields,
  checkpointFromRow,
  type CheckpointRow,
  signCheckpoint,
  verifyCheckpoint,
} from "./signing/checkpoint.ts";
import type { SigningKey } from "./signing/key.ts";
import { CommittedReceipts } from "./signing/committed.ts";
import type { SignedReceiptFields } from "./signing/receipt.ts";
import {
  consistencyProof,
  IntakeSignatures,
  intakeSignaturesFrom,
  type LogRow,
  LogWalk,
} from "./signing/log_audit.ts";
import { MERKLE_CHUNK, MerkleLog, submissionLeafHash } from "./signing/merkle.ts";
import {
  INTAKE_SIGNATURES_FROM,
  signatureColumns,
  signatureJoin,
  signedFieldsOf,
  storedSignatureOf,
} from "./store/rows.ts";
import type { Database } from "./store/database.ts";
import { unref } from "./timers.ts";

/**
 * Rows read and hashed per step while the tree is built. Hashing is synchronous (tens of
 * microseconds a row), so a step is kept short and followed by a macrotask yield: requests are
 * served between steps instead of waiting for the whole first read.
 */
const PAGE_ROWS = 500;

/** Lets timers and I/O run: an embedded read resolves at once, so `await` alone never yields. */
const yieldToEventLoop = () => new Promise<void>((resolve) => setTimeout(resolve, 0));

/** A signed tree head as recorded in `checkpoints` and published at `/beacon/0.1/tree-head`. */
export type SignedTreeHead = CheckpointRow;

/** Thrown inside the signer (and passed to `onError`) when the store cannot be vouched for. */
export class TreeHeadRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = "TreeHeadRefused";
  }
}

/**
 * Passed to `onError` once per head row that is not a head: its signature does not verify under
 * the key it names (a database writer appended it). Such a row is never served, never counts as
 * signed and never stops the signer.
 */
export class TreeHeadIgnored extends Error {
  /** The head row's `seq` in `checkpoints`. */
  readonly seq: number;

  constructor(seq: number) {
    super(`checkpoint ${seq} does not verify under the key it names; it is ignored`);
    this.name = "TreeHeadIgnored";
    this.seq = seq;
  }
}

/**
 * Passed to `onError` once per row a head is withheld before: from schema version 10's start on,
 * a row without a stored intake signature that verifies under the key was not acknowledged by
 * the Beacon (a database writer inserted it, or changed it), so no head covers it or anything
 * after it. The heads before it are still signed and served; the signer tries the row again
 * at each signing, so a row put right is covered.
 */
export class TreeHeadWithheld extends Error {
  /** The submission's `seq`: the row the heads stop before. */
  readonly seq: number;

  constructor(seq: number, id: string, future = false) {
    super(
      `submission ${seq} (receipt ${JSON.stringify(id.slice(0, 64))}) ` +
        (future
          ? "is dated in the future; no head covers it before that time"
          : "carries no intake signature that verifies under the Beacon's key; no head covers it"),
    );
    this.name = "TreeHeadWithheld";
    this.seq = seq;
  }
}

/** A consistency proof between two tree sizes (RFC 9162 §2.1.4), hashes in lowercase hex. */
export interface ConsistencyProof {
  readonly first: number;
  readonly second: number;
  readonly proof: readonly string[];
  /** `createdAt` of the head it was served under (its `Last-Modified`). */
  readonly asOf: string;
}

/**
 * How far past the signer's clock a row's `received_at` may lie and still be covered: instances
 * sharing a database may disagree by a few seconds, never by minutes. A row dated later was not
 * received yet, whatever it carries; a head that covered it would vouch for a time to come.
 */
export const FUTURE_ALLOWANCE_MS = 5 * 60_000;

/** Head rows read per query: each is verified once, then only its verdict's effect is kept. */
const HEAD_PAGE_ROWS = 500;

/** What {@linkcode TreeHeadSigner} needs. */
export interface TreeHeadSignerOptions {
  /** One statement at a time with a deadline (`Database.statements`, src/store/database.ts). */
  readonly statements: Database["statements"];
  /** The Beacon's signing key. */
  readonly key: Pick<SigningKey, "privateKey" | "publicKey">;
  /** Clock for `createdAt`. */
  readonly now: () => number;
  /**
   * Receives a {@linkcode TreeHeadIgnored} per head row that does not verify, and a
   * {@linkcode TreeHeadWithheld} per row a head stops before.
   */
  readonly onIgnored?: (error: TreeHeadIgnored | TreeHeadWithheld) => void;
}

/**
 * Signs tree heads over the submissions; one signing at a time. Not a timer: see
 * {@linkcode scheduleTreeHeads}.
 */
export class TreeHeadSigner {
  readonly #options: TreeHeadSignerOptions;
  readonly #tree = new MerkleLog();
  readonly #intake: IntakeSignatures;
  /** The first `seq` that must carry a verifying intake signature; read at the first signing. */
  #intakeFrom: number | undefined;
  /** The row the last signing stopped before, reported once. */
  #withheld = 0;
  /** Rows this process committed and has not covered yet (`committed`). */
  readonly #committed = new CommittedReceipts();
  /** The walk over the rows (src/signing/log_audit.ts), with the roots recorded in checkpoints for sizes the tree has not reached yet. */
  readonly #walk = new LogWalk(this.#tree);
  /** The last checkpoint `seq` read, so each is read and verified once. */
  #checkpointsRead = 0;
  /** The largest head of this key that verifies, among those read: the one served. */
  #largest: SignedTreeHead | undefined;
  /** Heads of this key read and verified, not yet checked against the tree by a signing. */
  readonly #unchecked: SignedTreeHead[] = [];
  #reading: Promise<void> | undefined;
  /** The largest size a head of this key covers, as far as this process knows. */
  #signedSize = -1;
  #refused: TreeHeadRefused | undefined;
  #running: Promise<SignedTreeHead | undefined> | undefined;

  constructor(options: TreeHeadSignerOptions) {
    this.#options = options;
    this.#intake = new IntakeSignatures([options.key.publicKey]);
  }

  /**
   * Records that this process committed a batch (the store calls it after each commit,
   * `StoreOptions.onCommitted`): per row the `seq` it was stored under (0: not inserted) and its
   * receipt's signed members, in the same order. Covering such a row needs no check of its stored
   * signature: the row must only still read as committed, a comparison of five values instead of
   * hashing the receipt and its batch. Rows of other instances, or from before this start, are
   * checked by their signature. Never throws.
   */
  committed(seqs: readonly number[], receipts: readonly SignedReceiptFields[]): void {
    this.#committed.add(seqs, receipts);
  }

  /** Why this signer stopped signing, once it found the store inconsistent. */
  get refused(): TreeHeadRefused | undefined {
    return this.#refused;
  }

  /**
   * Brings the tree up to the last committed row and, when it grew past every head of this key,
   * signs and appends a new head. A call while one runs joins it.
   *
   * @returns The head appended by this call, or undefined when none was needed (or another
   *   instance appended one for the same size first).
   * @throws {TreeHeadRefused} When the store is inconsistent (and on every later call).
   * @throws {StorageError} When the database fails; the next call resumes where this one stopped.
   */
  sign(): Promise<SignedTreeHead | undefined> {
    this.#running ??= this.#sign().finally(() => this.#running = undefined);
    return this.#running;
  }

  /**
   * The largest head of this key in the database (any instance's) whose signature verifies, or
   * undefined. The largest, not the newest: heads of one key never shrink (protocol §6.5), so an
   * older head appended again by a database writer is never served over a larger one; and only
   * one that verifies, so a row a writer made up is never served at all.
   */
  async latest(): Promise<SignedTreeHead | undefined> {
    const head = await this.#largestVerified();
    // A store without a head yet (a new install) has its first one being signed: wait for it
    // rather than answer 404 for a moment.
    if (head !== undefined || this.#running === undefined) return head;
    await this.#running.catch(() => {});
    return await this.#largestVerified();
  }

  /**
   * The consistency proof between the trees of `first` and `second` leaves (RFC 9162 §2.1.4), for
   * sizes up to the largest head that verifies. Built from the tree this signer signed: the
   * kept subtree hashes, and older rows read back and checked against them.
   *
   * @returns The proof, or undefined when `second` is beyond the largest head.
   * @throws {RangeError} When `first` exceeds `second`.
   * @throws {ChunkChanged} When rows under a signed head changed since they were signed.
   */
  async consistency(first: number, second: number): Promise<ConsistencyProof | undefined> {
    if (first > second) throw new RangeError("Cannot prove consistency: first exceeds second");
    const head = await this.latest();
    if (head === undefined || second > head.treeSize) return undefined;
    // Another instance may have signed past this one's tree: catch up first.
    if (second > this.#tree.size) await this.sign().catch(() => {});
    if (second > this.#tree.size) return undefined;
    const proof = await consistencyProof(
      first,
      second,
      (start, end) => this.#tree.subtree(start, end, (chunk) => this.#chunkLeaves(chunk)),
    );
    return { first, second, proof: proof.map(hex), asOf: head.createdAt };
  }

  /** The leaf hashes of chunk `chunk`, read back from the rows. */
  async #chunkLeaves(chunk: number): Promise<Uint8Array[]> {
    const rows = await this.#options.statements.run(
      "SELECT seq, id, received_at, digest FROM submissions WHERE seq > :from AND seq <= :to " +
        "ORDER BY seq",
      { from: chunk * MERKLE_CHUNK, to: (chunk + 1) * MERKLE_CHUNK },
    );
    const leaves: Uint8Array[] = [];
    for (const row of rows) {
      try {
        leaves.push(submissionLeafHash({
          seq: Number(row.seq),
          id: String(row.id),
          receivedAt: String(row.received_at),
          digest: String(row.digest),
        }));
      } catch {
        break; // a row that cannot be a leaf changed: the chunk's hash check reports it
      }
    }
    return leaves;
  }

  async #largestVerified(): Promise<SignedTreeHead | undefined> {
    await this.#readHeads();
    return this.#largest;
  }

  /**
   * Reads the head rows appended since the last read, each once, in pages: a row of this key
   * whose signature verifies is a head (it may become the served one, and the next signing checks
   * the tree against it); any other row of this key is reported once and forgotten. Nothing but
   * the largest head and the unchecked ones is kept, so no number of garbage rows can hide a
   * genuine head or grow this process. One read at a time; a call while one runs joins it.
   */
  #readHeads(): Promise<void> {
    this.#reading ??= this.#readHeadPages().finally(() => this.#reading = undefined);
    return this.#reading;
  }

  async #readHeadPages(): Promise<void> {
    const { key, statements, onIgnored } = this.#options;
    while (true) {
      const rows = await statements.run(
        `SELECT ${CHECKPOINT_COLUMNS} FROM checkpoints WHERE seq > :after ORDER BY seq ` +
          "LIMIT :limit",
        { after: this.#checkpointsRead, limit: HEAD_PAGE_ROWS },
      );
      for (const row of rows) {
        const head = checkpointFromRow(row);
        this.#checkpointsRead = head.seq;
        // Only this key's heads bind this signer: anyone can sign a head under a key of their
        // own, and `review verify` weighs such rows against --trust.
        if (head.publicKey !== key.publicKey) continue;
        const verified = Number.isSafeInteger(head.treeSize) && head.treeSize >= 0 &&
          await verifyCheckpoint(head.publicKey, head, head.signature);
        if (!verified) {
          onIgnored?.(new TreeHeadIgnored(head.seq));
          continue;
        }
        // The largest, not the newest: heads of one key never shrink (protocol §6.5).
        if (head.treeSize > (this.#largest?.treeSize ?? -1)) this.#largest = head;
        this.#unchecked.push(head);
      }
      if (rows.length < HEAD_PAGE_ROWS) return;
      await yieldToEventLoop();
    }
  }

  async #sign(): Promise<SignedTreeHead | undefined> {
    if (this.#refused !== undefined) throw this.#refused;
    if (this.#intakeFrom === undefined) {
      const [row] = await this.#options.statements.run(INTAKE_SIGNATURES_FROM, {});
      this.#intakeFrom = intakeSignaturesFrom(row?.recorded, row?.first_signed);
    }
    try {
      // Checkpoints first, rows second: every row a checkpoint read here covers is committed,
      // so the rows read next reach its size unless rows were removed.
      await this.#readCheckpoints();
      await this.#readRows();
      const short = this.#walk.unreached()[0]?.treeSize;
      if (short !== undefined) {
        throw new TreeHeadRefused(
          `a checkpoint covers ${short} submissions but only ${this.#tree.size} exist`,
        );
      }
    } catch (error) {
      if (error instanceof TreeHeadRefused) this.#refused = error;
      throw error;
    }
    // The empty tree too (RFC 9162 §2.1.1: its root is SHA-256 of nothing): a new store has a
    // signed head from its first start.
    if (this.#tree.size <= this.#signedSize) return undefined;
    const { key, now, statements } = this.#options;
    const fields: CheckpointFields = {
      treeSize: this.#tree.size,
      rootHash: hex(this.#tree.root()),
      createdAt: new Date(now()).toISOString(),
    };
    const signature = await signCheckpoint(key, fields);
    // One head per size and root, whichever instance signs first. Only the same size and root
    // is checked in SQL: the database cannot verify a signature, so a larger row there may be a
    // writer's garbage, and must not keep this signer from signing.
    const inserted = await statements.run(
      "INSERT INTO checkpoints (tree_size, root_hash, created_at, signature, public_key) " +
        "SELECT :size, :root, :createdAt, :signature, :key WHERE NOT EXISTS " +
        "(SELECT 1 FROM checkpoints WHERE public_key = :key AND tree_size = :size " +
        "AND root_hash = :root) RETURNING seq",
      {
        size: fields.treeSize,
        root: fields.rootHash,
        createdAt: fields.createdAt,
        signature,
        key: key.publicKey,
      },
    );
    this.#signedSize = fields.treeSize;
    if (inserted[0] === undefined) return undefined; // another instance covered it first
    return { ...fields, seq: Number(inserted[0].seq), signature, publicKey: key.publicKey };
  }

  async #readCheckpoints(): Promise<void> {
    await this.#readHeads();
    // A row that does not verify is not a head at all: neither a size signed nor a root.
    for (let head = this.#unchecked.shift(); head !== undefined; head = this.#unchecked.shift()) {
      const size = head.treeSize;
      this.#signedSize = Math.max(this.#signedSize, size);
      if (size > this.#tree.size) {
        this.#walk.expect(head);
        continue;
      }
      // A head at or below the tree's size (another instance signed it after this one read
      // past it): the new tree must extend it (RFC 9162 §2.1.4), the same root over that prefix.
      let root: string;
      try {
        root = hex(await this.#tree.subtree(0, size, (chunk) => this.#chunkLeaves(chunk)));
      } catch {
        this.#mismatch(head.seq, size); // rows under the head changed since they were hashed
      }
      if (root !== head.rootHash) this.#mismatch(head.seq, size);
    }
  }

  async #readRows(): Promise<void> {
    const latest = this.#options.now() + FUTURE_ALLOWANCE_MS;
    while (true) {
      const rows = await this.#options.statements.run(
        "SELECT seq, id, received_at, digest, kind, size FROM submissions " +
          "WHERE seq > :after ORDER BY seq LIMIT :limit",
        { after: this.#tree.size, limit: PAGE_ROWS },
      );
      const acknowledged = await this.#acknowledgedRows(rows);
      for (let at = 0; at < rows.length; at++) {
        const row = rows[at];
        const seq = Number(row.seq);
        const { findings, leaf } = this.#walk.check(
          { seq, id: row.id, receivedAt: row.received_at, digest: row.digest } as LogRow,
          acknowledged[at],
        );
        // The first finding stops the signing: no head is signed over it.
        const finding = findings[0];
        if (finding?.kind === "missing") {
          throw new TreeHeadRefused(`submission ${finding.from} is missing`);
        }
        if (finding?.kind === "unencodable") {
          throw new TreeHeadRefused(`submission ${seq} cannot be encoded as a leaf`);
        }
        const future = Date.parse(String(row.received_at)) > latest;
        if (finding?.kind === "unacknowledged" || future) {
          if (this.#withheld !== seq) {
            this.#withheld = seq;
            this.#options.onIgnored?.(new TreeHeadWithheld(seq, String(row.id), future));
          }
          return;
        }
        if (this.#walk.append(seq, leaf!).mismatched.length > 0) this.#mismatch(undefined, seq);
      }
      if (rows.length < PAGE_ROWS) return;
      await yieldToEventLoop();
    }
  }

  /**
   * Whether the Beacon acknowledged each row as it now reads (src/signing/log_audit.ts), with the
   * rows rewritten in place where their stored signature had to be read. Rows a head of this key
   * already covers were vouched for when it was signed. Rows this process committed are
   * compared with what it committed (their receipts' members); only the others are read again with
   * their stored signatures, checked together so that a whole batch costs one root.
   */
  async #acknowledgedRows(rows: Record<string, unknown>[]): Promise<boolean[]> {
    const from = Math.max(this.#signedSize + 1, this.#intakeFrom!);
    const verdicts = new Array<boolean>(rows.length).fill(true);
    const unknown: number[] = [];
    if (rows.length > 0) this.#committed.forgetBefore(Number(rows[0].seq));
    for (let at = 0; at < rows.length; at++) {
      const row = rows[at];
      const seq = Number(row.seq);
      if (seq < from) continue; // covered already (another instance's head)
      // The members as the stored-signature check below reads them. A row that reads otherwise
      // than this process committed it is judged by its stored signature, not held back: after a
      // writer deleted the newest rows, SQLite hands their `seq`s to the next genuine rows, which
      // carry signatures of their own.
      if (this.#committed.check(seq, signedFieldsOf(row)) !== true) unknown.push(at);
    }
    if (unknown.length === 0) return verdicts;
    const signed = await this.#options.statements.run(
      "SELECT submissions.seq AS seq, id, received_at, digest, kind, size, " +
        `${signatureColumns("submissions")} FROM submissions ${signatureJoin("submissions")} ` +
        "WHERE submissions.seq >= :low AND submissions.seq <= :high ORDER BY submissions.seq",
      { low: Number(rows[unknown[0]].seq), high: Number(rows[unknown.at(-1)!].seq) },
    );
    const bySeq = new Map(signed.map((row) => [Number(row.seq), row]));
    // A row gone or changed since the page was read is judged as it reads now.
    const checked = unknown.map((at) => bySeq.get(Number(rows[at].seq)));
    const present = checked.filter((row) => row !== undefined);
    const results = await this.#intake.verifiesAll(present.map((row) => ({
      fields: signedFieldsOf(row),
      stored: storedSignatureOf(row),
    })));
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

  #mismatch(checkpoint: number | undefined, size: number): never {
    throw new TreeHeadRefused(
      `${checkpoint === undefined ? "a checkpoint" : `checkpoint ${checkpoint}`} records a ` +
        `root for ${size} submissions that the stored rows no longer give`,
    );
  }
}

/** A running schedule of tree heads. */
export interface TreeHeadSchedule {
  /**
   * Stops the timer, waits for a signing in progress, then signs a final head when `finalHead`
   * (a graceful shutdown on a database still trusted). Never rejects: failures go to `onError`.
   */
  stop(finalHead: boolean): Promise<void>;
}

/**
 * Signs a head now (the start), then every `intervalMs`, on an unref'd timer; failures are
 * reported through `onError` (a refusal once) and never stop the Beacon.
 *
 * @param signer The signer.
 * @param intervalMs Time between signings.
 * @param onError Receives storage errors and the refusal.
 * @returns The schedule.
 */
export function scheduleTreeHeads(
  signer: TreeHeadSigner,
  intervalMs: number,
  onError: ((error: unknown) => void) | undefined,
): TreeHeadSchedule {
  let reported = false;
  const attempt = async () => {
    if (reported) return; // refused: nothing more to sign in this process
    try {
      await signer.sign();
    } catch (error) {
      reported = error instanceof TreeHeadRefused;
      onError?.(error);
    }
  };
  let busy = true;
  const run = () => {
    busy = true;
    return attempt().finally(() => busy = false);
  };
  let current = run();
  // A tick while a signing runs (a slow first read) is skipped, never queued behind it.
  const timer = setInterval(() => {
    if (!busy) current = run();
  }, intervalMs);
  unref(timer);
  return {
    async stop(finalHead) {
      clearInterval(timer);
      await current;
      if (finalHead) await attempt();
    },
  };
}
