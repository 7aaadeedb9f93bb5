/**
 * `review monitor <URL> --state FILE`: watches a transparency log from outside its database, as
 * a Certificate Transparency monitor watches a log (RFC 9162 §8.2). A writer who can change the
 * database can also delete the heads in it, so only a checkpoint kept elsewhere shows that the log
 * was rewritten. It speaks C2SP (c2sp.org/tlog-checkpoint, c2sp.org/tlog-tiles), so it watches a
 * Beacon's log (URL: the Beacon, whose log is at `<URL>/beacon/0.1/log`) or any other C2SP log
 * (URL: its prefix). Each check:
 *
 * 1. fetches `<prefix>/checkpoint` (no redirects, a 10 s bound, at most 16 KiB read: a longer
 *    answer is abandoned while it arrives) and verifies the note under the trusted key: `--trust`
 *    on the first run, then the key the state file keeps. The key is a note verifier key
 *    (`<name>+<key id>+<base64>`), or a Beacon's raw Ed25519 key (`receiptSigning.publicKey`),
 *    whose name is then the checkpoint's origin, bound to it by the key id;
 * 2. compares it with the checkpoint kept in FILE:
 *    - another origin, a smaller size (a **shrink**), or the same size with another root (a
 *      **fork**) is a problem;
 *    - a larger size must extend the kept tree: the consistency proof between the two sizes
 *      (RFC 9162 §2.1.4) is built from the log's tiles of the new size and verified against both
 *      roots. Tiles that do not show it, or a tile request answered with anything but a tile, is a
 *      fork too, unless the answer is 429 or 503 (try again later);
 * 3. keeps the new checkpoint in FILE (written whole to `FILE.new`, then renamed over it, so a crash
 *    never leaves half a state), and only after it verified.
 *
 * Exit status: 0 while every check passed, 1 on a problem (the state file keeps the last good
 * checkpoint), 2 on a usage error, 3 when the log could not be reached or answered something
 * else than a checkpoint (`--once`; a watching run reports it and tries again at the next
 * interval). The log is the only address it contacts: the one given on the command line, never
 * one a submission names.
 *
 * @module
 */
import { readFile, rename, writeFile } from "node:fs/promises";
import {
  base64,
  base64url,
  consistencyProof,
  entriesAt,
  fromBase64,
  fromBase64url,
  fromHex,
  hex,
  isNoteName,
  noteKeyId,
  openCheckpointNote,
  rangeHash,
  type Tile,
  TILE_WIDTH,
  tilePath,
  verifyConsistency,
} from "../../src/signing/mod.ts";
import { CliError, type Context, readBounded } from "../io.ts";
import { integerOption, type OptionValues } from "./options.ts";
import { safeText } from "../render/mod.ts";

/** The options of `monitor`. */
export const MONITOR_OPTIONS = {
  state: { type: "string" },
  trust: { type: "string" },
  interval: { type: "string" },
  once: { type: "boolean" },
} as const;

/** Where a Beacon keeps its log under its URL (docs/protocol-0.1.md §6.5). */
const BEACON_LOG = "/beacon/0.1/log";

/** How long one request may take. */
const REQUEST_TIMEOUT_MS = 10_000;

/** The largest answer read: a checkpoint is a few hundred bytes, a tile 8 KiB. */
const MAX_ANSWER_BYTES = 16_384;

/** The state file's format, so a later version can tell its own files. */
const STATE_FORMAT = "beacon-monitor/2";
/** The format before checkpoints were C2SP notes: its head is read, and rewritten as the new. */
const STATE_FORMAT_1 = "beacon-monitor/1";

/** A checkpoint as kept: the tree's size and root. */
interface Kept {
  readonly origin: string;
  readonly size: number;
  /** The root hash in standard base64, as the note has it. */
  readonly root: string;
}

/** What the state file keeps. */
interface State {
  readonly format: typeof STATE_FORMAT;
  /** The log's prefix. */
  readonly url: string;
  /** The trusted key: a raw Ed25519 key (base64url) or a note verifier key. */
  readonly trust: string;
  readonly checkpoint: Kept | null;
}

