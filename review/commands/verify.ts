/**
 * `review verify`: integrity of the whole store, then, when the holder of the signing key runs
 * it, a new signed checkpoint.
 *
 * 1. Every submission, in `seq` order (keyset pages, data/queries.ts): the SHA-256 digest of the
 *    stored bytes is recomputed and compared with the stored `digest`, the stored `size` with
 *    the byte count, and `seq` must have no gaps (SQLite gives a new row the largest rowid plus
 *    one, so a gap means rows were deleted). A redacted row (a redaction record, and zero
 *    content bytes: the one change the database allows) is reported as redacted, not as a
 *    problem: its digest and size stay those of what was received. Its record must be signed by
 *    a trusted key over the row's id and digest, and dated at or after the row's receipt time;
 *    an unsigned, forged or backdated record is a problem, and so is emptied content without a
 *    record (its digest no longer matches).
 * 2. The Merkle tree of RFC 6962 §2.1 is rebuilt over the rows' leaf data (merkle.ts), and at
 *    every recorded checkpoint's `tree_size` the root over that prefix must equal the recorded
 *    `root_hash`. A checkpoint must also carry a valid Ed25519 signature (signing/checkpoint.ts)
 *    by a trusted key: `--trust KEY` (repeatable) when given, else the public half of
 *    `BEACON_SIGNING_KEY`, else the public half of the key the server stored. Without any of
 *    them the run fails and says so: it never makes up a key of its own. Roots kept outside the
 *    database can be checked the same way with `--root SIZE:HEX` (repeatable).
 * 3. Every mismatch is reported with its row or checkpoint, and the exit status is 1 if there
 *    was any. A store with submissions but no checkpoint and no `--root` fails too: nothing
 *    vouches for it. Only when nothing is wrong, the log grew since the latest checkpoint, and
 *    `BEACON_SIGNING_KEY` is given (the tool holds no private key unless a reviewer is handed
 *    one on purpose), a new checkpoint is signed and appended; `--no-checkpoint` makes the run
 *    read-only whatever the environment says. A checkpoint is never appended over a store known
 *    to be inconsistent: the signature would vouch for the damage.
 *
 * @module
 */
import {
  followTrust,
  fromBase64url,
  hex,
  KeyHistory,
  leafHash,
  LogWalk,
  MerkleAccumulator,
  RangedIntakeSignatures,
  type RowFinding,
  sha256Digest,
  signCheckpoint,
  type SigningKey,
  validRotations,
  verifyCheckpoint,
  verifyRedaction,
} from "../../src/signing/mod.ts";
import { auditRows } from "../../src/transparency/audit.ts";
import { appendCheckpoint } from "../data/appends.ts";
import {
  batchSigned,
  intakeSignaturesStart,
  type ShadowedBatch,
  shadowedBatches,
  signedFieldsOf,
} from "../data/receipt_signature.ts";
import { configuredKey, storedPublicKey, storedRotations } from "../data/keys.ts";
import {
  databaseConfig,
  openForAppending,
  openForReading,
  type ReviewDatabase,
} from "../data/database.ts";
import { CliError, type Context } from "../io.ts";
import { type OptionValues, widthFrom } from "./options.ts";
import { type CheckpointRow, checkpoints } from "../data/events.ts";
import {
  hasRedactions,
  type Redaction,
  submissionPages,
  type SubmissionRow,
} from "../data/queries.ts";
import { Findings, safeBlock, safeText } from "../render/mod.ts";

/** The options of `verify`. */
export const VERIFY_OPTIONS = {
  "no-checkpoint": { type: "boolean" },
  trust: { type: "string", multiple: true },
  root: { type: "string", multiple: true },
} as const;

/** A root the tree must have at some size: a recorded checkpoint, or one given with --root. */
interface Expectation {
  readonly label: string;
  readonly treeSize: number;
  readonly rootHash: string;
  readonly external: boolean;
}

function externalRoots(values: OptionValues): Expectation[] {
  return ((values.root as string[] | undefined) ?? []).map((text) => {
    const match = /^([0-9]{1,15}):([0-9a-f]{64})$/.exec(text);
    if (match === null) {
      throw new CliError("Cannot parse --root: give TREE_SIZE:ROOT_HASH (64 lowercase hex)", 2);
    }
    return {
      label: `root given with --root for tree size ${match[1]}`,
      treeSize: Number(match[1]),
      rootHash: match[2],
      external: true,
    };
  });
}

