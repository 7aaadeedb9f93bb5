// `npm start` (its prestart) and scripts/build.ts: builds the npm package (dist/, tsdown from
// tools/build/, installed on first use) only when its inputs changed since the last build, so a
// start on an unchanged tree neither rebuilds nor prints tsdown's output. The inputs
// are mod.ts, tsdown.config.ts, package.json, tools/build/package-lock.json (the build tools'
// versions) and every .ts, .json, .js and .css file under src/ and review/ (its tests aside); their digest is kept in
// dist/.beacon-build-stamp. Plain Node (no Deno, no TypeScript): it runs on a Node-only machine.
// `--force` builds whatever the stamp says (`npm run build`, `npm pack`).
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath, pathToFileURL } from "node:url";
import process from "node:process";
import { buildTool } from "./build_tools.mjs";

const root = fileURLToPath(new URL("..", import.meta.url)).replace(/\/$/, "");
const stamp = `${root}/dist/.beacon-build-stamp`;

/** The SHA-256 of every input's path and bytes, in a fixed order. */
function inputsDigest() {
  const files = [
    `${root}/mod.ts`,
    `${root}/tsdown.config.ts`,
    `${root}/package.json`,
    `${root}/tools/build/package-lock.json`,
  ];
  const walk = (folder) => {
    for (const entry of readdirSync(folder, { withFileTypes: true })) {
      const path = `${folder}/${entry.name}`;
      if (entry.isDirectory()) {
        if (entry.name !== "tests") walk(path);
      } else if (/\.(ts|json|js|css)$/.test(entry.name)) files.push(path);
    }
  };
  walk(`${root}/src`);
  walk(`${root}/review`);
  files.sort();
  const hash = createHash("sha256");
  for (const file of files) hash.update(file.slice(root.length)).update(readFileSync(file));
  return hash.digest("hex");
}

function built() {
  try {
    return readFileSync(stamp, "utf8").trim();
  } catch {
    return "";
  }
}

/**
 * Builds dist/ when its inputs changed since the last build (or always, with `force`), and
 * exits the process with a one-line message when it cannot.
 *
 * @param {{ force?: boolean, quiet?: boolean }} options `quiet`: tsdown's report goes to stderr,
 *   for a caller whose stdout is its own output (review/runtime/launch.mjs).
 */
export function buildPackage({ force = false, quiet = false } = {}) {
  const digest = inputsDigest();
  if (!force && built() === digest) return;
  let tsdown;
  try {
    tsdown = buildTool("tsdown");
  } catch (error) {
    console.error(`Cannot build the package: ${error.message}`);
    process.exit(1);
  }
  // tsdown's stderr is filtered: on Node 20 it warns that Node 20 "is deprecated"
  // (tsdown/dist/run.mjs, unconditionally, no variable silences it), which is no news to an
  // operator starting the server; every other line passes through.
  const result = spawnSync(tsdown, [], {
    cwd: root,
    stdio: ["ignore", quiet ? 2 : "inherit", "pipe"],
    encoding: "utf8",
  });
  const stderr = (result.stderr ?? "").split("\n")
    .filter((line) => !/\[tsdown\] Node\.js v\S+ is deprecated\./.test(line)).join("\n");
  if (stderr.trim() !== "") process.stderr.write(stderr.endsWith("\n") ? stderr : stderr + "\n");
  if (result.status !== 0) {
    console.error("Cannot build the package: tsdown failed");
    process.exit(result.status ?? 1);
  }
  writeFileSync(stamp, digest + "\n");
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  buildPackage({ force: process.argv.includes("--force") });
}
