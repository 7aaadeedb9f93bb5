/**
 * The submission store: an append-only libSQL table written through group commit, on a
 * {@linkcode Database} (src/store/database.ts: the client, the migrations, the connection, the
 * deadlines and the secrets).
 *
 * How a row gets committed, in three hops: {@linkcode SubmissionStore.append} queues it with the
 * {@linkcode GroupCommitter}, which hands a batch to this store's commit, which signs the batch's
 * receipts and writes the rows with their signatures in one transaction on the database's
 * connection (one home per kind under src/store/connection/: embedded/, a checked connection on
 * this thread or the writer thread; remote/, one Hrana batch on a remote database; memory.ts).
 *
 * The receipt signer is given when the store is made ({@linkcode StoreOptions}), never installed
 * later: a store signs every receipt it commits, or none. Because the Beacon's key is a secret of
 * the same database, the Beacon opens the database first, loads the key from it, and then makes
 * the store on it with the signer (`new SubmissionStore(database, { signReceipts })`);
 * {@linkcode SubmissionStore.open} does both steps for a caller whose signer is at hand.
 *
 * @module
 */
import { OutcomeUnknownError, StorageError } from "../errors.ts";
import type { DatabaseConfig } from "./client.ts";
import { Database } from "./database.ts";
import { ConnectionStateError, DeadlineError, IndeterminateError, isBusy } from "./faults.ts";
import { GroupCommitter } from "./group_commit.ts";
import {
  type BatchSignature,
  type CarriedSignature,
  FIND_BY_IDEMPOTENCY_KEY,
  keyCheckArgs,
  type NewSubmission,
  type PendingRow,
  pendingRow,
  type SignedFields,
  type SubmissionSummary,
  SUMMARY_COLUMNS,
  toSummary,
} from "./rows.ts";

export type {
  CarriedSignature,
  NewSubmission,
  StoredSignature,
  SubmissionKind,
  SubmissionSummary,
  Surface,
} from "./rows.ts";

export { DEFAULT_DATABASE_TIMEOUT_MS } from "../defaults.ts";

/**
 * The receipts of rows committed together as the receipt signer signed them: each receipt's
 * signature, in order, and the batch's leaves and one signature, which the commit stores beside
 * the rows (what `signReceipts` in src/signing/receipt.ts returns, its `SignedBatch`).
 */
export interface SignedReceipts extends BatchSignature {
  /** One per receipt, in batch order: its signature and, in a batch of several, its proof. */
  readonly receipts: readonly CarriedSignature[];
}

/** Signs the receipts of rows committed together (`signReceipts` in src/signing/receipt.ts). */
export type ReceiptSigner = (receipts: readonly SignedFields[]) => Promise<SignedReceipts>;

/** How the store is made. */
export interface StoreOptions {
  /**
   * Signs the receipts of each batch inside the commit that stores it (an Ed25519 signature
   * costs as much as the rest of a submission's work, so a batch shares one); each signature is
   * stored with its row. Without it, receipts are unsigned.
   */
  readonly signReceipts?: ReceiptSigner;
  /**
   * Told, after each batch's commit, the `seq` each row was stored under (0: not
   * inserted) and the signed members of each row's receipt, in the same order: what the
   * tree-head signer needs to know that this process acknowledged those rows
   * (src/tree_heads.ts), one call per batch.
   */
  readonly onCommitted?: (seqs: readonly number[], receipts: readonly SignedFields[]) => void;
  /** Told of each commit that stored its batch and of each outcome left unknown (metrics). */
  readonly observer?: CommitObserver;
}

/** What the metrics learn from the store. */
export interface CommitObserver {
  /** A commit stored `rows` rows in `seconds` (from sending it to its answer). */
  committed(rows: number, seconds: number): void;
  /** A commit was sent and its outcome is unknown. */
  outcomeUnknown(): void;
}

/** What {@linkcode SubmissionStore.append} reports for a row it stored. */
export interface Appended {
  /** The receipt's signature, stored with the row; absent when the store signs nothing. */
  readonly signature?: CarriedSignature;
}

/**
 * The receipt signer failed before the batch was written (nothing was stored). Not a fault of
 * the database nor of one row: the batch is not retried row by row, and the caller gets the
 * signer's own error (an internal error, not "storage unavailable").
 */
class SigningFailure extends Error {
  constructor(cause: unknown) {
    super("receipt signing failed", { cause });
  }
}

/**
 * Whether a failed batch may be retried one row per transaction. Only a row's own fault (a
 * constraint) is worth isolating; a busy, stalled or broken database would fail every row again.
 */
function isRowFault(error: unknown): boolean {
  return !(isBusy(error) || error instanceof SigningFailure || error instanceof DeadlineError ||
    error instanceof ConnectionStateError || error instanceof IndeterminateError);
}

