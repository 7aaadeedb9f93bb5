/**
 * Runs the tool as a child process and pages its output (pager.ts), with `node:child_process`:
 * for Node's launcher (launch_node.ts) and for Bun (launch.mjs), whose tool otherwise runs in the
 * launcher's own process.
 *
 * @module
 */
import { spawn } from "node:child_process";
import { constants } from "node:os";
import process from "node:process";
import { whenParentExits } from "./parent.ts";
import type { PagerPlan } from "./pager.ts";
import { needsPaging } from "./pager.ts";

/**
 * Runs `command args` with its standard output read into memory, then writes that output to the
 * pager when it is longer than the terminal, else directly, and ends this process with the
 * child's status (signals forwarded to the child meanwhile).
 *
 * @param command The runtime's executable.
 * @param flags What comes before the tool's arguments (permission flags, the entry).
 * @param plan The pager plan.
 * @param env The child's environment.
 */
export function runPaged(
  command: string,
  flags: readonly string[],
  plan: PagerPlan,
  env: NodeJS.ProcessEnv,
): void {
  const child = spawn(command, [...flags, ...plan.args], {
    stdio: ["inherit", "pipe", "inherit"],
    env,
  });
  const chunks: Buffer[] = [];
  child.stdout.on("data", (chunk: Buffer) => chunks.push(chunk));
  // Signals go to the tool while it runs; once it has ended, the pager has the terminal.
  const forward = (signal: NodeJS.Signals) => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
  };
  for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, () => forward(signal));
  whenParentExits(() => forward("SIGTERM"));
  child.on("close", (code, signal) => {
    // A child ended by a signal exits as a shell reports it: 128 + the signal's number.
    const status = code ?? 128 + (signal === null ? 0 : constants.signals[signal]);
    const output = Buffer.concat(chunks);
    const rows = process.stdout.rows ?? 24;
    if (!needsPaging(output.toString("utf8"), rows)) {
      process.stdout.write(output, () => process.exit(status));
      return;
    }
    const pager = spawn(plan.command[0], plan.command.slice(1), {
      stdio: ["pipe", "inherit", "inherit"],
      env: { ...process.env, ...plan.env },
    });
    // A pager that cannot start: the output is written directly instead.
    let started = true;
    pager.on("error", () => {
      started = false;
      process.stdout.write(output, () => process.exit(status));
    });
    pager.stdin.on("error", () => {}); // the reader quit before the end (q in less)
    pager.on("close", () => {
      if (started) process.exit(status);
    });
    pager.stdin.end(output);
  });
}
