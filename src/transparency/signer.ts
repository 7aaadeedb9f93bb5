/**
 * The server signs its own log: heads over the submissions in `seq` order, each published two
 * ways that agree on size and root, a C2SP checkpoint note (c2sp.org/tlog-checkpoint, the
 * ecosystem's format) and the JSON head of protocol §6.5, and the tree behind them as C2SP tiles
 * (src/signing/tiles.ts), stored in the head's own row (src/store/log_rows.ts).
 *
 * ## The log's state is its tiles
 *
 * A signer continues from the newest head it can verify: it reads that head's right edge (the
 * newest tile of every level) back from the stored heads, checks that it gives the signed root,
 * and appends from there. No process ever reads the log from the start again; only a store signed
 * before tiles existed is read once, and its heads of that time are compared on the way
 * (RFC 9162 §2.1.4: the new tree must extend every one of them).
 *
 * ## A head covers only rows the Beacon acknowledged
 *
 * Each new row is checked before it is covered, through the audit loop `review verify` runs too
 * (./audit.ts; src/signing/log_audit.ts, `LogWalk`):
 *
 * - `seq` without gaps;
 * - its stored intake signature verifies under the key, from schema version 10's start on: a
 *   row without one was not acknowledged by the Beacon (a database writer inserted or changed
 *   it), so the head stops before it and the row is reported once (`TreeHeadWithheld`). A row
 *   this process committed itself and that still reads as committed needs no signature check
 *   (src/signing/committed.ts);
 * - it is not dated more than {@linkcode FUTURE_ALLOWANCE_MS} past the signer's clock.
 *
 * ## Across a key rotation
 *
 * The log is the rows', not a key's: after a rotation (src/signing/rotation.ts, recorded at start
 * by src/transparency/key_rotation.ts) the new key continues from the previous key's newest tiled
 * head at or below the boundary, checks rows up to the boundary under the previous key and the
 * rows after it under the new one, and signs a head of its own at once, so the published
 * checkpoint is under the current key. A retired key's heads past its boundary are not heads of
 * the log, and a row past the boundary that only the retired key signed is withheld and named
 * (`TreeHeadWithheld`): a copy of a retired key cannot extend the log (src/signing/key_history.ts).
 * A signer whose own key was retired by a statement it signed stops at the boundary.
 *
 * ## Several instances
 *
 * One head of a key ends at a size and one starts at it (migration 12's unique indexes): the
 * append is one statement that adds the head and its tiles only when no head of this key already
 * starts where it starts, so two instances never sign two heads for one size. The one that loses
 * continues from the winner's head at its next signing.
 *
 * Head rows whose signature does not verify are not heads: they are reported once
 * (`TreeHeadIgnored`), never served, and never stop the signer, however many there are (each is
 * read and verified once).
 *
 * @module
 */
import { fromHex, hex } from "../bytes.ts";
import {
  type CheckpointFields,
  checkpointFromRow,
  type CheckpointRow,
  signCheckpoint,
  verifyCheckpoint,
} from "../signing/checkpoint.ts";
import { CommittedReceipts } from "../signing/committed.ts";
import type { SigningKey } from "../signing/key.ts";
import {
  KeyHistory,
  type KeyRange,
  RangedIntakeSignatures,
  validRotations,
} from "../signing/key_history.ts";
import {
  consistencyProof,
  intakeSignaturesFrom,
  type LogRow,
  LogWalk,
} from "../signing/log_audit.ts";
import { checkpointBody, checkpointNote, signCheckpointNote } from "../signing/note.ts";
import { rotationFromRow } from "../signing/rotation.ts";
import type { SignedReceiptFields } from "../signing/receipt.ts";
import {
  entriesAt,
  inclusionProof,
  rangeHash,
  TILE_WIDTH,
  tileBytes,
  TileLog,
} from "../signing/tiles.ts";
import { LogRows } from "../store/log_rows.ts";
import type { Statements } from "../store/log_rows.ts";
import { signedFieldsOf } from "../store/rows.ts";
import { auditRows } from "./audit.ts";
import { signedRowOf } from "./signed_row.ts";
import { TileMissing, TileReader } from "./tile_reader.ts";
import { UncoveredCommits } from "./uncovered.ts";

