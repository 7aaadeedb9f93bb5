/**
 * `review monitor <URL> --state FILE`: watches a Beacon's published tree head from outside its
 * database, as a Certificate Transparency monitor watches a log (RFC 9162 §8.2). A writer who
 * can change the database can also delete the heads in it, so only a head kept elsewhere shows
 * that the log was rewritten. Each check:
 *
 * 1. fetches `<URL>/beacon/0.1/tree-head` (no redirects, a 10 s bound, at most 16 KiB read:
 *    the body is abandoned as soon as it passes that) and verifies its
 *    Ed25519 signature (docs/protocol-0.1.md §6.5) under the trusted key: `--trust KEY` on the
 *    first run (the key of the discovery document, compared out of band), then the key the
 *    state file keeps;
 * 2. compares it with the head kept in FILE:
 *    - a smaller size is a **shrink**, and the same size with another root a **fork**;
 *    - a larger size must come with a consistency proof
 *      (`/beacon/0.1/tree-head/consistency?first=KEPT&second=NEW`, RFC 9162 §2.1.4) that
 *      verifies between the two roots, else it is a fork too; so is a proof request answered
 *      with anything but a proof, unless the answer is 429 or 503 (try again later);
 * 3. keeps the new head in FILE (written whole to `FILE.new`, then renamed over it, so a crash
 *    never leaves half a state), and only after it verified.
 *
 * Exit status: 0 while every check passed, 1 on a shrink, a fork or a head that does not verify
 * (the state file keeps the last good head, for the next look), 2 on a usage error, 3 when the
 * Beacon could not be reached or answered something else than a head (`--once`; a watching run
 * reports it and tries again at the next interval). The Beacon is the only address it contacts:
 * the one given on the command line, never one a submission names.
 *
 * @module
 */
import { readFile, rename, writeFile } from "node:fs/promises";
import {
  fromBase64url,
  fromHex,
  verifyCheckpoint,
  verifyConsistency,
} from "../../src/signing/mod.ts";
import { CliError, type Context } from "../io.ts";
import { integerOption, type OptionValues } from "./options.ts";
import { safeText } from "../render/mod.ts";

/** The options of `monitor`. */
export const MONITOR_OPTIONS = {
  state: { type: "string" },
  trust: { type: "string" },
  interval: { type: "string" },
  once: { type: "boolean" },
} as const;

/** The paths a monitor reads from its Beacon (docs/protocol-0.1.md §6.5). */
const TREE_HEAD = "/beacon/0.1/tree-head";
const CONSISTENCY = "/beacon/0.1/tree-head/consistency";

/** How long one request may take. */
const REQUEST_TIMEOUT_MS = 10_000;

/** The largest answer read: a head is a few hundred bytes, a proof at most 64 hashes. */
const MAX_ANSWER_BYTES = 16_384;

/** The state file's format, so a later version can tell its own files. */
const STATE_FORMAT = "beacon-monitor/1";

/** A signed tree head as published. */
interface Head {
  readonly treeSize: number;
  readonly rootHash: string;
  readonly createdAt: string;
  readonly signature: string;
}

/** What the state file keeps. */
interface State {
  readonly format: typeof STATE_FORMAT;
  readonly url: string;
  readonly publicKey: string;
  readonly head: Head | null;
}

/** The Beacon could not be asked, or did not answer with what was asked for. */
class Unreachable extends Error {}

/** The origin the monitor watches: an http(s) URL with nothing but scheme, host and port. */
function originOf(text: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new CliError("Cannot monitor: give the Beacon's URL, such as https://beacon.example", 2);
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
  return url.origin + url.pathname.replace(/\/+$/, "");
}

function isHead(value: unknown): value is Head {
  const head = value as Record<string, unknown> | null;
  return typeof head === "object" && head !== null && Number.isSafeInteger(head.treeSize) &&
    (head.treeSize as number) >= 0 && typeof head.rootHash === "string" &&
    /^[0-9a-f]{64}$/.test(head.rootHash) && typeof head.createdAt === "string" &&
    typeof head.signature === "string";
}

