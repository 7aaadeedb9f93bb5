/**
 * Versioned schema migrations, applied at start. Each is idempotent (`IF NOT EXISTS`, and the
 * version row is inserted with `OR IGNORE`), so several instances starting at once against one
 * database cannot trip over each other, and a rerun changes nothing.
 *
 * Append-only is enforced by the database itself (design principle 3): `BEFORE UPDATE` and
 * `BEFORE DELETE` triggers raise on every table that records what happened. No code may use
 * `INSERT OR REPLACE` on them: REPLACE deletes the old row without firing delete triggers.
 *
 * @module
 */
import type { Client } from "@libsql/client";

/** One migration: a version number and its statements. */
export interface Migration {
  /** Strictly increasing version. */
  readonly version: number;
  /** What it does, for the migrations table. */
  readonly name: string;
  /** The statements, run in one write transaction. */
  readonly statements: readonly string[];
}

/** Statements that make `table` append-only: its rows can be inserted, never changed or removed. */
export function appendOnly(table: string): string[] {
  return ["UPDATE", "DELETE"].map((operation) =>
    `CREATE TRIGGER IF NOT EXISTS ${table}_no_${operation.toLowerCase()} ` +
    `BEFORE ${operation} ON ${table} ` +
    `BEGIN SELECT RAISE(ABORT, '${table} is append-only'); END`
  );
}

/** The columns of `submissions` other than `content`, as version 1 created them. */
const SUBMISSION_COLUMNS_V1 = [
  "seq",
  "id",
  "context_id",
  "received_at",
  "surface",
  "kind",
  "content_type",
  "size",
  "digest",
  "source_hash",
  "identity_fingerprint",
  "identity_verified",
  "idempotency_key",
];

/**
 * The trigger that refuses every update of `submissions` but a redaction (version 5): content to
 * zero bytes, for an id with a redaction record, every one of `unchanged` as it was.
 */
function onlyRedaction(unchanged: readonly string[]): string {
  return `CREATE TRIGGER IF NOT EXISTS submissions_only_redaction
        BEFORE UPDATE ON submissions
        WHEN NOT (
          typeof(NEW.content) = 'blob' AND length(NEW.content) = 0
          AND EXISTS (SELECT 1 FROM redactions r WHERE r.submission_id = OLD.id)
          AND ${unchanged.map((column) => `NEW.${column} IS OLD.${column}`).join(" AND ")}
        )
        BEGIN SELECT RAISE(ABORT, 'submissions is append-only'); END`;
}