/**
 * Rows read and hashed per step. Hashing is synchronous, so a step is kept short and followed by
 * a macrotask yield: requests are served between steps.
 */
const PAGE_ROWS = 500;

/** Head rows read per query: each is verified once. */
const HEAD_PAGE_ROWS = 500;

/**
 * The most leaves one head adds: a head row carries the tile entries it completed, about 33
 * bytes per leaf, so one row stays near 2 MiB however far behind the log is (a store signed
 * before tiles existed is tiled in such steps, each one stored).
 */
export const MAX_HEAD_LEAVES = 65_536;

/**
 * How far past the signer's clock a row's `received_at` may lie and still be covered: instances
 * sharing a database may disagree by a few seconds, never by minutes. A row dated later was not
 * received yet, whatever it carries; a head that covered it would vouch for a time to come.
 */
export const FUTURE_ALLOWANCE_MS = 5 * 60_000;

/** Lets timers and I/O run: an embedded read resolves at once, so `await` alone never yields. */
const yieldToEventLoop = () => new Promise<void>((resolve) => setTimeout(resolve, 0));

/** A signed head as recorded in `checkpoints` and published at `/beacon/0.1/tree-head`. */
export type SignedTreeHead = CheckpointRow;

/** A head with its checkpoint note, as published at `<log>/checkpoint`. */
export interface PublishedCheckpoint {
  readonly head: SignedTreeHead;
  /** The C2SP signed note. */
  readonly note: string;
}

/** Thrown inside the signer (and passed to `onError`) when the store cannot be vouched for. */
export class TreeHeadRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = "TreeHeadRefused";
  }
}

/**
 * Passed to `onError` once per head row that is not a head: a signature in it does not verify
 * under the key it names (a database writer appended it). Such a row is never served, never
 * counts as signed and never stops the signer; if it stands where the next head must go (a
 * tiled row at the size or start of that head), signing waits on it, and it is named here.
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
 * Passed to `onError` once per row a head is withheld before: a row without a stored intake
 * signature that verifies under the key that vouches for its `seq` (a database writer inserted
 * it, or changed it; or a copy of a retired key signed it past that key's rotation boundary), or
 * one dated in the future. No head covers it or anything after it; the signer tries the row again
 * at each signing, so a row put right (or whose time comes) is covered.
 */
export class TreeHeadWithheld extends Error {
  /** The submission's `seq`: the row the heads stop before. */
  readonly seq: number;
  /** The retired key whose signature the row carries past its boundary, if that is why. */
  readonly retiredKey?: string;