async function readState(path: string): Promise<State | undefined> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    if ((error as { code?: string }).code === "ENOENT") return undefined;
    throw new CliError(`Cannot read the state file: ${(error as Error).message}`);
  }
  let state: State;
  try {
    state = JSON.parse(text);
  } catch {
    throw new CliError("Cannot read the state file: it is not JSON");
  }
  if (
    state?.format !== STATE_FORMAT || typeof state.url !== "string" ||
    fromBase64url(String(state.publicKey))?.length !== 32 ||
    (state.head !== null && !isHead(state.head))
  ) {
    throw new CliError(`Cannot read the state file: it is not a ${STATE_FORMAT} file`);
  }
  return state;
}

async function writeState(path: string, state: State): Promise<void> {
  await writeFile(path + ".new", JSON.stringify(state, null, 2) + "\n", { mode: 0o600 });
  await rename(path + ".new", path);
}

/**
 * An answer that is not what was asked for, from a Beacon that did answer: its HTTP status (0
 * when the status was 200 but the body was not a document).
 */
class WrongAnswer extends Unreachable {
  constructor(message: string, readonly status: number) {
    super(message);
  }
}

/**
 * The body of `response`, read chunk by chunk and abandoned as soon as it passes `limit` bytes:
 * an answer is never held whole before its size is known (a hostile server may send gigabytes).
 */
async function boundedBody(response: Response, limit: number): Promise<Uint8Array | undefined> {
  const declared = Number(response.headers.get("content-length") ?? "0");
  if (declared > limit) {
    await response.body?.cancel().catch(() => {});
    return undefined;
  }
  const reader = response.body?.getReader();
  if (reader === undefined) return new Uint8Array(0);
  const chunks: Uint8Array[] = [];
  let length = 0;
  while (true) {
    const { done, value } = await reader.read();
    if (done) break;
    length += value.byteLength;
    if (length > limit) {
      await reader.cancel().catch(() => {});
      return undefined;
    }
    chunks.push(value);
  }
  const body = new Uint8Array(length);
  let at = 0;
  for (const chunk of chunks) {
    body.set(chunk, at);
    at += chunk.byteLength;
  }
  return body;
}

/** GETs `url` as JSON, bounded in time and size; anything but a 200 with JSON is Unreachable. */
async function getJson(url: string): Promise<unknown> {
  let response: Response;
  let body: Uint8Array | undefined;
  try {
    response = await fetch(url, {
      redirect: "error",
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      headers: { accept: "application/json" },
    });
    body = await boundedBody(response, MAX_ANSWER_BYTES);
  } catch (error) {
    throw new Unreachable(`cannot reach ${url} (${(error as Error).name})`);
  }
  if (response.status !== 200) {
    throw new WrongAnswer(`${url} answered ${response.status}`, response.status);
  }
  if (body === undefined) throw new WrongAnswer(`${url} answered too much`, 0);
  try {
    return JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(body));
  } catch {
    throw new WrongAnswer(`${url} answered something that is not JSON`, 0);
  }
}

/**
 * Statuses of a proof request that say "not now" rather than "no": the Beacon is overloaded or
 * its database is away (docs/protocol-0.1.md §9). Any other answer to a proof request for a head
 * the Beacon signed is a refusal to show that the head extends the kept one.
 */
const TRY_AGAIN = new Set([429, 503]);

function describe(head: Head): string {
  return `tree size ${head.treeSize}, root ${head.rootHash}, ${safeText(head.createdAt)}`;
}

/**
 * One check against the kept state; the problem found, or the state to keep.
 */
