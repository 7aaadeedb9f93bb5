/**
 * `review verify`: integrity of the whole store, then a new signed checkpoint.
 *
 * 1. Every submission, in `seq` order (keyset pages of 500): the SHA-256 digest of the stored
 *    bytes is recomputed and compared with the stored `digest`, the stored `size` with the
 *    byte count, and `seq` must have no gaps (SQLite gives a new row the largest rowid plus
 *    one, so a gap means rows were deleted).
 * 2. The Merkle tree of RFC 6962 §2.1 is rebuilt over the rows' leaf data (merkle.ts), and at
 *    every recorded checkpoint's `tree_size` the root over that prefix must equal the recorded
 *    `root_hash`. A checkpoint must also carry a valid Ed25519 signature (signing/checkpoint.ts)
 *    by a trusted key: `--trust KEY` (repeatable) when given, else the Beacon's own key.
 *    Roots kept outside the database can be checked the same way with `--root SIZE:HEX`
 *    (repeatable): they stay valid evidence even if the checkpoints table itself was rewritten.
 * 3. Every mismatch is reported with its row or checkpoint, and the exit status is 1 if there
 *    was any. Only when there was none, a new checkpoint (tree size, root, time) is signed with
 *    the Beacon's key and appended, unless `--no-checkpoint` (which also makes the run
 *    read-only). A checkpoint is never appended over a store known to be inconsistent: the
 *    Beacon's signature would vouch for the damage.
 *
 * @module
 */
import { hex, sha256Digest } from "../bytes.ts";
import { fromBase64url } from "../bytes.ts";
import { signCheckpoint, verifyCheckpoint } from "../signing/checkpoint.ts";
import {
  loadSigningKey,
  parseSigningKey,
  SIGNING_KEY_SECRET,
  type SigningKey,
  signingKeyFromSeed,
} from "../signing/key.ts";
import {
  databaseConfig,
  openForAppending,
  openForReading,
  type ReviewDatabase,
} from "./database.ts";
import { CliError, type Context } from "./io.ts";
import { leafHash, MerkleAccumulator, submissionLeafData } from "./merkle.ts";
import { type OptionValues, widthFrom } from "./options.ts";
import { type CheckpointRow, checkpoints } from "./queries.ts";
import { Findings, safeBlock, safeText } from "./render.ts";

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

const PAGE_SIZE = 500;

async function beaconKey(
  context: Context,
  database: ReviewDatabase,
): Promise<SigningKey | undefined> {
  const configured = context.env("BEACON_SIGNING_KEY");
  if (configured !== undefined && configured !== "") {
    try {
      return await signingKeyFromSeed(parseSigningKey(configured));
    } catch (error) {
      throw new CliError((error as Error).message);
    }
  }
  if (database.store !== undefined) return await loadSigningKey(database.store, context.now);
  // Read-only run: use the stored key if there is one, never create it.
  const rows = (await database.client.execute({
    sql: "SELECT value FROM secrets WHERE name = ?",
    args: [SIGNING_KEY_SECRET],
  })).rows;
  const value = rows[0]?.value;
  return value instanceof ArrayBuffer ? await signingKeyFromSeed(new Uint8Array(value)) : undefined;
}

function trustedKeys(values: OptionValues, key: SigningKey | undefined): Set<string> {
  const given = (values.trust as string[] | undefined) ?? [];
  for (const text of given) {
    if (fromBase64url(text)?.length !== 32) {
      throw new CliError(
        "Cannot parse --trust: give a raw Ed25519 public key in base64url (43 characters)",
        2,
      );
    }
  }
  if (given.length > 0) return new Set(given);
  return new Set(key === undefined ? [] : [key.publicKey]);
}

function describe(checkpoint: CheckpointRow): string {
  return `checkpoint ${checkpoint.seq} (tree size ${checkpoint.treeSize}, ` +
    `${safeText(checkpoint.createdAt)})`;
}

/**
 * Runs `verify`.
 *
 * @param context Outputs, environment, clock.
 * @param values Parsed options.
 * @returns 0 when everything matched, 1 when any problem was found.
 */