  constructor(seq: number, id: string, why: "unacknowledged" | "future" | KeyRange) {
    super(
      `submission ${seq} (receipt ${JSON.stringify(id.slice(0, 64))}) ` +
        (why === "future"
          ? "is dated in the future; no head covers it before that time"
          : why === "unacknowledged"
          ? "carries no intake signature that verifies under the Beacon's key; no head covers it"
          : `is signed by the retired key ${why.publicKey}, past its rotation boundary (seq ` +
            `${why.lastSeq}): a copy of a retired key at work? no head covers it (docs/keys.md)`),
    );
    this.name = "TreeHeadWithheld";
    this.seq = seq;
    if (typeof why === "object") this.retiredKey = why.publicKey;
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

/** An inclusion proof of one leaf (RFC 9162 §2.1.3), hashes in lowercase hex. */
export interface InclusionProof {
  readonly index: number;
  readonly treeSize: number;
  readonly proof: readonly string[];
  /** `createdAt` of the head of that size. */
  readonly asOf: string;
}

/** What {@linkcode LogSigner} needs. */
export interface LogSignerOptions {
  /** One statement at a time with a deadline (`Database.statements`, src/store/database.ts). */
  readonly statements: Statements;
  /** The Beacon's signing key. */
  readonly key: Pick<SigningKey, "privateKey" | "publicKey">;
  /** The log's origin, the name its checkpoints carry (recorded once: `LogRows.origin`). */
  readonly origin: string;
  /** Clock for `createdAt` and the future-date check. */
  readonly now: () => number;
  /**
   * Receives a {@linkcode TreeHeadIgnored} per head row that does not verify, and a
   * {@linkcode TreeHeadWithheld} per row a head stops before.
   */
  readonly onIgnored?: (error: TreeHeadIgnored | TreeHeadWithheld) => void;
}

/** A verified head row of the log's keys, with its note signature where it carries tiles. */
type KnownHead = SignedTreeHead & { readonly noteSignature?: string; readonly fromSize?: number };

/**
 * Signs heads over the submissions, serves them, and proves inclusion and consistency from the
 * stored tiles; one signing at a time. Not a timer: see `scheduleTreeHeads` (./schedule.ts).
 */
export class LogSigner {
  readonly #options: LogSignerOptions;
  readonly #rows: LogRows;
  readonly #tiles: TileReader;
  /** The log's keys as this signer knows them: its own, and the ones it took over from. */
  #history: KeyHistory;
  #intake: RangedIntakeSignatures;
  /** The boundary of this signer's own key, once a statement it signed retired it. */
  #retiredAt: number | undefined;
  /** Whether the rotation statements were read once. */
  #historyRead = false;
  /** The first `seq` that must carry a verifying intake signature; read at the first signing. */
  #intakeFrom: number | undefined;
  /** The row the last signing stopped before, reported once. */
  #withheld = 0;
  /** Rows this process committed and has not covered yet (`committed`). */
  readonly #committed = new CommittedReceipts();
  /** This process's commits no published head covers yet (for {@linkcode uncoveredSeconds}). */
  readonly #uncovered = new UncoveredCommits();
  /** The log as this signer continues it; undefined until loaded from the store. */
  #tree: TileLog | undefined;
  #walk: LogWalk<SignedTreeHead> | undefined;
  /** The last checkpoint `seq` read, so each is read and verified once. */
  #checkpointsRead = 0;
  /** The largest verified head of the log's keys, and the largest with tiles (published). */
  #largest: KnownHead | undefined;
  #largestTiled: KnownHead | undefined;
  /** Heads read since the last signing: the untiled ones its walk must meet. */
  readonly #unchecked: KnownHead[] = [];
  #reading: Promise<void> | undefined;
  #refused: TreeHeadRefused | undefined;
  #running: Promise<SignedTreeHead | undefined> | undefined;

  constructor(options: LogSignerOptions) {
    this.#options = options;
    this.#rows = new LogRows(options.statements);
    this.#history = KeyHistory.whole([options.key.publicKey]);
    this.#intake = new RangedIntakeSignatures(this.#history);
    this.#tiles = new TileReader(this.#rows, () => this.#history, options.origin);
  }

  /** The log's keys, oldest first, each with the rows it vouches for (for discovery and JWKS). */
  async history(): Promise<KeyHistory> {
    if (!this.#historyRead) await this.#readHistory();
    return this.#history;
  }

  /**
   * Reads the rotation statements (a few rows) into the history that ends at this signer's key,
   * and whether a statement its own key signed retired that key.
   */
  async #readHistory(): Promise<void> {
    const { key, origin } = this.#options;
    const rotations = await validRotations(
      (await this.#rows.rotations()).map(rotationFromRow),
      origin,
    );
    const history = KeyHistory.endingAt(key.publicKey, rotations);
    if (history.ranges.length !== this.#history.ranges.length) {
      this.#history = history;
      this.#intake = new RangedIntakeSignatures(history);
    }
    for (const { statement, byPrevious } of rotations.values()) {
      if (statement.previousKey === key.publicKey && byPrevious) {
        this.#retiredAt = statement.lastSeq;
      }
    }
    this.#historyRead = true;
  }

  /**
   * Records that this process committed a batch (the store calls it after each commit,
   * `StoreOptions.onCommitted`): per row the `seq` it was stored under (0: not inserted) and its
   * receipt's signed members, in the same order. Never throws.
   */
  committed(seqs: readonly number[], receipts: readonly SignedReceiptFields[]): void {
    this.#committed.add(seqs, receipts);
    let last = 0;
    for (const seq of seqs) if (seq > last) last = seq;
    if (last > 0) this.#uncovered.add(last, this.#options.now());
  }

  /**
   * Seconds since the oldest submission this process acknowledged that no published head covers
   * yet; 0 when every one is covered. What an operator alerts on: a log that stopped (a row
   * withheld, a refusal, a database away) shows as a number that keeps growing.
   */
  uncoveredSeconds(): number {
    if (this.#largestTiled !== undefined) this.#uncovered.cover(this.#largestTiled.treeSize);
    const oldest = this.#uncovered.oldest();
    return oldest === undefined ? 0 : Math.max(0, (this.#options.now() - oldest) / 1000);
  }

  /** Why this signer stopped signing, once it found the store inconsistent. */
  get refused(): TreeHeadRefused | undefined {
    return this.#refused;
  }

  /**
   * Brings the log up to the last committed row, signing one head per {@linkcode MAX_HEAD_LEAVES}
   * leaves at most. A call while one runs joins it.
   *
   * @returns The last head appended by this call, or undefined when none was needed.
   * @throws {TreeHeadRefused} When the store is inconsistent (and on every later call).
   * @throws {StorageError} When the database fails; the next call resumes where this one stopped.
   */
  sign(): Promise<SignedTreeHead | undefined> {
    this.#running ??= this.#sign().finally(() => this.#running = undefined);
    return this.#running;
  }

  /**
   * The head to publish: the largest of the log's keys with tiles whose signatures verify, or, on a
   * store no tiled head covers yet, the largest that verifies. Heads of one key never shrink
   * (protocol §6.5), so an older head appended again is never served over a larger one.
   */
  async latest(): Promise<SignedTreeHead | undefined> {
    const head = await this.#published();
    // A store without a head yet (a new install) has its first one being signed: wait for it
    // rather than answer 404 for a moment.
    if (head !== undefined || this.#running === undefined) return head;
    await this.#running.catch(() => {});
    return await this.#published();
  }

  /**
   * The newest head with tiles (the one the checkpoint note, the tiles and the proofs speak
   * for), once one exists.
   */
  async tiledHead(): Promise<SignedTreeHead | undefined> {
    await this.latest();
    return this.#largestTiled;
  }

  /** The published head as a C2SP checkpoint note, once a head with tiles exists. */
  async checkpoint(): Promise<PublishedCheckpoint | undefined> {
    await this.latest();
    const head = this.#largestTiled;
    if (head?.noteSignature === undefined) return undefined;
    const body = checkpointBody(this.#options.origin, head.treeSize, fromHex(head.rootHash)!);
    return { head, note: checkpointNote(this.#options.origin, body, head.noteSignature) };
  }

  /**
   * The entries of one tile, if the published head covers it at that width.
   *
   * @throws {TileMissing} When the stored heads do not hold it (the store was changed).
   */
  async tile(
    level: number,
    index: number,
    width: number,
  ): Promise<readonly Uint8Array[] | undefined> {
    const head = await this.tiledHead();
    if (head === undefined) return undefined;
    if (index * TILE_WIDTH + width > entriesAt(head.treeSize, level)) return undefined;
    return await this.#tiles.tile({ level, index, width });
  }

  /**
   * The consistency proof between the trees of `first` and `second` leaves (RFC 9162 §2.1.4),
   * from the stored tiles, for sizes up to the published head's.
   *
   * @returns The proof, or undefined when `second` is beyond the published head.
   * @throws {RangeError} When `first` exceeds `second`.
   */
  async consistency(first: number, second: number): Promise<ConsistencyProof | undefined> {
    if (first > second) throw new RangeError("Cannot prove consistency: first exceeds second");
    // Proofs are read from the tiles: sizes up to the newest head that has them.
    const head = await this.tiledHead();
    if (head === undefined || second > head.treeSize) return undefined;
    const source = this.#tiles.source();
    const proof = await consistencyProof(first, second, (s, e) => rangeHash(s, e, source));
    return { first, second, proof: proof.map(hex), asOf: head.createdAt };
  }

  /**
   * The inclusion proof of leaf `index` in the tree of `size` leaves (RFC 9162 §2.1.3), from the
   * stored tiles; `size` defaults to the published head's.
   *
   * @returns The proof, or undefined when no published head covers the leaf at that size.
   */
  async inclusion(index: number, size?: number): Promise<InclusionProof | undefined> {
    const head = await this.tiledHead();
    const treeSize = size ?? head?.treeSize;
    if (head === undefined || treeSize === undefined || treeSize > head.treeSize) return undefined;
    if (index < 0 || index >= treeSize) return undefined;
    const proof = await inclusionProof(index, treeSize, this.#tiles.source());
    return { index, treeSize, proof: proof.map(hex), asOf: head.createdAt };
  }

  async #published(): Promise<SignedTreeHead | undefined> {
    await this.#readHeads();
    return this.#largestTiled ?? this.#largest;
  }

  /**
   * Reads the head rows appended since the last read, each once, in pages. Only the largest heads
   * and the untiled ones a walk must meet are kept, so no number of garbage rows can hide a
   * genuine head or grow this process. A call while one runs joins it.
   */
  #readHeads(): Promise<void> {
    this.#reading ??= this.#readHeadPages().finally(() => this.#reading = undefined);
    return this.#reading;
  }

  async #readHeadPages(): Promise<void> {
    const { key, onIgnored } = this.#options;
    if (!this.#historyRead) await this.#readHistory();
    while (true) {
      const rows = await this.#rows.headsAfter(this.#checkpointsRead, HEAD_PAGE_ROWS);
      for (const row of rows) {
        const head: KnownHead = {
          ...checkpointFromRow(row),
          ...(row.note_signature === null || row.note_signature === undefined ? {} : {
            noteSignature: String(row.note_signature),
            fromSize: Number(row.from_size),
          }),
        };
        this.#checkpointsRead = head.seq;
        // Only the heads of the log's keys bind this signer (a previous key's up to its
        // boundary): anyone can sign a head under a key of their own, and `review verify` weighs
        // such rows against --trust.
        if (!this.#history.mayCover(head.publicKey, head.treeSize)) continue;
        if (!await this.#verifies(head)) {
          onIgnored?.(new TreeHeadIgnored(head.seq));
          continue;
        }
        // The largest, not the newest: heads of one key never shrink (protocol §6.5). At one
        // size the current key's head is the one published.
        const larger = (than: KnownHead | undefined) =>
          head.treeSize > (than?.treeSize ?? -1) ||
          (head.treeSize === than?.treeSize && head.publicKey === key.publicKey);
        if (larger(this.#largest)) this.#largest = head;
        if (head.noteSignature !== undefined) {
          if (larger(this.#largestTiled)) {
            this.#largestTiled = head;
            this.#uncovered.cover(head.treeSize);
          }
        } else this.#unchecked.push(head);
      }
      if (rows.length < HEAD_PAGE_ROWS) return;
      await yieldToEventLoop();
    }
  }

  /** Whether a head row's signatures (the JSON head's, and the note's where it has one) verify. */
  async #verifies(head: KnownHead): Promise<boolean> {
    if (!Number.isSafeInteger(head.treeSize) || head.treeSize < 0) return false;
    if (!await verifyCheckpoint(head.publicKey, head, head.signature)) return false;
    if (head.noteSignature === undefined) return true;
    return Number.isSafeInteger(head.fromSize) && head.fromSize! <= head.treeSize &&
      await this.#tiles.verifies({ ...head, noteSignature: head.noteSignature });
  }

  async #sign(): Promise<SignedTreeHead | undefined> {
    if (this.#refused !== undefined) throw this.#refused;
    try {
      if (this.#intakeFrom === undefined) {
        const { recorded, firstSigned } = await this.#rows.intakeSignaturesFrom();
        this.#intakeFrom = intakeSignaturesFrom(recorded, firstSigned);
      }
      // The key history is read with the first heads (`#readHeadPages`) and refreshed after each
      // signing instead of before it, so the first signing at start covers the log as it stood
      // then (the empty tree of a new store).
      let appended: SignedTreeHead | undefined;
      while (true) {
        await this.#readHeads();
        await this.#continueFromStore();
        const { more } = await this.#readRows();
        const short = this.#walk!.unreached()[0]?.treeSize;
        if (short !== undefined && !more) {
          throw new TreeHeadRefused(
            `a checkpoint covers ${short} submissions but only ${this.#tree!.size} exist`,
          );
        }
        const head = await this.#append();
        if (head !== undefined) appended = head;
        if (!more || head === undefined) {
          // A rotation another instance recorded since (it retires this key at its boundary).
          await this.#readHistory();
          return appended;
        }
        await yieldToEventLoop();
      }
    } catch (error) {
      if (error instanceof TreeHeadRefused) this.#refused = error;
      throw error;
    }
  }

  /**
   * Makes the tree this signer appends to the log's newest signed state: loaded from the largest
   * head with tiles (its right edge read back and checked against its root), unless this signer
   * is already there; from the empty tree on a store without one.
   */
  async #continueFromStore(): Promise<void> {
    const head = this.#largestTiled;
    const size = head?.treeSize ?? 0;
    if (this.#tree !== undefined && this.#tree.size >= size) {
      this.#expectUnchecked();
      return;
    }
    let tree = new TileLog();
    if (head !== undefined) {
      try {
        tree = TileLog.fromEdge(head.treeSize, await this.#tiles.edge(head.treeSize));
      } catch (error) {
        if (error instanceof RangeError || error instanceof TileMissing) {
          throw new TreeHeadRefused(`the stored tiles of checkpoint ${head.seq} are incomplete`);
        }
        throw error;
      }
      if (hex(tree.root()) !== head.rootHash) {
        throw new TreeHeadRefused(
          `the stored tiles of checkpoint ${head.seq} do not give the root it signed`,
        );
      }
      tree.takeAdded(); // entries already stored
    }
    this.#tree = tree;
    this.#walk = new LogWalk<SignedTreeHead>(tree);
    this.#committed.forgetBefore(tree.size + 1);
    this.#expectUnchecked();
  }

  /**
   * Untiled heads (signed before tiles, or by an instance not yet upgraded) beyond the tree must
   * be met on the way: the new tree must give each one's root at its size (RFC 9162 §2.1.4).
   */
  #expectUnchecked(): void {
    for (let head = this.#unchecked.shift(); head !== undefined; head = this.#unchecked.shift()) {
      if (head.treeSize > this.#tree!.size) this.#walk!.expect(head);
    }
    const { mismatched } = this.#walk!.compareNow();
    if (mismatched.length > 0) this.#mismatch(mismatched[0].seq, mismatched[0].treeSize);
  }

  /**
   * Appends the rows after the tree to it, up to {@linkcode MAX_HEAD_LEAVES} past the last stored
   * head, through the audit loop (./audit.ts), stopping before the first row that must not be
   * covered.
   *
   * @returns `more`: rows remain past the limit.
   */
  async #readRows(): Promise<{ more: boolean }> {
    const tree = this.#tree!;
    const walk = this.#walk!;
    // A key retired by a statement it signed covers nothing past its boundary.
    const limit = Math.min(
      (this.#largestTiled?.treeSize ?? 0) + MAX_HEAD_LEAVES,
      this.#retiredAt ?? Infinity,
    );
    const latest = this.#options.now() + FUTURE_ALLOWANCE_MS;
    const pages = { more: false };
    const rows = auditRows(walk, {
      pages: this.#pages(limit, pages),
      logRow: (row) =>
        ({
          seq: Number(row.seq),
          id: row.id,
          receivedAt: row.received_at,
          digest: row.digest,
        }) as LogRow,
      signedRow: signedRowOf,
      withSignatures: (low, high) => this.#rows.signedRows(low, high),
    }, {
      intake: this.#intake,
      // Rows a head of the log's keys already covers were vouched for when it was signed.
      from: Math.max((this.#largest?.treeSize ?? -1) + 1, this.#intakeFrom!),
      committed: (row) => this.#committed.check(Number(row.seq), signedFieldsOf(row)) === true,
    });
    for await (const { row, seq, findings, leaf, retired } of rows) {
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
          this.#options.onIgnored?.(
            new TreeHeadWithheld(
              seq,
              String(row.id),
              future ? "future" : retired ?? "unacknowledged",
            ),
          );
        }
        return { more: false };
      }
      const { mismatched } = walk.append(seq, leaf!);
      if (mismatched.length > 0) this.#mismatch(mismatched[0].seq, tree.size);
    }
    return { more: pages.more };
  }

  /**
   * The rows after the tree, a page at a time up to `limit` (each page starts where the tree
   * ends), with a macrotask yield between pages; `state.more` is set when rows remain past the
   * limit.
   */
  async *#pages(
    limit: number,
    state: { more: boolean },
  ): AsyncGenerator<Record<string, unknown>[]> {
    const tree = this.#tree!;
    while (tree.size < limit) {
      const rows = await this.#rows.rowsAfter(tree.size, Math.min(PAGE_ROWS, limit - tree.size));
      if (rows.length > 0) this.#committed.forgetBefore(Number(rows[0].seq));
      yield rows;
      if (rows.length < PAGE_ROWS) return;
      await yieldToEventLoop();
    }
    state.more = true;
  }

  /**
   * Signs the tree as it stands, when it grew past the published head (the empty tree too, on a
   * new store: RFC 9162 §2.1.1), and appends the head with the tile entries it completed. When
   * another instance got there first, the tree is dropped, to continue from the store's newest
   * head next time.
   */
  async #append(): Promise<SignedTreeHead | undefined> {
    const tree = this.#tree!;
    const { key, now, origin } = this.#options;
    const fromSize = this.#largestTiled?.treeSize;
    // After a rotation the new key signs the size it took over at once: the published
    // checkpoint is then under the key the discovery document names as current.
    const takenOver = this.#largestTiled !== undefined &&
      this.#largestTiled.publicKey !== key.publicKey && this.#retiredAt === undefined;
    if (
      fromSize !== undefined && (tree.size < fromSize || (tree.size === fromSize && !takenOver))
    ) {
      return undefined;
    }
    const root = tree.root();
    const fields: CheckpointFields = {
      treeSize: tree.size,
      rootHash: hex(root),
      createdAt: new Date(now()).toISOString(),
    };
    const body = checkpointBody(origin, fields.treeSize, root);
    const [signature, noteSignature] = await Promise.all([
      signCheckpoint(key, fields),
      signCheckpointNote(key.privateKey, key.publicKey, origin, body),
    ]);
    // One blob bound as bytes, not hex text for SQL's `unhex`: that text cost the signing thread
    // about nine times as much (bench/README.md, "Figures behind constants").
    const tiles = tileBytes(tree.takeAdded().flatMap((level) => level.entries));
    const seq = await this.#rows.appendHead({
      ...fields,
      fromSize: fromSize ?? 0,
      signature,
      noteSignature,
      publicKey: key.publicKey,
      tiles,
    });
    if (seq === undefined) {
      // Another instance signed from the same head first (or a writer's row stands there):
      // continue from the store's newest head at the next signing.
      this.#tree = undefined;
      return undefined;
    }
    const head: KnownHead = {
      ...fields,
      seq,
      signature,
      publicKey: key.publicKey,
      noteSignature,
      fromSize: fromSize ?? 0,
    };
    this.#largestTiled = head;
    this.#uncovered.cover(head.treeSize);
    if (head.treeSize > (this.#largest?.treeSize ?? -1)) this.#largest = head;
    return head;
  }

  #mismatch(checkpoint: number | undefined, size: number): never {
    throw new TreeHeadRefused(
      `${checkpoint === undefined ? "a checkpoint" : `checkpoint ${checkpoint}`} records a ` +
        `root for ${size} submissions that the stored rows no longer give`,
    );
  }
}