async function trustedKeys(
  values: OptionValues,
  key: SigningKey | undefined,
  database: ReviewDatabase,
): Promise<{ keys: Set<string>; source: string }> {
  const given = (values.trust as string[] | undefined) ?? [];
  for (const text of given) {
    if (fromBase64url(text)?.length !== 32) {
      throw new CliError(
        "Cannot parse --trust: give a raw Ed25519 public key in base64url (43 characters)",
        2,
      );
    }
  }
  if (given.length > 0) return { keys: new Set(given), source: "--trust" };
  if (key !== undefined) return { keys: new Set([key.publicKey]), source: "BEACON_SIGNING_KEY" };
  const stored = await storedPublicKey(database);
  if (stored !== undefined) return { keys: new Set([stored]), source: "the stored key" };
  return { keys: new Set(), source: "none" };
}

/**
 * What is wrong with a row's redaction record, or undefined when it holds: it is signed
 * (src/signing/redaction.ts) by a trusted key over this row's id and digest and its own time,
 * reason and operator, and that time is not before the row was received. A database writer
 * without the key can neither make such a record nor backdate one.
 */
async function redactionFlaw(
  row: SubmissionRow,
  redaction: Redaction,
  trusted: ReadonlySet<string>,
): Promise<string | undefined> {
  if (redaction.signature === null || redaction.publicKey === null) {
    return "is not signed (only the holder of the signing key may redact)";
  }
  const fields = {
    id: row.id,
    digest: row.digest,
    reason: redaction.reason,
    by: redaction.by,
    createdAt: redaction.createdAt,
  };
  if (!await verifyRedaction(redaction.publicKey, fields, redaction.signature)) {
    return "has a signature that does not verify (forged or altered)";
  }
  if (!trusted.has(redaction.publicKey)) {
    return `is signed by ${safeText(redaction.publicKey)}, not a trusted key`;
  }
  if (!(Date.parse(redaction.createdAt) >= Date.parse(row.receivedAt))) {
    return `is dated ${safeText(redaction.createdAt)}, before the submission was received ` +
      `(${safeText(row.receivedAt)})`;
  }
  return undefined;
}

/**
 * The keys the pinned ones lead to through the store's rotation statements
 * (src/signing/key_history.ts): forwards through a statement the pinned key signed, backwards
 * from a pinned new key to the rows its statement gives the previous key. Each key vouches for
 * its range of rows only. Says which statements it followed.
 */
async function keyChain(
  database: ReviewDatabase,
  trusted: ReadonlySet<string>,
  report: Report,
): Promise<KeyHistory> {
  const { origin, statements } = await storedRotations(database);
  if (origin === undefined || statements.length === 0) return KeyHistory.whole(trusted);
  const { history, followed } = followTrust(trusted, await validRotations(statements, origin));
  for (const statement of followed) {
    await report.say(
      `followed the rotation statement signed by the trusted key ${statement.previousKey} to ` +
        `${statement.newKey} (the previous key vouches for rows up to ${statement.lastSeq}, the ` +
        `new key for the rows after)`,
    );
  }
  for (const range of history.ranges) {
    if (range.retiredBy === undefined || followed.includes(range.retiredBy)) continue;
    await report.say(
      `the rotation statement signed by ${range.retiredBy.newKey} names ${range.publicKey} as ` +
        `the key of rows ${range.firstSeq} to ${range.lastSeq}`,
    );
  }
  return history;
}

function describe(checkpoint: CheckpointRow): string {
  return `checkpoint ${checkpoint.seq} (tree size ${checkpoint.treeSize}, ` +
    `${safeText(checkpoint.createdAt)})`;
}

/** How a run reports: `say` a line, or count and print a `PROBLEM` line. */
interface Report {
  readonly say: (text: string) => Promise<void>;
  readonly problem: (text: string) => Promise<void>;
}

/**
 * Checks every recorded checkpoint's signature and key, and has the walk expect its root (and
 * every `--root`) at its size.
 */
