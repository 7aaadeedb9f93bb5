/**
 * Every SQL statement of the signed log (src/transparency/), in one place: its heads and the tiles
 * they carry (`checkpoints`, migrations 2 and 12), its name (`log_names`), its key rotations
 * (`key_rotations`, migration 14), and the submissions read as leaves with their stored intake
 * signatures.
 *
 * A head signed since migration 12 carries, in the same row and so in the same transaction, the
 * tile entries it completed (`tiles`): for each level L from 0, the entries `⌊from/256^L⌋` to
 * `⌊size/256^L⌋ − 1`, 32 bytes each, levels one after the other (src/signing/tiles.ts). A tile is
 * read back from the heads whose ranges meet it. At most one such head per key ends at a size and
 * at most one that adds leaves starts at it (two partial unique indexes), so the heads of one key
 * form one chain and two instances never sign two heads for one size.
 *
 * Across a rotation the indexes stay per key, and the log is still one chain: the new key's first
 * head starts (`from_size`) at the previous key's newest head at or below its boundary, and a
 * previous key's heads past its boundary are not heads of the log (src/signing/key_history.ts).
 * Two keys' heads over the same range carry the same tile entries (the rows decide them), so a
 * tile is read from the heads of whichever accepted key hold it. The unique indexes are not made
 * across keys on purpose: a copy of a retired key could then take every future size first.
 *
 * @module
 */
import type { Database } from "./database.ts";
import { INTAKE_SIGNATURES_FROM, signatureColumns, signatureJoin } from "./rows.ts";

/** One statement at a time with a deadline (`Database.statements`). */
export type Statements = Database["statements"];

/**
 * The columns of a signed tree head in `checkpoints`, in `SELECT` form: what signing's
 * `checkpointFromRow` (src/signing/checkpoint.ts) maps a row from.
 */
export const CHECKPOINT_COLUMNS = "seq, tree_size, root_hash, created_at, signature, public_key";

/**
 * The columns of a rotation statement in `key_rotations`, in `SELECT` form: what signing's
 * `rotationFromRow` (src/signing/rotation.ts) maps a row from.
 */
export const ROTATION_COLUMNS =
  "previous_key, new_key, last_seq, log, created_at, new_signature, previous_signature";

/** The columns of a head row as the log reads it: the JSON head's, then the note's. */
export const HEAD_COLUMNS = `${CHECKPOINT_COLUMNS}, from_size, note_signature`;

/** A head row's tile-carrying columns as {@linkcode LogRows.tileHeads} reads them. */
export interface TileHeadRow {
  readonly seq: number;
  /** The key that signed it. */
  readonly publicKey: string;
  readonly fromSize: number;
  readonly treeSize: number;
  readonly rootHash: string;
  readonly noteSignature: string;
  readonly tiles: Uint8Array;
}

/**
 * What {@linkcode LogRows.recordRotation} stores: a signed rotation statement's members
 * (`RotationStatement`, src/signing/rotation.ts).
 */
export interface NewRotation {
  readonly previousKey: string;
  readonly newKey: string;
  readonly lastSeq: number;
  readonly log: string;
  readonly createdAt: string;
  readonly newSignature: string;
  /** Absent when the previous key was not at hand to sign (stored as null). */
  readonly previousSignature?: string;
}

/** What {@linkcode LogRows.appendHead} stores. */
export interface NewHead {
  readonly fromSize: number;
  readonly treeSize: number;
  readonly rootHash: string;
  readonly createdAt: string;
  readonly signature: string;
  readonly noteSignature: string;
  readonly publicKey: string;
  /** The tile entries completed since `fromSize`, 32 bytes each (see the module doc). */
  readonly tiles: Uint8Array;
}

function bytesOf(value: unknown): Uint8Array {
  if (value instanceof Uint8Array) return value;
  if (value instanceof ArrayBuffer) return new Uint8Array(value);
  return new Uint8Array(0);
}

/** The log's statements over one database. */
export class LogRows {
  readonly #statements: Statements;

  constructor(statements: Statements) {
    this.#statements = statements;
  }