/** A trusted key, parsed: the raw key, and the key name when the key says it. */
interface TrustedKey {
  readonly raw: Uint8Array<ArrayBuffer>;
  readonly name?: string;
}

/** The log could not be asked, or did not answer with what was asked for. */
class Unreachable extends Error {}

/**
 * An answer that is not what was asked for, from a log that did answer: its HTTP status (0 when
 * the status was 200 but the body was not what was asked for).
 */
class WrongAnswer extends Unreachable {
  readonly status: number;

  constructor(message: string, status: number) {
    super(message);
    this.status = status;
  }
}

/**
 * Statuses that say "not now" rather than "no": the log is overloaded or its database is away.
 * Any other answer to a tile request for a checkpoint the log signed is a refusal to show that
 * the checkpoint extends the kept one.
 */
const TRY_AGAIN = new Set([429, 503]);

/**
 * The log's prefix: an http(s) URL with nothing but scheme, host, port and path. A URL with no
 * path is a Beacon's, whose log is under {@linkcode BEACON_LOG}.
 */
function prefixOf(text: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new CliError(
      "Cannot monitor: give the Beacon's URL or a log's prefix, such as https://beacon.example",
      2,
    );
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") {
    throw new CliError("Cannot monitor: the URL must be http: or https:", 2);
  }
  if (url.username !== "" || url.password !== "" || url.search !== "" || url.hash !== "") {
    throw new CliError(
      "Cannot monitor: the URL must not carry credentials, a query or a fragment",
      2,
    );
  }
  const path = url.pathname.replace(/\/+$/, "");
  return url.origin + (path === "" ? BEACON_LOG : path);
}

/** Parses `--trust`: a raw Ed25519 key in base64url, or a note verifier key of type Ed25519. */
function parseTrust(text: string): TrustedKey | undefined {
  const raw = fromBase64url(text);
  if (raw?.length === 32) return { raw };
  const match = /^([^+\s]+)\+([0-9a-f]{8})\+([A-Za-z0-9+/]+={0,2})$/.exec(text);
  if (match === null || !isNoteName(match[1])) return undefined;
  const key = fromBase64(match[3]);
  if (key?.length !== 33 || key[0] !== 0x01) return undefined;
  return hex(noteKeyId(match[1], key.slice(1))) === match[2]
    ? { raw: key.slice(1), name: match[1] }
    : undefined;
}

async function readState(path: string): Promise<State | undefined> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    if ((error as { code?: string }).code === "ENOENT") return undefined;
    throw new CliError(`Cannot read the state file: ${(error as Error).message}`);
  }
  let value: Record<string, unknown>;
  try {
    value = JSON.parse(text);
  } catch {
    throw new CliError("Cannot read the state file: it is not JSON");
  }
  const state = value?.format === STATE_FORMAT_1 ? fromFormat1(value) : value;
  const kept = state?.checkpoint as Kept | null | undefined;
  if (
    state?.format !== STATE_FORMAT || typeof state.url !== "string" ||
    typeof state.trust !== "string" || parseTrust(state.trust) === undefined ||
    (kept !== null &&
      (typeof kept?.origin !== "string" || !Number.isSafeInteger(kept.size) ||
        typeof kept.root !== "string"))
  ) {
    throw new CliError(`Cannot read the state file: it is not a ${STATE_FORMAT} file`);
  }
  return state as unknown as State;
}

/**
 * A state file of the first format (a Beacon's JSON head): its URL was the Beacon's, its head
 * had no origin yet, which the first check then takes from the checkpoint.
 */
function fromFormat1(value: Record<string, unknown>): Record<string, unknown> {
  const head = value.head as { treeSize?: unknown; rootHash?: unknown } | null;
  const rootHash = typeof head?.rootHash === "string" && /^[0-9a-f]{64}$/.test(head.rootHash)
    ? fromHex(head.rootHash)
    : undefined;
  const root = rootHash === undefined ? undefined : base64(rootHash);
  return {
    format: STATE_FORMAT,
    url: typeof value.url === "string" ? prefixOf(value.url) : value.url,
    trust: value.publicKey,
    checkpoint: head === null
      ? null
      : { origin: "", size: head?.treeSize, root: root ?? head?.rootHash },
  };
}