/** The store used by the handler. */
export class SubmissionStore {
  /** The database the store is on (it closes it). */
  readonly database: Database;
  readonly #writer: GroupCommitter<PendingRow, Appended | undefined>;
  readonly #signReceipts: ReceiptSigner | undefined;
  readonly #onCommitted: StoreOptions["onCommitted"];
  readonly #observer: CommitObserver | undefined;

  /** The store on an open `database`, signing with `options.signReceipts`. */
  constructor(database: Database, options: StoreOptions = {}) {
    this.database = database;
    this.#signReceipts = options.signReceipts;
    this.#onCommitted = options.onCommitted;
    this.#observer = options.observer;
    this.#writer = new GroupCommitter((rows, deadline) => this.#signAndCommit(rows, deadline), {
      retryAlone: isRowFault,
      timeoutMs: database.timeoutMs,
      onAbandon: database.connection.abandonCommit,
    });
  }

  /** Opens the database, applies migrations, and returns the store on it. */
  static async open(
    config: DatabaseConfig,
    now: () => number = Date.now,
    options: StoreOptions = {},
  ): Promise<SubmissionStore> {
    return new SubmissionStore(await Database.open(config, now), options);
  }

  /**
   * Appends one submission; resolves only once it is durably committed, with its receipt's
   * stored signature (if the store signs). Throws {@linkcode OutcomeUnknownError} when the commit
   * was sent and its outcome is unknown, and {@linkcode StorageError} only when nothing was or
   * will be stored. With `keyWindowStart` (an ISO time) and an idempotency key, resolves `false`
   * instead, storing nothing, when the same source used the same key since then.
   */
  append(submission: NewSubmission, keyWindowStart?: string): Promise<Appended | false> {
    const failed = (error: unknown): never => {
      if (error instanceof IndeterminateError) {
        this.#observer?.outcomeUnknown();
        throw new OutcomeUnknownError(submission.id, { cause: error });
      }
      if (error instanceof SigningFailure) throw error.cause;
      throw new StorageError(error);
    };
    let writing: Promise<Appended | undefined>;
    try {
      // The committer keeps the deadline: a write still queued at it is never sent, and one
      // sent without an answer is reported as indeterminate.
      writing = this.#writer.write(pendingRow(submission, keyWindowStart));
    } catch (error) {
      return Promise.reject(error).catch(failed);
    }
    return writing.then((appended) => appended ?? false, failed);
  }

  /**
   * One commit of the group committer: the batch's receipts are signed first (one signature for
   * the batch, or the single form for a batch of one), then every row goes into one transaction
   * with the batch's signature (its receipts' leaves and the signature, one row for the batch). A
   * receipt whose row is then not stored (the key check skipped it, or the commit failed) is
   * never sent: it dies with the call, and its leaf in a stored batch has no row. `deadline` is
   * the call's (src/store/group_commit.ts).
   */
  async #signAndCommit(
    rows: readonly PendingRow[],
    deadline: number,
  ): Promise<(Appended | undefined)[]> {
    const sign = this.#signReceipts;
    let signed: SignedReceipts | undefined;
    const receipts = rows.map((row) => row.signed);
    try {
      signed = sign === undefined ? undefined : await sign(receipts);
    } catch (error) {
      throw new SigningFailure(error);
    }
    // A batch retried row by row is signed again, each row alone, so each keeps its own.
    const sent = this.#observer === undefined ? 0 : performance.now();
    const seqs = await this.database.connection.commit(rows, deadline, signed);
    this.#observer?.committed(rows.length, (performance.now() - sent) / 1000);
    // Committed is committed: a listener that fails must not turn the receipts into an error
    // (the tree-head signer then checks those rows by their stored signatures instead).
    try {
      this.#onCommitted?.(seqs, receipts);
    } catch {
      // nothing to undo
    }
    return seqs.map((seq, i) =>
      seq === 0 ? undefined : signed === undefined ? {} : { signature: signed.receipts[i] }
    );
  }

  /** The submission with receipt id `id`, or undefined. */
  async findById(id: string): Promise<SubmissionSummary | undefined> {
    const sql = `SELECT seq AS row_seq, ${SUMMARY_COLUMNS} FROM submissions WHERE id = ?`;
    const rows = await this.database.query(sql, [id]);
    return rows[0] === undefined ? undefined : toSummary(rows[0]);
  }

  /**
   * The earlier submission from the same source with the same idempotency key received at or
   * after `since` (ISO time), with its digest, for retry detection.
   */
  async findByIdempotencyKey(
    sourceHash: string,
    key: string,
    since: string,
  ): Promise<SubmissionSummary | undefined> {
    const rows = await this.database.query(FIND_BY_IDEMPOTENCY_KEY, [
      ...keyCheckArgs(sourceHash, key, since),
    ]);
    return rows[0] === undefined ? undefined : toSummary(rows[0]);
  }

  /** Waits for queued writes, then closes the database. */
  async close(): Promise<void> {
    await this.#writer.idle();
    this.#writer.close();
    await this.database.close();
  }
}