  /** Head rows (any key) appended after row `after`, oldest first, at most `limit`. */
  headsAfter(after: number, limit: number): Promise<Record<string, unknown>[]> {
    return this.#statements.run(
      `SELECT ${HEAD_COLUMNS} FROM checkpoints WHERE seq > :after ORDER BY seq LIMIT :limit`,
      { after, limit },
    );
  }

  /**
   * Submissions after `seq` `after` with the members a leaf and a receipt are made of, read as
   * one JSON array: every row the log covers is read once, and a row of a Hrana result is JSON the
   * client decodes value by value into an object with a property per column, which costs more
   * than one array, on sqld and embedded alike (`bench/readback_bench.ts`; bench/README.md
   * "Figures behind constants"). The table is `STRICT`, so every value is one JSON can hold.
   */
  async rowsAfter(after: number, limit: number): Promise<Record<string, unknown>[]> {
    const [{ rows }] = await this.#statements.run(
      "SELECT json_group_array(json_array(seq, id, received_at, digest, kind, size)) AS rows " +
        "FROM (SELECT seq, id, received_at, digest, kind, size FROM submissions " +
        "WHERE seq > :after ORDER BY seq LIMIT :limit)",
      { after, limit },
    );
    // An aggregate's order is not promised by SQL (and sqld's parser refuses `ORDER BY` inside
    // one), so the rows are put in `seq` order here: a sorted array costs one pass.
    return (JSON.parse(String(rows)) as [number, ...unknown[]][])
      .sort((a, b) => a[0] - b[0])
      .map(([seq, id, received_at, digest, kind, size]) => ({
        seq,
        id,
        received_at,
        digest,
        kind,
        size,
      }));
  }

  /** Submissions `low` to `high` with their stored intake signatures. */
  signedRows(low: number, high: number): Promise<Record<string, unknown>[]> {
    return this.#statements.run(
      "SELECT submissions.seq AS seq, id, received_at, digest, kind, size, " +
        `${signatureColumns("submissions")} FROM submissions ${signatureJoin("submissions")} ` +
        "WHERE submissions.seq >= :low AND submissions.seq <= :high ORDER BY submissions.seq",
      { low, high },
    );
  }

  /** Where stored intake signatures are required, as read (`intakeSignaturesFrom`'s inputs). */
  async intakeSignaturesFrom(): Promise<{ recorded: unknown; firstSigned: unknown }> {
    const [row] = await this.#statements.run(INTAKE_SIGNATURES_FROM, {});
    return { recorded: row?.recorded, firstSigned: row?.first_signed };
  }

  /**
   * The log's origin: the one recorded, or `candidate` recorded now (the first signer's). It
   * never changes once recorded: every checkpoint of the log names it.
   */
  async origin(candidate: string): Promise<string> {
    await this.#statements.run(
      "INSERT OR IGNORE INTO log_names (name, value) VALUES ('origin', :candidate)",
      { candidate },
    );
    const [row] = await this.#statements.run(
      "SELECT value FROM log_names WHERE name = 'origin'",
      {},
    );
    return String(row?.value ?? candidate);
  }

  /**
   * Appends a head with its tiles, unless a head of this key with tiles already ends at its size
   * or starts where it starts (another instance signed first, or a writer's row is in the way).
   *
   * @returns The new row's `seq`, or undefined when none was appended.
   */
  async appendHead(head: NewHead): Promise<number | undefined> {
    const [row] = await this.#statements.run(
      "INSERT INTO checkpoints (tree_size, root_hash, created_at, signature, public_key, " +
        "from_size, note_signature, tiles) SELECT :size, :root, :createdAt, :signature, :key, " +
        ":from, :note, :tiles WHERE NOT EXISTS (SELECT 1 FROM checkpoints " +
        "WHERE public_key = :key AND note_signature IS NOT NULL " +
        "AND (tree_size = :size OR (from_size = :from AND tree_size > from_size))) " +
        "RETURNING seq",
      {
        size: head.treeSize,
        root: head.rootHash,
        createdAt: head.createdAt,
        signature: head.signature,
        key: head.publicKey,
        from: head.fromSize,
        note: head.noteSignature,
        tiles: head.tiles,
      },
    );
    return row === undefined ? undefined : Number(row.seq);
  }

  /**
   * Every key rotation statement's row ({@linkcode ROTATION_COLUMNS}), oldest first (few: one
   * per key change).
   */
  rotations(): Promise<Record<string, unknown>[]> {
    return this.#statements.run(`SELECT ${ROTATION_COLUMNS} FROM key_rotations ORDER BY seq`, {});
  }

  /** Up to `limit` head rows (any key; {@linkcode CHECKPOINT_COLUMNS}), newest first. */
  newestHeads(limit: number): Promise<Record<string, unknown>[]> {
    return this.#statements.run(
      `SELECT ${CHECKPOINT_COLUMNS} FROM checkpoints ORDER BY seq DESC LIMIT :limit`,
      { limit },
    );
  }

  /** The largest `seq` stored (0 for an empty log): a rotation's boundary. */
  async lastSeq(): Promise<number> {
    const [row] = await this.#statements.run(
      "SELECT COALESCE(MAX(seq), 0) AS last FROM submissions",
      {},
    );
    return Number(row?.last ?? 0);
  }

  /**
   * Records a rotation statement unless one for its new key is there already (another instance
   * recorded it first: the one recorded stands, and the caller reads it back).
   */
  async recordRotation(statement: NewRotation): Promise<void> {
    await this.#statements.run(
      "INSERT OR IGNORE INTO key_rotations (previous_key, new_key, last_seq, log, created_at, " +
        "new_signature, previous_signature) VALUES (:previous, :next, :last, :log, :createdAt, " +
        ":newSignature, NULLIF(:previousSignature, ''))",
      {
        previous: statement.previousKey,
        next: statement.newKey,
        last: statement.lastSeq,
        log: statement.log,
        createdAt: statement.createdAt,
        newSignature: statement.newSignature,
        previousSignature: statement.previousSignature ?? "",
      },
    );
  }

  /**
   * The heads of any of `publicKeys` with tiles whose entries at `level` meet entries `low` to
   * `high − 1` there, in tree order (each head's entries at level L are `⌊from/256^L⌋` to
   * `⌊size/256^L⌋ − 1`).
   */
  async tileHeads(
    publicKeys: readonly string[],
    level: number,
    low: number,
    high: number,
  ): Promise<TileHeadRow[]> {
    const span = 256 ** level;
    const keys = Object.fromEntries(publicKeys.map((key, i) => [`key${i}`, key]));
    const rows = await this.#statements.run(
      "SELECT seq, from_size, tree_size, root_hash, note_signature, tiles, public_key " +
        `FROM checkpoints WHERE public_key IN (${
          Object.keys(keys).map((name) => ":" + name).join(", ")
        }) AND note_signature IS NOT NULL AND tree_size >= :least ` +
        "AND from_size < :most AND tree_size / :span > from_size / :span ORDER BY tree_size",
      { ...keys, least: (low + 1) * span, most: high * span, span },
    );
    return rows.map((row) => ({
      seq: Number(row.seq),
      publicKey: String(row.public_key),
      fromSize: Number(row.from_size),
      treeSize: Number(row.tree_size),
      rootHash: String(row.root_hash),
      noteSignature: String(row.note_signature),
      tiles: bytesOf(row.tiles),
    }));
  }
}