async function writeState(path: string, state: State): Promise<void> {
  await writeFile(path + ".new", JSON.stringify(state, null, 2) + "\n", { mode: 0o600 });
  await rename(path + ".new", path);
}

/** GETs `url`, bounded in time and size; anything but a 200 is Unreachable. */
async function get(url: string): Promise<Uint8Array> {
  let response: Response;
  let body: Uint8Array | undefined;
  try {
    response = await fetch(url, {
      redirect: "error",
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
    body = await readBounded(response, MAX_ANSWER_BYTES);
  } catch (error) {
    throw new Unreachable(`cannot reach ${url} (${(error as Error).name})`);
  }
  if (response.status !== 200) {
    throw new WrongAnswer(`${url} answered ${response.status}`, response.status);
  }
  if (body === undefined) throw new WrongAnswer(`${url} answered too much`, 0);
  return body;
}

/** The checkpoint note at the prefix, opened under the trusted key; undefined if it does not verify. */
async function fetchCheckpoint(prefix: string, key: TrustedKey): Promise<Kept | undefined> {
  const url = `${prefix}/checkpoint`;
  let note: string;
  try {
    note = new TextDecoder("utf-8", { fatal: true }).decode(await get(url));
  } catch (error) {
    if (error instanceof Unreachable) throw error;
    throw new Unreachable(`${url} answered something that is not text`);
  }
  const split = note.indexOf("\n\n");
  const lines = note.slice(0, split + 1).split("\n");
  if (split < 0 || lines.length < 4 || !/^(?:0|[1-9][0-9]{0,15})$/.test(lines[1])) {
    throw new Unreachable(`${url} answered something that is not a checkpoint`);
  }
  // A key that names itself must name the log; a bare key signs under the note's own origin.
  const opened = await openCheckpointNote(note, key.name ?? lines[0], base64url(key.raw));
  return opened && { origin: opened.origin, size: opened.size, root: base64(opened.root) };
}

function describe(kept: Kept): string {
  return `size ${kept.size}, root ${safeText(kept.root)}`;
}

/**
 * Tiles of the log at `size` leaves, fetched as that size's checkpoint names them (every tile
 * full, but the newest at each level, of its partial width), cut to what is asked.
 */
function tilesAt(prefix: string, size: number) {
  return async ({ level, index, width }: Tile): Promise<Uint8Array[]> => {
    const entries = entriesAt(size, level);
    const available = Math.min(TILE_WIDTH, entries - index * TILE_WIDTH);
    if (width > available) throw new WrongAnswer(`tile ${level}/${index} is not covered`, 0);
    const path = tilePath({ level, index, width: available });
    const bytes = await get(`${prefix}/${path}`);
    if (bytes.length !== available * 32) {
      throw new WrongAnswer(`${prefix}/${path} is not a tile of ${available} hashes`, 0);
    }
    return Array.from({ length: width }, (_, i) => bytes.slice(i * 32, i * 32 + 32));
  };
}

/** One check against the kept state; the problem found, or the state to keep. */
async function check(
  state: State,
  key: TrustedKey,
): Promise<{ problem: string } | { state: State; line: string }> {
  const served = await fetchCheckpoint(state.url, key);
  if (served === undefined) {
    return { problem: `the served checkpoint does not verify under the trusted key` };
  }
  const kept = state.checkpoint;
  const keep = (line: string) => ({ state: { ...state, checkpoint: served }, line });
  const name = `checkpoint ${safeText(served.origin)} ${describe(served)}`;
  if (kept === null) return keep(`${name}: kept (the first checkpoint seen)`);
  if (kept.origin !== "" && kept.origin !== served.origin) {
    return {
      problem: `the served checkpoint names the log ${safeText(served.origin)}, but the kept ` +
        `one ${safeText(kept.origin)}`,
    };
  }
  if (served.size < kept.size) {
    return {
      problem: `SHRINK: the served checkpoint covers ${served.size} entries, but the kept one ` +
        `(${describe(kept)}) covers ${kept.size}`,
    };
  }
  if (served.size === kept.size) {
    if (served.root !== kept.root) {
      return {
        problem: `FORK: the served checkpoint (${describe(served)}) has another root than the ` +
          `kept one of the same size (${describe(kept)})`,
      };
    }
    return { state: { ...state, checkpoint: served }, line: `${name}: unchanged` };
  }
  let extends_ = false;
  try {
    // The proof is built from the new tree's tiles and must lead to both signed roots.
    const tiles = tilesAt(state.url, served.size);
    const proof = await consistencyProof(kept.size, served.size, (s, e) => rangeHash(s, e, tiles));
    extends_ = verifyConsistency(
      kept.size,
      served.size,
      // A kept root that is not base64 (a damaged state file) is extended by nothing.
      fromBase64(kept.root) ?? new Uint8Array(0),
      fromBase64(served.root)!, // spelled by fetchCheckpoint from 32 verified bytes
      proof,
    );
  } catch (error) {
    if (!(error instanceof WrongAnswer) || TRY_AGAIN.has(error.status)) throw error;
    return {
      problem: `FORK: the served checkpoint (${describe(served)}) cannot be shown to extend ` +
        `the kept one (${describe(kept)}): ${error.message}`,
    };
  }
  if (!extends_) {
    return {
      problem: `FORK: the served checkpoint (${describe(served)}) does not extend the kept one ` +
        `(${describe(kept)}): its tiles give another tree (RFC 9162 §2.1.4)`,
    };
  }
  return keep(`${name}: extends the kept checkpoint of size ${kept.size} (verified from tiles)`);
}

/**
 * The state a run starts from: the state file's, which must watch this prefix and trust the same
 * key as any `--trust`, or on a first run (no file yet) a new one trusting `--trust`.
 */
async function startingState(
  path: string,
  prefix: string,
  trust: string | undefined,
): Promise<State> {
  const state = await readState(path);
  if (state === undefined) {
    if (trust === undefined) {
      throw new CliError(
        "Cannot monitor: the first run needs --trust KEY (a Beacon's receiptSigning.publicKey " +
          "or log.verifierKey from its discovery document, compared out of band)",
        2,
      );
    }
    return { format: STATE_FORMAT, url: prefix, trust, checkpoint: null };
  }
  if (state.url !== prefix) {
    throw new CliError(`Cannot monitor: the state file watches ${state.url}, not ${prefix}`);
  }
  if (trust !== undefined && trust !== state.trust) {
    throw new CliError("Cannot monitor: the state file trusts another key than --trust");
  }
  return state;
}

/**
 * Runs `monitor`.
 *
 * @param context Outputs, environment, clock.
 * @param values Parsed options.
 * @param url The Beacon's URL or the log's prefix.
 * @returns The exit status (see the module documentation).
 */
export async function monitorCommand(
  context: Context,
  values: OptionValues,
  url: string,
): Promise<number> {
  const prefix = prefixOf(url);
  const path = values.state;
  if (typeof path !== "string" || path === "") {
    throw new CliError(
      "Cannot monitor: --state FILE is required (where the seen checkpoint is kept)",
      2,
    );
  }
  const trust = values.trust as string | undefined;
  if (trust !== undefined && parseTrust(trust) === undefined) {
    throw new CliError(
      "Cannot parse --trust: give a raw Ed25519 public key in base64url (43 characters) or a " +
        "note verifier key (name+id+key)",
      2,
    );
  }
  const intervalMs = integerOption(values, "interval", 60, 86_400) * 1000;
  let state = await startingState(path, prefix, trust);
  const key = parseTrust(state.trust)!;
  while (true) {
    let outcome: Awaited<ReturnType<typeof check>>;
    try {
      outcome = await check(state, key);
    } catch (error) {
      if (!(error instanceof Unreachable)) throw error;
      await context.stderr.line(`could not check: ${error.message}`);
      if (values.once === true) return 3;
      await new Promise((resolve) => setTimeout(resolve, intervalMs));
      continue;
    }
    if ("problem" in outcome) {
      await context.stdout.line("PROBLEM: " + outcome.problem);
      await context.stdout.line(`the state file keeps the last good checkpoint: ${path}`);
      return 1;
    }
    if (outcome.state !== state) {
      state = outcome.state;
      await writeState(path, state);
    }
    await context.stdout.line(`${new Date(context.now()).toISOString()} ${outcome.line}`);
    if (values.once === true) return 0;
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
