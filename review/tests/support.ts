/**
 * Helpers for the review tool's tests: a real temporary database filled through the real
 * handler (`createBeacon` from mod.ts), and the real CLI (`review/main.ts`) run as a
 * subprocess with exactly the narrow permissions `deno task review` computes for the same
 * command line (review/runtime/permissions.ts), so every test also proves they are enough.
 *
 * @module
 */
import { createClient, type InValue } from "@libsql/client";
import { childEnvironment } from "../../scripts/runtimes.ts";
import { createBeacon } from "../../src/beacon.ts";
import { npmCacheFolder } from "../../src/cli/permissions.ts";
import { reviewPermissionFlags } from "../runtime/permissions.ts";
import { assert } from "../../tests/support/assert.ts";

const MAIN = new URL("../runtime/deno.ts", import.meta.url).pathname;
const ROOT = new URL("../../", import.meta.url).pathname;

let npmCache: Promise<string> | undefined;

/**
 * The flags `deno task review` (review/runtime/launch_deno.ts) would run `args` with.
 *
 * @param args The command line after `deno task review`.
 * @param env The environment the tool gets.
 * @returns The `deno run` permission flags.
 */
export async function reviewFlags(
  args: readonly string[],
  env: Record<string, string> = {},
): Promise<string[]> {
  npmCache ??= npmCacheFolder();
  return reviewPermissionFlags({
    args,
    env: (name) => env[name],
    npmCache: await npmCache,
    cwd: ROOT.replace(/\/$/, ""),
  });
}

/** A temporary database. */
export interface TempDatabase {
  readonly directory: string;
  /** `file:<directory>/x.db` */
  readonly url: string;
  /** The file path. */
  readonly path: string;
}

/** Creates an empty temporary folder for a database (the file is created on first use). */
export async function tempDatabase(): Promise<TempDatabase> {
  const directory = await Deno.makeTempDir({ prefix: "beacon-review-" });
  return { directory, url: `file:${directory}/x.db`, path: `${directory}/x.db` };
}

/** One submission to POST to the native endpoint. */
export interface Sample {
  readonly contentType: string;
  readonly body: string | Uint8Array<ArrayBuffer>;
  readonly headers?: Record<string, string>;
  /** The client address (so stats can count sources). */
  readonly from?: string;
}

/** A plain text submission. */
export function text(body: string, from?: string): Sample {
  return { contentType: "text/plain; charset=utf-8", body, from };
}

/** A structured beacon/0.1 message. */
export function message(fields: Record<string, unknown>, from?: string): Sample {
  return {
    contentType: "application/json",
    body: JSON.stringify({
      beacon: "0.1",
      subject: "A subject",
      body: "A body.",
      intent: "information",
      sender: { name: "Test agent" },
      ...fields,
    }),
    from,
  };
}

/**
 * Submits the samples in order through the real handler into `database`, one at a time so
 * `seq` follows the array, and returns the receipts. The Beacon signs no tree heads of its own
 * unless `treeHeads` is true, so a test controls every checkpoint `verify` finds.
 */
export async function fill(
  database: Pick<TempDatabase, "url">,
  samples: readonly Sample[],
  options: { now?: () => number; signingKey?: string; treeHeads?: boolean } = {},
): Promise<Record<string, unknown>[]> {
  const beacon = createBeacon({
    database: { url: database.url },
    rateLimit: "off",
    now: options.now,
    signingKey: options.signingKey,
    checkpointIntervalMs: options.treeHeads === true ? undefined : "off",
  });
  const receipts: Record<string, unknown>[] = [];
  try {
    await beacon.ready(); // creates and migrates the database even when there is nothing to send
    for (const sample of samples) {
      const response = await beacon.fetch(
        new Request("http://127.0.0.1/beacon/0.1/submissions", {
          method: "POST",
          headers: { "content-type": sample.contentType, ...sample.headers },
          body: sample.body,
        }),
        { remoteAddress: sample.from ?? "192.0.2.1" },
      );
      const body = await response.json();
      assert(response.status === 202, `submission refused: ${JSON.stringify(body)}`);
      receipts.push(body.receipt);
    }
  } finally {
    await beacon.close();
  }
  return receipts;
}