/** Every migration, oldest first. */
export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: "submissions and secrets",
    statements: [
      `CREATE TABLE IF NOT EXISTS submissions (
        seq INTEGER PRIMARY KEY,
        id TEXT NOT NULL UNIQUE,
        context_id TEXT NOT NULL,
        received_at TEXT NOT NULL,
        surface TEXT NOT NULL CHECK (surface IN ('native', 'a2a')),
        kind TEXT NOT NULL CHECK (kind IN ('structured', 'unstructured')),
        content_type TEXT NOT NULL,
        content BLOB NOT NULL,
        size INTEGER NOT NULL,
        digest TEXT NOT NULL,
        source_hash TEXT NOT NULL,
        identity_fingerprint TEXT,
        identity_verified INTEGER,
        idempotency_key TEXT
      ) STRICT`,
      ...appendOnly("submissions"),
      `CREATE INDEX IF NOT EXISTS submissions_idempotency
        ON submissions (source_hash, idempotency_key) WHERE idempotency_key IS NOT NULL`,
      `CREATE TABLE IF NOT EXISTS secrets (
        name TEXT PRIMARY KEY,
        value BLOB NOT NULL,
        created_at TEXT NOT NULL
      ) STRICT`,
      ...appendOnly("secrets"),
    ],
  },
  {
    version: 2,
    name: "review events and checkpoints",
    // The review side (review/): a reviewer's decision is an appended event, never an
    // update, so the history of who decided what stays intact; the latest event is the status.
    // Checkpoints record RFC 6962 §2.1 Merkle tree heads over the submissions, signed with the
    // Beacon's Ed25519 key, so later tampering with earlier rows is detectable (review/
    // commands/verify.ts). Both tables are append-only like the submissions they describe.
    statements: [
      `CREATE TABLE IF NOT EXISTS review_events (
        seq INTEGER PRIMARY KEY,
        submission_id TEXT NOT NULL REFERENCES submissions (id),
        status TEXT NOT NULL CHECK (status IN ('reviewed', 'dismissed', 'escalated')),
        note TEXT,
        reviewer TEXT,
        created_at TEXT NOT NULL
      ) STRICT`,
      ...appendOnly("review_events"),
      `CREATE INDEX IF NOT EXISTS review_events_submission
        ON review_events (submission_id, seq)`,
      `CREATE TABLE IF NOT EXISTS checkpoints (
        seq INTEGER PRIMARY KEY,
        tree_size INTEGER NOT NULL CHECK (tree_size >= 0),
        root_hash TEXT NOT NULL,
        created_at TEXT NOT NULL,
        signature TEXT NOT NULL,
        public_key TEXT NOT NULL
      ) STRICT`,
      ...appendOnly("checkpoints"),
    ],
  },
  {
    version: 3,
    name: "shared rate limits",
    // GCRA state for the database-backed limiter (src/limits/shared_rate.ts), shared by every
    // instance on this database. Working state, not a record: rows are updated in place and
    // forgotten once their arrival time has passed. (Superseded by version 4.)
    statements: [
      `CREATE TABLE IF NOT EXISTS rate_limits (
        key TEXT PRIMARY KEY,
        tat REAL NOT NULL,
        allowed INTEGER NOT NULL
      ) STRICT`,
    ],
  },
  {
    version: 4,
    name: "shared rate limits keyed by source hash",
    // Version 3 keyed rows by the source address itself and kept a per-row verdict. Its rows are
    // working state that expires within one period, so they are dropped, not converted: raw
    // addresses leave the database, and every source starts with a fresh budget once.
    statements: [
      "DROP TABLE IF EXISTS rate_limits",
      `CREATE TABLE rate_limits (
        key TEXT PRIMARY KEY,
        tat REAL NOT NULL
      ) STRICT`,
    ],
  },
  {
    version: 5,
    name: "review queue events, redaction records, review search index",
    // The review side (review/, docs/review.md).
    //
    // Review events gain a "new" status (set an item back), a "follow-up" status, note-only
    // events (status NULL) and `supersedes`, so a note is corrected by a new event, never an
    // update. SQLite cannot change a CHECK constraint in place; the table is rebuilt the way
    // https://sqlite.org/lang_altertable.html §7 describes, every row and `seq` copied in one
    // transaction (DROP TABLE fires no DELETE trigger, and the triggers are recreated).
    //
    // Redaction (docs/review.md, docs/threat-model.md): an operator under a legal duty appends a
    // record (who, when, why) and then the content bytes of that one row are set to empty. The
    // UPDATE trigger of version 1 is replaced by one that refuses every update but exactly
    // that: content to zero bytes, every other column unchanged, for an id with a record.
    // `digest`, `size` and `seq` stay, so the Merkle tree and the receipt still verify. DELETE
    // stays refused.
    //
    // `review_search_state` remembers how far (by `seq`) the review tool has built its
    // full-text index, so the index is filled from the review side, never by a trigger on the
    // server's insert path.
    statements: [
      `CREATE TABLE review_events_next (
        seq INTEGER PRIMARY KEY,
        submission_id TEXT NOT NULL REFERENCES submissions (id),
        status TEXT CHECK (status IN ('new', 'reviewed', 'follow-up', 'dismissed', 'escalated')),
        note TEXT,
        reviewer TEXT,
        created_at TEXT NOT NULL,
        supersedes INTEGER REFERENCES review_events (seq),
        CHECK (status IS NOT NULL OR note IS NOT NULL)
      ) STRICT`,
      `INSERT INTO review_events_next (seq, submission_id, status, note, reviewer, created_at)
        SELECT seq, submission_id, status, note, reviewer, created_at FROM review_events
        ORDER BY seq`,
      "DROP TABLE review_events",
      "ALTER TABLE review_events_next RENAME TO review_events",
      ...appendOnly("review_events"),
      `CREATE INDEX IF NOT EXISTS review_events_submission
        ON review_events (submission_id, seq)`,
      `CREATE TABLE IF NOT EXISTS redactions (
        seq INTEGER PRIMARY KEY,
        submission_id TEXT NOT NULL UNIQUE REFERENCES submissions (id),
        reason TEXT NOT NULL CHECK (length(reason) > 0),
        redacted_by TEXT NOT NULL CHECK (length(redacted_by) > 0),
        created_at TEXT NOT NULL
      ) STRICT`,
      ...appendOnly("redactions"),
      "DROP TRIGGER IF EXISTS submissions_no_update",
      onlyRedaction(SUBMISSION_COLUMNS_V1),
      `CREATE TABLE IF NOT EXISTS review_search_state (
        name TEXT PRIMARY KEY,
        indexed_through INTEGER NOT NULL
      ) STRICT`,
    ],
  },
  {
    version: 6,
    name: "database identity",
    // Working state of the file guard (src/store/file_guard.ts), not a record. Each server start
    // on an embedded file inserts a random token and keeps the newest 16; the guard reads them
    // from the file itself, WAL aside (an immutable connection). A file overwritten
    // in place (`cp backup.db beacon.db`: same inode) no longer holds the running server's
    // token, which the inode check cannot see.
    statements: [
      `CREATE TABLE IF NOT EXISTS database_identity (
        seq INTEGER PRIMARY KEY,
        token TEXT NOT NULL UNIQUE,
        stamped_at TEXT NOT NULL
      ) STRICT`,
    ],
  },
  {
    version: 7,
    name: "signed redaction records",
    // A redaction record is signed by the holder of the Beacon's key
    // (src/signing/redaction.ts), so a database writer cannot invent or backdate one and keep
    // `review verify` green. Records made before this migration have no signature; verify
    // reports them. The columns are nullable for them only: the review tool never writes one
    // without a signature.
    statements: [
      "ALTER TABLE redactions ADD COLUMN signature TEXT",
      "ALTER TABLE redactions ADD COLUMN public_key TEXT",
    ],
  },
  {
    version: 8,
    name: "idempotency index on an integer hash",
    // The index of version 1, (source_hash, idempotency_key), took two random texts (about 130
    // bytes) with every keyed insert, and was the costliest part of a row's write
    // (bench/README.md, "Figures behind constants"). New rows carry `idempotency_hash`, 48 bits of the SHA-256
    // of the source hash and the key (src/store/rows.ts, `idempotencyHash`), and are indexed by
    // that integer alone; the lookups still compare the source and the key themselves.
    //
    // Rows already stored cannot be given a hash: the table is append-only (an UPDATE is refused
    // by the trigger), and SQL has no SHA-256. They keep their old index, now partial: only rows
    // with a key and no hash. New rows never enter it, and a retry of a submission made before
    // the upgrade is still found there (`KEY_USED_SEQS` probes both). The redaction trigger is
    // recreated so that `idempotency_hash` is one of the columns an update must leave unchanged.
    statements: [
      "ALTER TABLE submissions ADD COLUMN idempotency_hash INTEGER",
      `CREATE INDEX IF NOT EXISTS submissions_idempotency_hash
        ON submissions (idempotency_hash) WHERE idempotency_hash IS NOT NULL`,
      "DROP INDEX IF EXISTS submissions_idempotency",
      `CREATE INDEX IF NOT EXISTS submissions_idempotency_unhashed
        ON submissions (source_hash, idempotency_key)
        WHERE idempotency_key IS NOT NULL AND idempotency_hash IS NULL`,
      "DROP TRIGGER IF EXISTS submissions_only_redaction",
      onlyRedaction([...SUBMISSION_COLUMNS_V1, "idempotency_hash"]),
    ],
  },
  {
    version: 9,
    name: "receipt signatures stored at intake",
    // The signature a receipt carried is stored with its row, in the same transaction
    // (src/store/rows.ts, `INSERT_SIGNATURE`), so a reviewer checks what the Beacon signed at
    // intake against the published key, and no review tool ever signs a row itself. Exactly what
    // the receipt carried: `signature`, and for a batch signature its `batch` (size, index, and
    // the audit path as a JSON array of base64url hashes). Rows stored before this migration have
    // none; the review tools say so. Keyed by the row's `seq`, not its random id: each insert then
    // appends to the end of one B-tree, where a random text key would cost an index of its own
    // and a random page per insert (measured for the idempotency index, version 8).
    statements: [
      `CREATE TABLE IF NOT EXISTS receipt_signatures (
        seq INTEGER PRIMARY KEY REFERENCES submissions (seq),
        signature TEXT NOT NULL,
        batch_size INTEGER,
        batch_index INTEGER,
        batch_path TEXT
      ) STRICT`,
      ...appendOnly("receipt_signatures"),
    ],
  },
  {
    version: 10,
    name: "where intake signatures are required",
    // A tree head vouches only for rows the server itself acknowledged: from this `seq` on,
    // every row must carry a stored intake signature that verifies (src/signing/log_audit.ts),
    // and a row without one is reported, never covered. Rows before it were stored before
    // version 9 and have none. Recorded once, when this migration runs: the first row that has
    // a stored signature, or else the next row to come. Append-only like every record, and read
    // together with the smallest signed `seq`, so a writer who raises it cannot pass a
    // made-up row after a signed one off as an old one.
    statements: [
      `CREATE TABLE IF NOT EXISTS log_settings (
        name TEXT PRIMARY KEY,
        value INTEGER NOT NULL
      ) STRICT`,
      ...appendOnly("log_settings"),
      `INSERT OR IGNORE INTO log_settings (name, value) VALUES ('intake_signatures_from',
        COALESCE((SELECT MIN(seq) FROM receipt_signatures),
          (SELECT MAX(seq) FROM submissions) + 1, 1))`,
    ],
  },
  {
    version: 11,
    name: "receipt signatures stored per batch",
    // One row per committed batch instead of one per receipt: its first and last `seq`, the
    // RFC 6962 leaf hash of every receipt it signed, in batch order (32 bytes each), and the one
    // signature (over the receipt itself for a batch of one, over the leaves' root otherwise:
    // docs/protocol-0.1.md §6.3-6.4). A receipt's audit path is recomputed from the leaves
    // (src/store/receipt_batches.ts), so nothing per receipt is written but its own row: a
    // second insert per row cost as much as the row. The rows of one batch are the `seq`s from
    // `first_seq` to `last_seq`: one transaction holds the write lock, so SQLite numbers them
    // consecutively. A leaf without a row is a receipt the idempotency check turned away in the
    // same commit (never sent). Rows of version 9 keep their `receipt_signatures`. A row's
    // batch is the newest one whose range holds it: when a database writer deleted the newest
    // rows, SQLite hands their `seq`s out again, and the batch of the rows stored under them
    // then comes after the stale one.
    statements: [
      `CREATE TABLE IF NOT EXISTS receipt_batches (
        seq INTEGER PRIMARY KEY,
        first_seq INTEGER NOT NULL,
        last_seq INTEGER NOT NULL,
        leaves BLOB NOT NULL,
        signature TEXT NOT NULL,
        CHECK (last_seq >= first_seq AND length(leaves) > 0 AND length(leaves) % 32 = 0)
      ) STRICT`,
      "CREATE INDEX IF NOT EXISTS receipt_batches_first_seq ON receipt_batches (first_seq)",
      ...appendOnly("receipt_batches"),
    ],
  },
  {
    version: 12,
    name: "the signed log's tiles and checkpoint notes",
    // The log's state is its tiles (c2sp.org/tlog-tiles): each head now carries, in its own row
    // and so in the transaction that appends it, the tile entries it completed since the size
    // it extends (`from_size`), and its C2SP checkpoint note signature (src/signing/note.ts), so
    // any instance or new process continues the log from the newest head instead of reading
    // every row again (src/store/log_rows.ts). Per key, one such head ends at a size and one
    // that adds leaves starts at it: the heads form one chain (the empty tree's head, which adds
    // none, aside), and two instances never sign one size twice.
    // The log's origin, the name every checkpoint carries, is recorded once in `log_names`.
    statements: [
      "ALTER TABLE checkpoints ADD COLUMN from_size INTEGER",
      "ALTER TABLE checkpoints ADD COLUMN note_signature TEXT",
      "ALTER TABLE checkpoints ADD COLUMN tiles BLOB",
      `CREATE UNIQUE INDEX IF NOT EXISTS checkpoints_tiled_size
        ON checkpoints (public_key, tree_size) WHERE note_signature IS NOT NULL`,
      `CREATE UNIQUE INDEX IF NOT EXISTS checkpoints_tiled_from
        ON checkpoints (public_key, from_size)
        WHERE note_signature IS NOT NULL AND tree_size > from_size`,
      `CREATE TABLE IF NOT EXISTS log_names (
        name TEXT PRIMARY KEY,
        value TEXT NOT NULL
      ) STRICT`,
      ...appendOnly("log_names"),
    ],
  },
  {
    version: 13,
    name: "the signing key may leave the database",
    // Earlier versions kept the generated Ed25519 seed in `secrets`; now it lives in a key file
    // or the environment (docs/keys.md), and `review key move-out` removes the kept one. That is
    // the one delete `secrets` allows: a kept private key is a liability, not a record, and
    // nothing in the log depends on it (the heads and receipts carry the public key). Every
    // other secret stays append-only. A writer who deletes the key gains nothing: the next
    // start either has the key from outside or is refused (no key, or a key change).
    statements: [
      "DROP TRIGGER IF EXISTS secrets_no_delete",
      `CREATE TRIGGER IF NOT EXISTS secrets_no_delete_but_signing_key
        BEFORE DELETE ON secrets
        WHEN OLD.name <> 'signing-key'
        BEGIN SELECT RAISE(ABORT, 'secrets is append-only'); END`,
    ],
  },
  {
    version: 14,
    name: "signed key rotation statements",
    // The log continues across a change of its signing key (docs/keys.md, "Rotating the key"):
    // each rotation is recorded once, signed by the new key (and by the previous one when its
    // holder still has it, src/signing/rotation.ts), with the last `seq` the previous key vouches
    // for. One statement per new key (two instances starting with it record one; a key is made
    // current once, so a retired key cannot come back). Append-only like every record: the
    // boundary that contains a leaked key must never move.
    statements: [
      `CREATE TABLE IF NOT EXISTS key_rotations (
        seq INTEGER PRIMARY KEY,
        previous_key TEXT NOT NULL,
        new_key TEXT NOT NULL UNIQUE,
        last_seq INTEGER NOT NULL,
        log TEXT NOT NULL,
        created_at TEXT NOT NULL,
        new_signature TEXT NOT NULL,
        previous_signature TEXT
      ) STRICT`,
      ...appendOnly("key_rotations"),
    ],
  },
];

/** Applies every migration not yet recorded. Safe to call at every start. Returns the count. */
export async function migrate(client: Client, now: () => number = Date.now): Promise<number> {
  return (await migrateSchema(client, now)).applied;
}

/**
 * Applies every migration not yet recorded, and says the schema version before (`from`, 0 for a
 * new database) and after (`to`), for the start's one "from version A to B" log line.
 */
export async function migrateSchema(
  client: Client,
  now: () => number = Date.now,
): Promise<{ from: number; to: number; applied: number }> {
  await client.execute(
    `CREATE TABLE IF NOT EXISTS schema_migrations (
      version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL) STRICT`,
  );
  const applied = new Set(
    (await client.execute("SELECT version FROM schema_migrations")).rows.map((row) =>
      Number(row.version)
    ),
  );
  let count = 0;
  for (const migration of MIGRATIONS) {
    if (applied.has(migration.version)) continue;
    await client.batch([
      ...migration.statements,
      {
        sql: "INSERT OR IGNORE INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)",
        args: [migration.version, migration.name, new Date(now()).toISOString()],
      },
    ], "write");
    count++;
  }
  const from = Math.max(0, ...applied);
  return { from, to: Math.max(from, ...MIGRATIONS.map((m) => m.version)), applied: count };
}