async function expectCheckpoints(
  recorded: readonly CheckpointRow[],
  external: readonly Expectation[],
  trust: { keys: ReadonlySet<string>; source: string; history: KeyHistory },
  walk: LogWalk<Expectation>,
  report: Report,
): Promise<void> {
  for (const checkpoint of recorded) {
    const fields = {
      treeSize: checkpoint.treeSize,
      rootHash: checkpoint.rootHash,
      createdAt: checkpoint.createdAt,
    };
    if (!await verifyCheckpoint(checkpoint.publicKey, fields, checkpoint.signature)) {
      await report.problem(`${describe(checkpoint)}: the signature does not verify`);
    } else if (
      trust.keys.has(checkpoint.publicKey) &&
      !trust.history.mayCover(checkpoint.publicKey, checkpoint.treeSize)
    ) {
      const range = trust.history.retired(checkpoint.publicKey)!;
      await report.problem(
        `${describe(checkpoint)}: signed by the retired key ${safeText(checkpoint.publicKey)} ` +
          `past its rotation boundary (row ${range.lastSeq}): a copy of a retired key? ` +
          "(docs/keys.md)",
      );
    } else if (!trust.keys.has(checkpoint.publicKey)) {
      await report.problem(
        `${describe(checkpoint)}: signed by ${safeText(checkpoint.publicKey)}, not a key ` +
          `trusted by ${trust.source}`,
      );
    }
    walk.expect({ ...checkpoint, label: describe(checkpoint), external: false });
  }
  external.forEach((root) => walk.expect(root));
}

/** What the walk over the rows counted. */
interface RowTally {
  digestMismatches: number;
  redacted: string[];
  matched: number;
  externalMatched: number;
}

/**
 * Every row in order through the log's audit loop (src/transparency/audit.ts, shared with the
 * server's head signer, which stops at the first finding where this reports them all), plus what
 * only a reader of the content can check: digests, sizes and redaction records.
 */
async function walkRows(
  database: ReviewDatabase,
  trust: { keys: ReadonlySet<string>; source: string; history: KeyHistory },
  walk: LogWalk<Expectation>,
  report: Report,
): Promise<RowTally> {
  const tally: RowTally = { digestMismatches: 0, redacted: [], matched: 0, externalMatched: 0 };
  const compared = async (due: { matched: Expectation[]; mismatched: Expectation[] }) => {
    for (const expectation of due.mismatched) {
      await report.problem(
        `${expectation.label}: recorded root ${safeText(expectation.rootHash)} but the ` +
          `first ${walk.size} submissions now give ${hex(walk.root())}`,
      );
    }
    for (const expectation of due.matched) {
      if (expectation.external) tally.externalMatched++;
      else tally.matched++;
    }
  };
  await compared(walk.compareNow()); // tree size 0
  // A head vouches only for rows the Beacon acknowledged: each carries the intake signature
  // stored in its own transaction. Without a key to trust, no signature can be checked: no row
  // is judged by one.
  const from = trust.keys.size === 0 ? Infinity : await intakeSignaturesStart(database);
  const reused = new Map<ShadowedBatch, number[]>(
    (await shadowedBatches(database)).map((batch) => [batch, []]),
  );
  const rows = auditRows(walk, {
    pages: submissionPages(database.client, database.schema, {}),
    logRow: (row) => row,
    signedRow: (row) => ({
      seq: row.seq,
      fields: signedFieldsOf(row),
      stored: row.receiptSignature ?? undefined,
    }),
  }, {
    intake: new RangedIntakeSignatures(trust.history),
    from,
  });
  for await (const { row, findings, leaf, retired } of rows) {
    const where = `row ${row.seq} (receipt ${safeText(row.id)})`;
    for (const finding of findings) {
      // A row past a retired key's boundary that the retired key signed: a copy of it at work.
      await report.problem(
        retired === undefined || finding.kind !== "unacknowledged"
          ? rowProblem(finding, where, row, trust.source)
          : `${where}: its intake signature is by the retired key ` +
            `${safeText(retired.publicKey)}, past its rotation boundary (row ` +
            `${retired.lastSeq}): a copy of a retired key? no head may cover it (docs/keys.md)`,
      );
    }
    // A batch row that names this `seq` but signed another receipt, while this row's own
    // signature verifies: the row it signed was deleted and its `seq` handed out again, which
    // leaves no gap to see (migration 11).
    if (row.seq >= from && !findings.some((finding) => finding.kind === "unacknowledged")) {
      for (const [batch, seqs] of reused) {
        if (row.seq >= batch.takenFrom && row.seq <= batch.lastSeq && !batchSigned(batch, row)) {
          seqs.push(row.seq);
        }
      }
    }
    await checkContent(row, where, trust.keys, tally, report);
    // A row that cannot be a leaf still takes its place, so later roots are compared as far as
    // they can be.
    const placeholder = () =>
      leafHash(new TextEncoder().encode(`${row.seq} ${row.id} ${row.receivedAt} ${row.digest}`));
    await compared(walk.append(row.seq, leaf ?? placeholder()));
  }
  for (const [batch, seqs] of reused) {
    if (seqs.length === 0) continue;
    const range = (low: number, high: number) =>
      low === high ? `row ${low}` : `rows ${low} to ${high}`;
    await report.problem(
      `receipt batch ${batch.seq} (${range(batch.firstSeq, batch.lastSeq)}) signed other ` +
        `receipts than ${range(seqs[0], seqs.at(-1)!)} now ${
          seqs.length === 1 ? "holds, which carries a valid signature of its" : "hold, which " +
            "carry valid signatures of their"
        } own: rows in that range were deleted and their seqs reused (by a database writer?)`,
    );
  }
  for (const expectation of walk.unreached()) {
    await report.problem(
      `${expectation.label}: covers ${expectation.treeSize} submissions but only ` +
        `${walk.size} exist (rows removed?)`,
    );
  }
  return tally;
}