async function check(
  origin: string,
  state: State,
): Promise<{ problem: string } | { state: State; line: string }> {
  const served = await getJson(origin + TREE_HEAD);
  if (!isHead(served)) throw new Unreachable("the tree head is not a tree head document");
  const head: Head = {
    treeSize: served.treeSize,
    rootHash: served.rootHash,
    createdAt: served.createdAt,
    signature: served.signature,
  };
  if (!await verifyCheckpoint(state.publicKey, head, head.signature)) {
    return { problem: `the served head (${describe(head)}) does not verify under the trusted key` };
  }
  const kept = state.head;
  const keep = (line: string) => ({ state: { ...state, head }, line });
  if (kept === null) return keep(`head ${describe(head)}: kept (the first head seen)`);
  if (head.treeSize < kept.treeSize) {
    return {
      problem: `SHRINK: the served head covers ${head.treeSize} submissions, but the kept head ` +
        `(${describe(kept)}) covers ${kept.treeSize}`,
    };
  }
  if (head.treeSize === kept.treeSize) {
    if (head.rootHash !== kept.rootHash) {
      return {
        problem: `FORK: the served head (${describe(head)}) has another root than the kept ` +
          `head of the same size (${describe(kept)})`,
      };
    }
    return { state, line: `head ${describe(kept)}: unchanged` };
  }
  let answer: { proof?: unknown };
  try {
    answer = await getJson(
      `${origin}${CONSISTENCY}?first=${kept.treeSize}&second=${head.treeSize}`,
    ) as { proof?: unknown };
  } catch (error) {
    // The Beacon signed a larger head and answered, but with no proof that it extends the kept
    // one: a log that cannot show it only appended is treated as one that did not (RFC 9162
    // §8.2). Only an answer that never came, or a "try again", leaves the question open.
    if (!(error instanceof WrongAnswer) || TRY_AGAIN.has(error.status)) throw error;
    return {
      problem: `FORK: the served head (${describe(head)}) comes with no consistency proof from ` +
        `the kept head (${describe(kept)}): ${error.message}`,
    };
  }
  const proof = Array.isArray(answer?.proof)
    ? answer.proof.map((hash) =>
      typeof hash === "string" && /^[0-9a-f]{64}$/.test(hash) ? fromHex(hash) : undefined
    )
    : [];
  if (
    !Array.isArray(answer?.proof) || proof.some((hash) => hash === undefined) ||
    !verifyConsistency(
      kept.treeSize,
      head.treeSize,
      fromHex(kept.rootHash)!,
      fromHex(head.rootHash)!,
      proof as Uint8Array[],
    )
  ) {
    return {
      problem: `FORK: the served head (${describe(head)}) does not extend the kept head ` +
        `(${describe(kept)}): the consistency proof does not verify (RFC 9162 §2.1.4)`,
    };
  }
  return keep(
    `head ${describe(head)}: extends the kept head of size ${kept.treeSize} ` +
      "(consistency proof verified)",
  );
}

/**
 * Runs `monitor`.
 *
 * @param context Outputs, environment, clock.
 * @param values Parsed options.
 * @param url The Beacon's URL.
 * @returns The exit status (see the module documentation).
 */
export async function monitorCommand(
  context: Context,
  values: OptionValues,
  url: string,
): Promise<number> {
  const origin = originOf(url);
  const path = values.state;
  if (typeof path !== "string" || path === "") {
    throw new CliError("Cannot monitor: --state FILE is required (where the seen head is kept)", 2);
  }
  const trust = values.trust as string | undefined;
  if (trust !== undefined && fromBase64url(trust)?.length !== 32) {
    throw new CliError(
      "Cannot parse --trust: give a raw Ed25519 public key in base64url (43 characters)",
      2,
    );
  }
  const intervalMs = integerOption(values, "interval", 60, 86_400) * 1000;
  let state = await readState(path);
  if (state === undefined) {
    if (trust === undefined) {
      throw new CliError(
        "Cannot monitor: the first run needs --trust PUBLIC_KEY (receiptSigning.publicKey of " +
          "the discovery document, compared out of band)",
        2,
      );
    }
    state = { format: STATE_FORMAT, url: origin, publicKey: trust, head: null };
  } else if (state.url !== origin) {
    throw new CliError(
      `Cannot monitor: the state file watches ${state.url}, not ${origin}`,
    );
  } else if (trust !== undefined && trust !== state.publicKey) {
    throw new CliError("Cannot monitor: the state file trusts another key than --trust");
  }
  while (true) {
    let outcome: Awaited<ReturnType<typeof check>>;
    try {
      outcome = await check(origin, state);
    } catch (error) {
      if (!(error instanceof Unreachable)) throw error;
      await context.stderr.line(`could not check: ${error.message}`);
      if (values.once === true) return 3;
      await new Promise((resolve) => setTimeout(resolve, intervalMs));
      continue;
    }
    if ("problem" in outcome) {
      await context.stdout.line("PROBLEM: " + outcome.problem);
      await context.stdout.line(`the state file keeps the last good head: ${path}`);
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
