// The npm package's build tools (tools/build/: tsdown, TypeScript, publint, attw, @types/node),
// installed on first use with `npm ci` from their committed lock file. They are not in the root
// package.json, so `deno task start` (which installs everything the root declares) and a plain
// `npm install` fetch none of them. Plain Node: `npm start`, `npm run build` and
// `npm pack` use it on a Node-only machine. The stamp and the lock folder are the ones
// scripts/tools.ts uses for every tools/ folder, so Deno and Node installs agree.
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

/** The tools/build folder. */
export const BUILD_TOOLS = fileURLToPath(new URL("../tools/build", import.meta.url));

const stamp = `${BUILD_TOOLS}/node_modules/.beacon-install-stamp`;
const lock = `${BUILD_TOOLS}/.install-lock`;

function lockDigest() {
  return createHash("sha256").update(readFileSync(`${BUILD_TOOLS}/package-lock.json`)).digest(
    "hex",
  );
}

function stamped(digest) {
  try {
    return readFileSync(stamp, "utf8").trim() === digest;
  } catch {
    return false;
  }
}

function sleep(ms) {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/** Takes the lock folder (`mkdir` is atomic); a lock older than 10 minutes is taken over. */
function takeLock() {
  const deadline = Date.now() + 300_000;
  while (true) {
    try {
      mkdirSync(lock);
      return;
    } catch (error) {
      if (error.code !== "EEXIST") throw error;
      let held = 0;
      try {
        held = statSync(lock).mtimeMs;
      } catch { /* released meanwhile */ }
      if (held > 0 && Date.now() - held > 600_000) {
        rmSync(lock, { recursive: true, force: true });
        continue;
      }
      if (Date.now() > deadline) throw new Error(`${lock} has been held for 5 minutes`);
      sleep(250);
    }
  }
}

/** Installs tools/build/ unless it is installed from its current lock file. */
export function ensureBuildTools() {
  const digest = lockDigest();
  if (stamped(digest)) return;
  takeLock();
  try {
    if (stamped(digest)) return; // another process installed it meanwhile
    console.error("Installing tools/build/ (npm ci)");
    const result = spawnSync("npm", ["ci", "--ignore-scripts", "--no-audit", "--no-fund"], {
      cwd: BUILD_TOOLS,
      stdio: ["ignore", "ignore", "inherit"],
    });
    if (result.status !== 0) {
      throw new Error(`Cannot install tools/build/: npm ci exited ${result.status ?? "early"}`);
    }
    writeFileSync(stamp, digest + "\n");
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

/** The path of one of tools/build/'s executables (`tsdown`, `tsc`, `publint`, `attw`). */
export function buildTool(name) {
  ensureBuildTools();
  return `${BUILD_TOOLS}/node_modules/.bin/${name}`;
}
