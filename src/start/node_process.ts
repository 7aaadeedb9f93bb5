/**
 * The process facts of the runtimes with Node's `process` (Node, Bun): how the server entries
 * read the environment, hear SIGINT / SIGTERM and exit.
 *
 * @module
 */
import process from "node:process";

/** The environment, stop signals and exit of a Node-style process, for `runServer`. */
export const nodeProcess = {
  env: (name: string): string | undefined => process.env[name],
  onStopSignal(handler: () => void): void {
    process.on("SIGINT", handler);
    process.on("SIGTERM", handler);
  },
  exit: (code: number): never => process.exit(code),
} as const;
