#!/usr/bin/env node
/**
 * `npx beacon-review …` (the npm package's `bin`) and `npm run review -- …`: computes what this
 * run needs (permissions.ts) and runs the built tool (`dist/review.mjs`, from node.ts) in a
 * second Node process under Node's permission model, forwarding SIGINT/SIGTERM and its exit
 * code, and stopping it with SIGTERM when the process above this one has exited (parent.ts). Like launch_deno.ts, this is the only process without the restrictions, and it opens no
 * database and reads no submission.
 *
 * The child may read only its own code (this folder, where the build put it), the folders the
 * dependencies are installed in, and the database folder; it may write only the database
 * folder and an export's one file; it may start no process and no worker; and it loads native
 * addons only for a file database, whose driver is one.
 *
 * @module
 */
import { spawn } from "node:child_process";
import { existsSync, realpathSync } from "node:fs";
import { createRequire } from "node:module";
import { constants } from "node:os";
import process from "node:process";
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { whenParentExits } from "./parent.ts";
import { runPaged } from "./page_node.ts";
import { pagerPlan } from "./pager.ts";
import { nodePermissionFlags, reviewNeeds } from "./permissions.ts";
import { programName } from "./program.ts";

/** The packages the tool imports at run time (tsdown.config.ts leaves them unbundled). */
const DEPENDENCIES = [
  "@libsql/client",
  "libsql",
  "@noble/curves/ed25519.js",
  "@noble/hashes/sha2.js",
  "valibot",
  "get-east-asian-width",
  "unhomoglyph",
];

const here = fileURLToPath(new URL(".", import.meta.url)).replace(/\/$/, "");

/** Each `node_modules` folder a dependency resolves into, real paths and as named. */
function dependencyFolders(): string[] {
  const require = createRequire(import.meta.url);
  const folders = new Set<string>();
  for (const name of DEPENDENCIES) {
    let path: string;
    try {
      path = require.resolve(name);
    } catch {
      continue; // an optional one that is missing fails in the child, with its own message
    }
    for (const candidate of [path, realpathSync(path)]) {
      const at = candidate.lastIndexOf("/node_modules/");
      if (at !== -1) folders.add(candidate.slice(0, at + "/node_modules".length));
    }
  }
  return [...folders];
}

const args = process.argv.slice(2);
const needs = reviewNeeds({ args, env: (name) => process.env[name], cwd: process.cwd() });
// Node's permission model denies even a `stat` under a granted folder that does not exist, so
// the tool could only say "Access to this API has been restricted". The launcher, which runs
// unrestricted, says what Deno and Bun say (data/database.ts) before it starts the tool.
if (needs.databaseFile !== undefined && !existsSync(dirname(needs.databaseFile))) {
  process.stderr.write(`error: Cannot open the database: ${needs.databaseUrl} does not exist\n`);
  process.exit(1);
}
const flags = nodePermissionFlags(needs, {
  code: [...new Set([here, realpathSync(here), ...dependencyFolders()])],
  permissionFlag: process.allowedNodeEnvironmentFlags.has("--permission")
    ? "--permission"
    : "--experimental-permission",
});
// The command the reviewer typed, as the tool's hints name it (program.ts).
const env = {
  ...process.env,
  BEACON_REVIEW_PROGRAM: programName((name) => process.env[name], false),
};
// `show` and `next` on a terminal: the output is read here and paged when long (pager.ts).
const plan = pagerPlan(
  args,
  (name) => process.env[name],
  process.stdout.isTTY ? { columns: process.stdout.columns, rows: process.stdout.rows } : undefined,
);
if (plan !== undefined) {
  runPaged(process.execPath, [...flags, `${here}/review.mjs`], plan, env);
} else {
  runInherited();
}

function runInherited(): void {
  const child = spawn(process.execPath, [...flags, `${here}/review.mjs`, ...args], {
    stdio: "inherit",
    env,
  });
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    process.on(signal, () => child.kill(signal));
  }
  // `npm run review` signals `sh`, which dies without passing the signal on (parent.ts).
  whenParentExits(() => child.kill("SIGTERM"));
  // A child ended by a signal exits as a shell reports it: 128 + the signal's number.
  child.on("exit", (code, signal) => {
    process.exit(code ?? 128 + (signal === null ? 0 : constants.signals[signal]));
  });
}