/** The `PROBLEM` text of a finding of the log walk. */
function rowProblem(
  finding: RowFinding,
  where: string,
  row: SubmissionRow,
  trustSource: string,
): string {
  switch (finding.kind) {
    case "missing":
      return finding.from === finding.to
        ? `row ${finding.from} is missing (deleted?)`
        : `rows ${finding.from} to ${finding.to} are missing (deleted?)`;
    case "unencodable":
      return `${where}: its columns cannot be encoded as a leaf (unpaired surrogate)`;
    case "unacknowledged":
      return `${where}: ` +
        (row.receiptSignature === null
          ? "no intake signature is stored (the Beacon did not acknowledge this row: " +
            "inserted by a database writer?)"
          : `its stored intake signature does not verify under a key trusted by ` +
            `${trustSource} (the Beacon did not acknowledge this row as it is: inserted ` +
            "or changed by a database writer?)");
  }
}

/** The content checks of one row: its redaction record, or its digest and size. */
async function checkContent(
  row: SubmissionRow,
  where: string,
  trusted: ReadonlySet<string>,
  tally: RowTally,
  report: Report,
): Promise<void> {
  if (row.redaction !== null) {
    const flaw = await redactionFlaw(row, row.redaction, trusted);
    if (flaw !== undefined) await report.problem(`${where}: redaction record ${flaw}`);
  }
  if (row.redaction !== null && row.content.length === 0) {
    tally.redacted.push(
      `${where}: content redacted ${safeText(row.redaction.createdAt)} by ` +
        `${safeText(row.redaction.by)}; digest and size kept as received`,
    );
    return;
  }
  const actual = sha256Digest(row.content);
  if (actual !== row.digest) {
    tally.digestMismatches++;
    await report.problem(
      `${where}: stored digest ${safeText(row.digest)} but the content hashes to ${actual}`,
    );
  }
  if (row.size !== row.content.length) {
    await report.problem(
      `${where}: stored size ${row.size} but ${row.content.length} bytes are stored`,
    );
  }
}

/**
 * Runs `verify`.
 *
 * @param context Outputs, environment, clock.
 * @param values Parsed options.
 * @returns 0 when everything matched, 1 when any problem was found.
 */