/** What a CLI run produced. */
export interface Run {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

const fatal = new TextDecoder("utf-8", { fatal: true });

/**
 * Runs `command args` from the repository's folder with a clean environment (the runtime's own
 * variables, `NO_COLOR`, then `env`), and `input` as its standard input (none without it).
 * Output must be valid UTF-8.
 */
export async function runTool(
  command: string,
  args: string[],
  env: Record<string, string> = {},
  input?: string,
): Promise<Run> {
  const child = new Deno.Command(command, {
    args,
    cwd: ROOT,
    // The runtime's own variables (DENO_DIR, certificates, proxies), none of the BEACON_* set.
    env: { ...childEnvironment(), NO_COLOR: "1", ...env },
    clearEnv: true,
    stdin: input === undefined ? "null" : "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  if (input !== undefined) {
    const writer = child.stdin.getWriter();
    await writer.write(new TextEncoder().encode(input));
    await writer.close();
  }
  const output = await child.output();
  return {
    code: output.code,
    stdout: fatal.decode(output.stdout),
    stderr: fatal.decode(output.stderr),
  };
}

/**
 * Runs `deno task review <args>` as a subprocess against `database`, with exactly the permissions
 * its launcher computes for that command line ({@linkcode runTool} for the rest).
 */
export async function review(
  database: TempDatabase | string,
  args: string[],
  env: Record<string, string> = {},
  input?: string,
): Promise<Run> {
  const url = typeof database === "string" ? database : database.url;
  const all = [...args, "--database", url];
  return await runTool(
    Deno.execPath(),
    ["run", ...await reviewFlags(all, env), MAIN, ...all],
    env,
    input,
  );
}

/**
 * Characters that must never reach the reviewer's terminal raw, written independently of
 * review/render/mod.ts: C0 controls but the line feed, DEL and C1, the bidi controls, zero-width
 * and other invisible characters, line and paragraph separators, variation selectors, tag
 * characters, every format character (Cf), and surrogates.
 */
export const FORBIDDEN =
  // deno-lint-ignore no-control-regex -- finding control characters is the point
  /[\u0000-\u0009\u000B-\u001F\u007F-\u009F\u00AD\u034F\u061C\u115F\u1160\u180E\u200B-\u200F\u2028-\u202E\u2060-\u2069\u3164\uFE00-\uFE0F\uFEFF\uFFA0]|[\u{E0000}-\u{E007F}\u{E0100}-\u{E01EF}]|\p{Cf}|\p{Cs}/u;

/**
 * Standard emoji sequences (UTS #51 `RGI_Emoji`), whose joiners, selectors and tags are shown
 * on purpose; outside them those characters are forbidden.
 */
const EMOJI_SEQUENCE = /\p{RGI_Emoji}/gv;

/** Asserts that `text` holds no forbidden character, naming the first one found. */
export function assertInert(text: string, where: string): void {
  const match = FORBIDDEN.exec(text.replace(EMOJI_SEQUENCE, (emoji) => "E".repeat(emoji.length)));
  assert(
    match === null,
    `${where} holds raw U+${
      match?.[0].codePointAt(0)?.toString(16).toUpperCase().padStart(4, "0")
    } at ${match?.index}`,
  );
}

/** Asserts a run's stdout and stderr are both inert. */
export function assertRunInert(run: Run): void {
  assertInert(run.stdout, "stdout");
  assertInert(run.stderr, "stderr");
}

/** A running `review serve`. */
export interface RunningConsole {
  /** The process started (on Node, the launcher whose child serves). */
  readonly pid: number;
  /** The URL it printed, with the one-time code. */
  readonly url: string;
  /** `http://127.0.0.1:PORT` */
  readonly origin: string;
  /** The one-time code of the printed URL. */
  readonly code: string;
  /**
   * A session credential, for a test that calls the API without a browser: the code exchanged
   * the first time (as the page does), the same credential after. A browser can then no longer
   * use the printed URL.
   */
  session(): Promise<string>;
  /** The CSRF token the exchange of {@linkcode session} gave with the credential. */
  csrf(): Promise<string>;
  /**
   * The next link the console prints once a link has been used (for a reload or another tab),
   * read from its standard output.
   */
  nextLink(): Promise<string>;
  /** Stops it (SIGTERM) and returns its exit status and stderr. */
  stop(): Promise<{ code: number; stderr: string }>;
  /** Waits for it to end by itself, and returns its exit status and stderr. */
  ended(): Promise<{ code: number; stderr: string }>;
}

/**
 * Starts `review serve` on `databaseUrl` as a subprocess with the permissions
 * `deno task review` computes for it, and waits for its URL line.
 */
export async function startConsole(
  databaseUrl: string,
  env: Record<string, string> = {},
  extra: string[] = [],
): Promise<RunningConsole> {
  const args = ["serve", "--database", databaseUrl, "--reviewer", "browser reviewer", ...extra];
  return await serveWith(
    Deno.execPath(),
    ["run", ...await reviewFlags(args, env), MAIN, ...args],
    env,
  );
}

/**
 * Starts a `serve` command line (of any runtime's entry) from the repository's folder with a
 * clean environment, and waits for the one line it prints: the URL with the token.
 */
export async function serveWith(
  command: string,
  args: string[],
  env: Record<string, string> = {},
): Promise<RunningConsole> {
  const child = new Deno.Command(command, {
    args,
    cwd: ROOT,
    env: { ...childEnvironment(), NO_COLOR: "1", ...env },
    clearEnv: true,
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const stderr = new Response(child.stderr).text();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let buffered = "";
  /** The next line it prints (bounded by that line, or the end of its output). */
  const line = async () => {
    while (!buffered.includes("\n")) {
      const { value, done } = await reader.read();
      if (done) break;
      buffered += value;
    }
    const end = buffered.includes("\n") ? buffered.indexOf("\n") + 1 : buffered.length;
    const first = buffered.slice(0, end);
    buffered = buffered.slice(end);
    return first;
  };
  const printed = await line();
  const match = /(http:\/\/127\.0\.0\.1:\d+)\/#code=([A-Za-z0-9_-]{43})/.exec(printed);
  if (match === null) {
    child.kill("SIGTERM");
    await child.status;
    throw new Error(`review serve did not start: ${printed} ${await stderr}`);
  }
  const origin = match[1];
  let session: Promise<{ session: string; csrf: string }> | undefined;
  return {
    pid: child.pid,
    url: match[0],
    origin,
    code: match[2],
    async session() {
      session ??= exchangeCode(origin, match[2]);
      return (await session).session;
    },
    async csrf() {
      session ??= exchangeCode(origin, match[2]);
      return (await session).csrf;
    },
    async nextLink() {
      const next = /http:\/\/127\.0\.0\.1:\d+\/#code=[A-Za-z0-9_-]{43}/.exec(await line());
      assert(next !== null, "the console printed its next link");
      return next[0];
    },
    async ended() {
      await reader.cancel().catch(() => {});
      const status = await child.status;
      return { code: status.code, stderr: await stderr };
    },
    async stop() {
      try {
        child.kill("SIGTERM");
      } catch {
        // It has ended already (a test stopped it another way).
      }
      await reader.cancel().catch(() => {});
      const status = await child.status;
      return { code: status.code, stderr: await stderr };
    },
  };
}

/** The CSRF token of the pages the console at `origin` serves (for the code's exchange). */
export async function consoleCsrf(origin: string): Promise<string> {
  const html = await (await fetch(`${origin}/`)).text();
  const csrf = /name="csrf-token" content="([A-Za-z0-9_-]+)"/.exec(html)?.[1];
  assert(csrf !== undefined, "the page carries a CSRF token");
  return csrf;
}

/**
 * Exchanges a console's one-time code for its session credential and that session's CSRF token,
 * as the page does: a POST to `/api/session` from the console's own origin with a served page's
 * CSRF token.
 */
export async function exchangeCode(
  origin: string,
  code: string,
): Promise<{ session: string; csrf: string }> {
  const response = await fetch(`${origin}/api/session`, {
    method: "POST",
    headers: {
      origin,
      "content-type": "application/json",
      "x-csrf-token": await consoleCsrf(origin),
    },
    body: JSON.stringify({ code }),
  });
  const body = await response.json();
  assert(response.status === 200, `the code was refused: ${JSON.stringify(body)}`);
  return { session: String(body.session), csrf: String(body.csrf) };
}

/**
 * A script for a browser page's `addInitScript` (page-side code given as text: it runs in the
 * browser, not in Deno) that collects every Content Security Policy violation the page causes
 * in `window.__violations`, so a console test can assert there were none.
 */
export const RECORD_CSP_VIOLATIONS = `
  window.__violations = [];
  document.addEventListener("securitypolicyviolation", (event) => {
    window.__violations.push(event.violatedDirective + " " + event.blockedURI);
  });`;

/** Runs one SQL statement on its own connection, as a database writer (`sqlite3`) would. */
export async function rawSql(url: string, sql: string, ...args: InValue[]): Promise<void> {
  const client = createClient({ url });
  try {
    await client.execute({ sql, args });
  } finally {
    client.close();
  }
}

/**
 * The names of the files in `directory` that hold `word` anywhere in their bytes (the database
 * file, its `-wal` and its `-shm`: a redacted word must be in none).
 */
export async function filesHolding(directory: string, word: string): Promise<string[]> {
  const needle = new TextEncoder().encode(word);
  const found: string[] = [];
  for await (const entry of Deno.readDir(directory)) {
    let bytes: Uint8Array;
    try {
      bytes = await Deno.readFile(`${directory}/${entry.name}`);
    } catch (error) {
      // SQLite deletes `-wal` and `-shm` when a database's last connection closes, which was
      // seen to happen between the listing and the read: a file gone holds nothing.
      if (error instanceof Deno.errors.NotFound) continue;
      throw error;
    }
    outer: for (let start = 0; start + needle.length <= bytes.length; start++) {
      for (let index = 0; index < needle.length; index++) {
        if (bytes[start + index] !== needle[index]) continue outer;
      }
      found.push(entry.name);
      break;
    }
  }
  return found;
}
