/**
 * Paging `show` and `next`: a 50 KB submission otherwise scrolls past the reviewer. The
 * launchers (launch_deno.ts, and page_node.ts for Node's launcher and Bun) decide with this
 * module, then run the tool with its standard output read into memory, and hand that output to
 * the pager only when it is longer than the terminal, and only when their own standard output
 * is a terminal: into a pipe or a file, the output is written exactly as without a pager.
 *
 * The pager runs from the launcher, never from the tool: the tool keeps its narrow permissions
 * (no process spawning under Deno's or Node's permission model), and what the pager gets is the
 * tool's output, already rendered inert (render/mod.ts).
 *
 * `PAGER` is honoured: split at spaces and run without a shell (`PAGER="less -S"`); `cat` or an
 * empty value means no pager. Unset, it is `less`, with `LESS=FRX` when `LESS` is unset (as git
 * does: quit when the text fits, keep it on the screen after). A pager that cannot start leaves
 * the output written directly.
 *
 * @module
 */

/** The commands whose output is paged. */
const PAGED = new Set(["show", "next"]);

/** What a launcher needs to page. */
export interface PagerPlan {
  /** The pager's program and its arguments. */
  readonly command: readonly string[];
  /** Variables to add to the pager's environment. */
  readonly env: Record<string, string>;
  /** The tool's arguments, with the terminal's width added when none was given. */
  readonly args: string[];
}

/**
 * Whether and how to page a run of the tool.
 *
 * @param args The tool's command line.
 * @param env Reads the launcher's environment.
 * @param terminal The launcher's standard output's size, when it is a terminal.
 * @returns The plan, or `undefined` to run the tool as it is.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { pagerPlan } from "./pager.ts";
 *
 * const terminal = { columns: 120, rows: 40 };
 * assert.equal(pagerPlan(["show", "abc"], () => undefined, undefined), undefined);
 * assert.deepEqual(pagerPlan(["show", "abc"], () => "less -S", terminal)?.command, ["less", "-S"]);
 * assert.equal(pagerPlan(["list"], () => undefined, terminal), undefined);
 * ```
 */
export function pagerPlan(
  args: readonly string[],
  env: (name: string) => string | undefined,
  terminal: { columns: number; rows: number } | undefined,
): PagerPlan | undefined {
  if (terminal === undefined) return undefined;
  let at = 0;
  while (at < args.length && /^--(database|width)(=|$)/.test(args[at])) {
    at += args[at].includes("=") ? 1 : 2;
  }
  if (!PAGED.has(args[at] ?? "") || args.some((arg) => arg === "--help" || arg === "-h")) {
    return undefined;
  }
  const pager = env("PAGER");
  const command = (pager ?? "less").trim().split(/\s+/).filter((word) => word !== "");
  if (command.length === 0 || command[0] === "cat") return undefined;
  const less: Record<string, string> = pager === undefined && env("LESS") === undefined
    ? { LESS: "FRX" }
    : {};
  // Read through a pipe, the tool would not know the terminal's width.
  const width = args.some((arg) => /^--width(=|$)/.test(arg))
    ? []
    : [`--width=${terminal.columns}`];
  return { command, env: less, args: [...args, ...width] };
}

/**
 * Whether `output` is too long for a terminal of `rows` rows (the prompt's line kept).
 *
 * @param output The tool's whole standard output.
 * @param rows The terminal's height.
 * @returns `true` to page it.
 */
export function needsPaging(output: string, rows: number): boolean {
  let lines = 0;
  for (let at = output.indexOf("\n"); at !== -1; at = output.indexOf("\n", at + 1)) {
    if (++lines >= rows) return true;
  }
  return false;
}
