/**
 * Output of the review tool. Everything written to stdout or stderr goes through
 * {@linkcode Output.write}, which passes it through `sanitizeOutput` (render/mod.ts) as a last line
 * of defence: even text that a command forgot to render safely (a database error message, an
 * argument echoed back) cannot carry a raw control, bidi or invisible character to the terminal.
 * The only exception is the progress bar, which writes a carriage return of our own, and only
 * when stderr is a terminal.
 *
 * @module
 */
import { sanitizeOutput } from "./render/mod.ts";

/**
 * What every command gets from its runtime's entry point (`runtime/deno.ts`; `runtime/node.ts` on
 * Node and Bun): outputs, environment, clock, and the runtime's HTTP server for the console.
 * This is the one interface between the review tool and a runtime; every other file uses only
 * web standards and `node:` modules that Deno, Node and Bun share (`node:fs/promises`,
 * `node:util`).
 */
export interface Context {
  /** How the reviewer runs the tool here, for hints and help: `deno task review`, … */
  readonly program: string;
  /** Standard output, sanitised. */
  readonly stdout: Output;
  /** Standard error, sanitised. */
  readonly stderr: Output;
  /** Where a progress bar may draw: stderr when it is a terminal, else undefined. */
  readonly progress: ByteWriter | undefined;
  /** The terminal's width when stdout is a terminal. */
  readonly terminalColumns: number | undefined;
  /** Reads an environment variable. */
  readonly env: (name: string) => string | undefined;
  /** Current time in epoch milliseconds. */
  readonly now: () => number;
  /** The reviewer's answers (standard input), opened only by a command that reads them. */
  readonly input?: () => ReadableStream<Uint8Array>;
  /** Serves the web console (`review serve`); absent where a command never serves. */
  readonly serve?: ServeConsole;
}

/**
 * Listens on `hostname:port` (port 0: any free one) with the runtime's own HTTP server, answers
 * every request with `handler`, and stops at SIGINT or SIGTERM.
 */
export type ServeConsole = (
  listen: { readonly hostname: string; readonly port: number },
  handler: (request: Request) => Promise<Response>,
) => Promise<ServingConsole>;

/** A console being served. */
export interface ServingConsole {
  /** The port it listens on (the one the system chose for port 0). */
  readonly port: number;
  /** Settles once a stop signal has closed the server. */
  readonly finished: Promise<void>;
}

/** A refusal or failure with a message for the reviewer and an exit status. */
export class CliError extends Error {
  /** 1 for failures and problems found, 2 for usage errors. */
  readonly exitCode: number;

  /**
   * Creates the error.
   *
   * @param message Sentence case, no final period, "Cannot X: reason".
   * @param exitCode The process exit status (default 1).
   */
  constructor(message: string, exitCode = 1) {
    super(message);
    this.name = "CliError";
    this.exitCode = exitCode;
  }
}

/** Something bytes can be written to: standard output or error, an export file. */
export interface ByteWriter {
  /** Writes some of `bytes`, returning how many. */
  write(bytes: Uint8Array): Promise<number>;
}

/** A text output that is safe for terminals by construction. */
export interface Output {
  /** Writes `text` after `sanitizeOutput`. */
  write(text: string): Promise<void>;
  /** Writes `text` and a line feed. */
  line(text?: string): Promise<void>;
}

const encoder = new TextEncoder();

/**
 * Writes every byte, looping over short writes.
 *
 * @param writer Where to write.
 * @param bytes What to write.
 */
export async function writeAll(writer: ByteWriter, bytes: Uint8Array): Promise<void> {
  let offset = 0;
  while (offset < bytes.length) offset += await writer.write(bytes.subarray(offset));
}

/**
 * An {@linkcode Output} over a byte writer.
 *
 * @param writer The destination.
 * @returns The output.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { textOutput } from "./io.ts";
 *
 * const written: Uint8Array[] = [];
 * const writer = { write: (bytes: Uint8Array) => Promise.resolve(written.push(bytes.slice()) && bytes.length) };
 * await textOutput(writer).line("hello\u001B[2J");
 * assert.equal(new TextDecoder().decode(written[0]), "hello\\u001B[2J\n");
 * ```
 */
export function textOutput(writer: ByteWriter): Output {
  const write = async (text: string) => {
    if (text.length > 0) await writeAll(writer, encoder.encode(sanitizeOutput(text)));
  };
  return { write, line: (text = "") => write(text + "\n") };
}

/**
 * A progress bar on a terminal (`\r`-redrawn, one line). Draws nothing when `writer` is
 * undefined, which is how callers switch it off when stderr is not a terminal.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Progress } from "./io.ts";
 *
 * const progress = new Progress(undefined, "export", 10); // no writer: draws nothing
 * await progress.update(5);
 * await progress.finish();
 * assert.ok(progress instanceof Progress);
 * ```
 */
export class Progress {
  readonly #writer: ByteWriter | undefined;
  readonly #label: string;
  readonly #total: number;
  #drawn = false;

  /**
   * Creates a bar; nothing is drawn until the first update.
   *
   * @param writer The terminal, or undefined for no bar.
   * @param label A word of our own shown before the bar.
   * @param total The expected count (0 when unknown).
   */
  constructor(writer: ByteWriter | undefined, label: string, total: number) {
    this.#writer = writer;
    this.#label = label;
    this.#total = total;
  }

  /**
   * Redraws the bar for `done` items.
   *
   * @param done Items finished so far.
   */
  async update(done: number): Promise<void> {
    if (this.#writer === undefined) return;
    this.#drawn = true;
    await writeAll(
      this.#writer,
      encoder.encode("\r" + progressLine(this.#label, done, this.#total)),
    );
  }

  /** Ends the bar's line. */
  async finish(): Promise<void> {
    if (this.#writer !== undefined && this.#drawn) {
      await writeAll(this.#writer, encoder.encode("\n"));
    }
  }
}

/**
 * The text of one progress bar state (no control characters).
 *
 * @param label Leading word.
 * @param done Items done.
 * @param total Items expected (0 when unknown).
 * @returns For example `export [##########----------] 50/100 50%`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { progressLine } from "./io.ts";
 *
 * assert.equal(progressLine("export", 1, 4), "export [#####---------------] 1/4 25%");
 * ```
 */
export function progressLine(label: string, done: number, total: number): string {
  const slots = 20;
  if (total <= 0) return `${label} ${done}`;
  const fraction = Math.min(1, done / total);
  const filled = Math.round(fraction * slots);
  return `${label} [${"#".repeat(filled)}${"-".repeat(slots - filled)}] ${done}/${total} ` +
    `${Math.floor(fraction * 100)}%`;
}

/**
 * The body of a request or an answer, read chunk by chunk and abandoned as soon as it passes
 * `limit` bytes: a declared `Content-Length` over it is refused before reading, and a body sent in
 * chunks is counted as it arrives and cancelled at the first byte over, so a hostile sender costs
 * at most `limit` bytes of memory and the rest is never read. Used by the console for the POSTs
 * it is sent and by `monitor` for the answers of the log it watches.
 *
 * @returns The bytes, or undefined when there are more than `limit`.
 */
export async function readBounded(
  message: Request | Response,
  limit: number,
): Promise<Uint8Array | undefined> {
  const declared = message.headers.get("content-length");
  if (declared !== null && !(Number(declared) <= limit)) {
    await message.body?.cancel().catch(() => {});
    return undefined;
  }
  const reader = message.body?.getReader();
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
  const bytes = new Uint8Array(length);
  let at = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, at);
    at += chunk.byteLength;
  }
  return bytes;
}
