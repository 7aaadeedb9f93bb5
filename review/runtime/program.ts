/**
 * The name the review tool gives itself in its hints and help on Node and Bun: the command the
 * reviewer typed. Shared by the Node launcher (launch_node.ts) and the Node and Bun entry
 * (node.ts); Deno's entry is always `deno task review`.
 *
 * @module
 */

/**
 * How the reviewer ran the tool, for its hints and help: `npm run review --` or `bun run review`
 * (package.json's script, which npm and Bun announce in `npm_lifecycle_event`; which of them by
 * the runtime this is), `npx beacon-review` (npm's `exec`, announced as `npx`), else the bare
 * command, as on the PATH. Under the Node launcher this process is its child, and the launcher,
 * which sees npm's variables first, passes its finding on in `BEACON_REVIEW_PROGRAM`.
 *
 * @param env Reads an environment variable.
 * @param bun Whether this is Bun.
 * @returns The command to name.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { programName } from "./program.ts";
 *
 * const npx = { npm_lifecycle_event: "npx", npm_command: "exec" } as Record<string, string>;
 * assert.equal(programName((name) => npx[name], false), "npx beacon-review");
 * ```
 */
export function programName(env: (name: string) => string | undefined, bun: boolean): string {
  const passed = env("BEACON_REVIEW_PROGRAM");
  if (passed !== undefined && /^[a-z -]{1,40}$/.test(passed)) return passed;
  const event = env("npm_lifecycle_event");
  if (event === "review") return bun ? "bun run review" : "npm run review --";
  if (event === "npx" || env("npm_command") === "exec") return "npx beacon-review";
  if (event === "bunx") return "bunx beacon-review";
  return "beacon-review";
}