export async function verifyCommand(context: Context, values: OptionValues): Promise<number> {
  const external = externalRoots(values);
  const configured = await configuredKey(context);
  // Only the holder of the key appends; everyone else reads.
  const key = values["no-checkpoint"] === true ? undefined : configured;
  const config = databaseConfig(values.database as string, context.env);
  const database = key === undefined
    ? await openForReading(config)
    : await openForAppending(config, context.now);
  try {
    const pinned = await trustedKeys(values, configured, database);
    const width = widthFrom(values, context.terminalColumns);
    let problems = 0;
    const report: Report = {
      say: (text) =>
        context.stdout.line(
          safeBlock(text, new Findings(), { width, continuation: "    ", defang: false })
            .join("\n"),
        ),
      problem: async (text) => {
        problems++;
        // One line per problem, never wrapped, so `grep PROBLEM` finds each one whole.
        await context.stdout.line("PROBLEM: " + text);
      },
    };
    // The pinned keys and the keys their rotation statements lead to, each for its rows.
    const history = await keyChain(database, pinned.keys, report);
    const trust = { keys: new Set(history.keys()), source: pinned.source, history };
    // Checkpoints: signatures first, then roots as the tree grows past each size.
    const recorded = await checkpoints(database.client, database.schema);
    if (trust.keys.size === 0 && (recorded.length > 0 || await hasRedactions(database))) {
      throw new CliError(
        `Cannot verify the ${recorded.length > 0 ? "checkpoints" : "redactions"}: there is no ` +
          "key to trust (the stored signing key is missing, and neither BEACON_SIGNING_KEY nor " +
          "--trust PUBLIC_KEY is given)",
      );
    }
    const walk = new LogWalk<Expectation>(new MerkleAccumulator());
    await expectCheckpoints(recorded, external, trust, walk, report);
    const tally = await walkRows(database, trust, walk, report);
    const root = hex(walk.root());
    await report.say(
      `checked ${walk.size} submission${walk.size === 1 ? "" : "s"} ` +
        `(${tally.digestMismatches} digest mismatch${tally.digestMismatches === 1 ? "" : "es"}, ` +
        `${tally.redacted.length} redacted) and ` +
        `${recorded.length} checkpoint${recorded.length === 1 ? "" : "s"} ` +
        `(${tally.matched} root${tally.matched === 1 ? "" : "s"} matched)`,
    );
    for (const line of tally.redacted) await report.say("redacted: " + line);
    if (external.length > 0) {
      await report.say(
        `${tally.externalMatched} of ${external.length} roots given with --root matched`,
      );
    }
    await report.say(`tree size ${walk.size}, root ${root}`);
    if (problems > 0) {
      await report.say(
        `${problems} problem${problems === 1 ? "" : "s"} found` +
          (key === undefined ? "" : "; no checkpoint appended (it would vouch for them)"),
      );
      return 1;
    }
    return await conclude(context, database, values, key, {
      size: walk.size,
      root,
      latest: recorded.at(-1),
      covered: Math.max(recorded.at(-1)?.treeSize ?? 0, ...external.map((r) => r.treeSize)),
      anyRecord: recorded.length > 0 || external.length > 0,
    }, report);
  } finally {
    await database.close();
  }
}

/**
 * The end of a run without problems: says what is not yet covered, or (with the key) appends a
 * checkpoint over the log as verified.
 */
async function conclude(
  context: Context,
  database: ReviewDatabase,
  values: OptionValues,
  key: SigningKey | undefined,
  log: {
    size: number;
    root: string;
    latest: CheckpointRow | undefined;
    covered: number;
    anyRecord: boolean;
  },
  report: Report,
): Promise<number> {
  const { size, root, latest, covered } = log;
  if (key === undefined) {
    if (size > 0 && !log.anyRecord) {
      await report.say(
        "FAILED: no checkpoint and no --root covers these submissions, so nothing shows they " +
          "were not changed; the server signs one at a graceful stop and every " +
          "BEACON_CHECKPOINT_INTERVAL (unless it is off), or the holder of the signing key " +
          "runs verify with BEACON_SIGNING_KEY",
      );
      return 1;
    }
    await report.say(
      "no problems found" +
        (size > covered
          ? `; ${size - covered} submission${
            size - covered === 1 ? "" : "s"
          } after the latest checkpoint not yet covered (no checkpoint appended: ` +
            (values["no-checkpoint"] === true
              ? "--no-checkpoint)"
              : "BEACON_SIGNING_KEY is not given)")
          : ""),
    );
    return 0;
  }
  if (latest !== undefined && latest.treeSize === size) {
    await report.say(
      `no problems found; no checkpoint appended: the log has not grown since checkpoint ` +
        `${latest.seq}`,
    );
    return 0;
  }
  const head = {
    treeSize: size,
    rootHash: root,
    createdAt: new Date(context.now()).toISOString(),
  };
  const signature = await signCheckpoint(key, head);
  const seq = await appendCheckpoint(database.client, head, signature, key.publicKey);
  await report.say(
    `no problems found; appended checkpoint ${seq} (tree size ${head.treeSize}, ` +
      `${head.createdAt})`,
  );
  await report.say(`signed by key ${key.publicKey}`);
  await report.say(`(fingerprint ${key.fingerprint})`);
  return 0;
}
