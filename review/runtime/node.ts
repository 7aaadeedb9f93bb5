/**
 * The review tool on Node (20.19 and later) and Bun: `process`'s standard streams and
 * environment and a `node:http` server behind the {@linkcode Context} every command takes. The
 * console's requests go through the server's own `node:http` adapter (the package's `./node`
 * export), so they reach the console's fetch handler exactly as on Deno.
 *
 * Node runs the build of this file (`dist/review.mjs`) through launch_node.ts, under Node's
 * permission model; Bun runs it from the sources (`bun run review`), with no permission model
 * to run it under (docs/review.md says what that means).
 *
 * @module
 */
import { createServer } from "node:http";
import process from "node:process";
import { toNodeListener } from "../../src/adapter/node/node.ts";
import { type ByteWriter, type Context, type ServeConsole, textOutput } from "../io.ts";
import { main } from "../main.ts";
import { whenParentExits } from "./parent.ts";
import { programName } from "./program.ts";

/** A byte writer over a Node stream, settling when the bytes were handed to the system. */
function streamWriter(stream: NodeJS.WriteStream): ByteWriter {
  // An EPIPE (the reader of a pipe went away) reaches the write's callback, and main.ts ends
  // quietly on it; without a listener the stream would also throw it as an uncaught error.
  stream.on("error", () => {});
  return {
    write: (bytes) =>
      new Promise((resolve, reject) =>
        stream.write(bytes, (error) => error ? reject(error) : resolve(bytes.length))
      ),
  };
}

/** `node:http` until SIGINT or SIGTERM. */
const serve: ServeConsole = (listen, handler) => {
  const server = createServer(toNodeListener(handler));
  const finished = new Promise<void>((resolve) => server.once("close", () => resolve()));
  // A Ctrl-C reaches this process twice, from the terminal and from the launcher, which
  // forwards it: the second must not end the process before the first has closed the server.
  let stopping = false;
  const stop = () => {
    if (stopping) return;
    stopping = true;
    server.close();
    server.closeAllConnections();
  };
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
  // `bun run review serve` runs this process under `sh`, which a signal to Bun ends without
  // passing it on: the console stops when its parent is gone (parent.ts).
  whenParentExits(stop);
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(listen.port, listen.hostname, () => {
      const address = server.address();
      const port = typeof address === "object" && address !== null ? address.port : listen.port;
      // The listeners stay: a signal after the close (the launcher's forwarded one) must find
      // one, or it would end the process by default before main.ts returns its status.
      resolve({ port, finished });
    });
  });
};

/**
 * The context of a real run on Node or Bun.
 *
 * @returns The process's stdout and stderr, environment and clock, a `node:http` console.
 */
export function nodeContext(): Context {
  const env = (name: string) => process.env[name];
  return {
    program: programName(env, process.versions.bun !== undefined),
    stdout: textOutput(streamWriter(process.stdout)),
    stderr: textOutput(streamWriter(process.stderr)),
    progress: process.stderr.isTTY ? streamWriter(process.stderr) : undefined,
    terminalColumns: process.stdout.isTTY ? process.stdout.columns : undefined,
    env,
    now: Date.now,
    input: () => ReadableStream.from(process.stdin) as ReadableStream<Uint8Array>,
    serve,
  };
}

// This file is an entry (`dist/review.mjs`, `bun review/runtime/node.ts`): importing it runs the
// tool.
process.exit(await main(process.argv.slice(2), nodeContext()));