export async function verifyCommand(context: Context, values: OptionValues): Promise<number> {
  const readOnly = values["no-checkpoint"] === true;
  const config = databaseConfig(values.database as string, context.env);
  const database = readOnly
    ? await openForReading(config)
    : await openForAppending(config, context.now);
  try {
    const external = externalRoots(values);
    const key = await beaconKey(context, database);
    const trusted = trustedKeys(values, key);
    const width = widthFrom(values, context.terminalColumns);
    const say = (text: string) =>
      context.stdout.line(
        safeBlock(text, new Findings(), { width, continuation: "    ", defang: false }).join("\n"),
      );
    let problems = 0;
    const problem = async (text: string) => {
      problems++;
      // One line per problem, never wrapped, so `grep PROBLEM` finds each one whole.
      await context.stdout.line("PROBLEM: " + text);
    };

    // Checkpoints: signatures first, then roots as the tree grows past each size.
    const recorded = await checkpoints(database.client, database.schema);
    const pending = new Map<number, Expectation[]>();
    const expect = (expectation: Expectation) =>
      pending.set(expectation.treeSize, [
        ...(pending.get(expectation.treeSize) ?? []),
        expectation,
      ]);
    for (const checkpoint of recorded) {
      const fields = {
        treeSize: checkpoint.treeSize,
        rootHash: checkpoint.rootHash,
        createdAt: checkpoint.createdAt,
      };
      if (!await verifyCheckpoint(checkpoint.publicKey, fields, checkpoint.signature)) {
        await problem(`${describe(checkpoint)}: the signature does not verify`);
      } else if (!trusted.has(checkpoint.publicKey)) {
        await problem(
          `${describe(checkpoint)}: signed by ${safeText(checkpoint.publicKey)}, ` +
            (trusted.size === 0 ? "and there is no Beacon key to trust" : "not a trusted key"),
        );
      }
      expect({ ...checkpoint, label: describe(checkpoint), external: false });
    }
    external.forEach(expect);
    const tree = new MerkleAccumulator();
    let matched = 0;
    let externalMatched = 0;
    const compareAt = async () => {
      const due = pending.get(tree.size);
      if (due === undefined) return;
      pending.delete(tree.size);
      const root = hex(await tree.root());
      for (const expectation of due) {
        if (expectation.rootHash !== root) {
          await problem(
            `${expectation.label}: recorded root ${safeText(expectation.rootHash)} but the ` +
              `first ${tree.size} submissions now give ${root}`,
          );
        } else if (expectation.external) externalMatched++;
        else matched++;
      }
    };
    await compareAt(); // tree size 0

    // Every row, in order.
    let expected = 1;
    let after = 0;
    let digestMismatches = 0;
    while (true) {
      const rows = (await database.client.execute({
        sql: "SELECT seq, id, received_at, digest, content, size FROM submissions " +
          "WHERE seq > ? ORDER BY seq LIMIT ?",
        args: [after, PAGE_SIZE],
      })).rows;
      for (const row of rows) {
        const seq = Number(row.seq);
        const id = String(row.id);
        const where = `row ${seq} (receipt ${safeText(id)})`;
        if (seq !== expected) {
          await problem(
            seq - expected === 1
              ? `row ${expected} is missing (deleted?)`
              : `rows ${expected} to ${seq - 1} are missing (deleted?)`,
          );
        }
        expected = seq + 1;
        const content = row.content instanceof ArrayBuffer
          ? new Uint8Array(row.content)
          : new TextEncoder().encode(String(row.content ?? ""));
        const digest = String(row.digest);
        const actual = await sha256Digest(content);
        if (actual !== digest) {
          digestMismatches++;
          await problem(
            `${where}: stored digest ${safeText(digest)} but the content hashes to ${actual}`,
          );
        }
        if (Number(row.size) !== content.length) {
          await problem(
            `${where}: stored size ${Number(row.size)} but ${content.length} bytes are stored`,
          );
        }
        let leafData: Uint8Array;
        try {
          leafData = submissionLeafData({ seq, id, receivedAt: String(row.received_at), digest });
        } catch {
          await problem(`${where}: its columns cannot be encoded as a leaf (unpaired surrogate)`);
          leafData = new TextEncoder().encode(`${seq} ${id} ${row.received_at} ${digest}`);
        }
        await tree.append(await leafHash(leafData));
        await compareAt();
      }
      if (rows.length < PAGE_SIZE) break;
      after = Number(rows[rows.length - 1].seq);
    }
    for (const due of pending.values()) {
      for (const expectation of due) {
        await problem(
          `${expectation.label}: covers ${expectation.treeSize} submissions but only ` +
            `${tree.size} exist (rows removed?)`,
        );
      }
    }

    const root = hex(await tree.root());
    await say(
      `checked ${tree.size} submission${tree.size === 1 ? "" : "s"} ` +
        `(${digestMismatches} digest mismatch${digestMismatches === 1 ? "" : "es"}) and ` +
        `${recorded.length} checkpoint${recorded.length === 1 ? "" : "s"} ` +
        `(${matched} root${matched === 1 ? "" : "s"} matched)`,
    );
    if (external.length > 0) {
      await say(`${externalMatched} of ${external.length} roots given with --root matched`);
    }
    await say(`tree size ${tree.size}, root ${root}`);
    if (problems > 0) {
      await say(
        `${problems} problem${problems === 1 ? "" : "s"} found` +
          (readOnly ? "" : "; no checkpoint appended (it would vouch for them)"),
      );
      return 1;
    }
    if (readOnly) {
      await say("no problems found (--no-checkpoint: nothing appended)");
      return 0;
    }
    const signer = key!; // appending runs always have a key: loadSigningKey creates it
    const head = {
      treeSize: tree.size,
      rootHash: root,
      createdAt: new Date(context.now()).toISOString(),
    };
    const signature = await signCheckpoint(signer, head);
    const inserted = await database.client.execute({
      sql: "INSERT INTO checkpoints (tree_size, root_hash, created_at, signature, public_key) " +
        "VALUES (?, ?, ?, ?, ?)",
      args: [head.treeSize, head.rootHash, head.createdAt, signature, signer.publicKey],
    });
    await say(
      `no problems found; appended checkpoint ${String(inserted.lastInsertRowid)} ` +
        `(tree size ${head.treeSize}, ${head.createdAt})`,
    );
    await say(`signed by key ${signer.publicKey}`);
    await say(`(fingerprint ${signer.fingerprint})`);
    return 0;
  } finally {
    await database.close();
  }
}
