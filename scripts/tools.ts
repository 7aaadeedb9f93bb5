/**
 * The project-local npm tools under `tools/`: Bun, Miniflare (workerd), esbuild, and the npm
 * packages the bundles for those runtimes resolve. Nothing global is assumed beyond Node and npm;
 * `tools/package.json` and `tools/package-lock.json` are committed, `tools/node_modules/` and
 * `tools/dist/` are not.
 *
 * @example
 * ```ts ignore
 * import { ensureTools, bunExecutable } from "./scripts/tools.ts";
 *
 * await ensureTools();
 * console.log(bunExecutable());
 * ```
 *
 * @module
 */

/** The repository root. */
export const ROOT: string = new URL("../", import.meta.url).pathname.replace(/\/$/, "");
/** The local npm prefix. */
export const TOOLS: string = `${ROOT}/tools`;
/** Where the bundles go. */
export const DIST: string = `${TOOLS}/dist`;

const STAMP = `${TOOLS}/node_modules/.beacon-install-stamp`;
const LOCK = `${TOOLS}/.install-lock`;

async function sha256(path: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", await Deno.readFile(path));
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
}

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.stat(path);
    return true;
  } catch {
    return false;
  }
}

async function installed(lockDigest: string): Promise<boolean> {
  try {
    return (await Deno.readTextFile(STAMP)).trim() === lockDigest;
  } catch {
    return false;
  }
}

/** Runs a command to completion, failing with its output when it fails. */
async function run(command: string, args: string[], cwd: string): Promise<void> {
  let output: Deno.CommandOutput;
  try {
    output = await new Deno.Command(command, { args, cwd, stdout: "piped", stderr: "piped" })
      .output();
  } catch (error) {
    throw new Error(
      `Cannot run ${command}: ${(error as Error).message} (Node.js and npm must be installed)`,
    );
  }
  if (!output.success) {
    const text = new TextDecoder().decode(output.stderr) + new TextDecoder().decode(output.stdout);
    throw new Error(`Cannot run ${command} ${args.join(" ")}: exit ${output.code}\n${text}`);
  }
}

/**
 * Installs `tools/` with `npm ci` unless it is already installed from the current lock file.
 * Safe to call from several processes at once (an exclusive lock folder serialises installs).
 * Install scripts are not run: the binaries come from the platform packages npm selects.
 */
export async function ensureTools(): Promise<void> {
  const digest = await sha256(`${TOOLS}/package-lock.json`);
  if (await installed(digest)) return;
  const deadline = Date.now() + 300_000;
  while (true) {
    try {
      await Deno.mkdir(LOCK);
      break;
    } catch (error) {
      if (!(error instanceof Deno.errors.AlreadyExists)) throw error;
      // A lock older than any install is left over from a process that died: take it over.
      const held = await Deno.stat(LOCK).then((info) => info.mtime?.getTime() ?? 0, () => 0);
      if (held > 0 && Date.now() - held > 600_000) {
        await Deno.remove(LOCK).catch(() => {});
        continue;
      }
      if (Date.now() > deadline) {
        throw new Error(`Cannot install tools/: ${LOCK} has been held for 5 minutes`);
      }
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
  try {
    if (await installed(digest)) return; // another process installed it meanwhile
    console.error("Installing Bun, Miniflare and esbuild into tools/ (npm ci)");
    await run("npm", ["ci", "--ignore-scripts", "--no-audit", "--no-fund"], TOOLS);
    await Deno.writeTextFile(STAMP, digest + "\n");
  } finally {
    await Deno.remove(LOCK).catch(() => {});
  }
}

/** The platform-specific package name suffixes npm may have installed, most specific first. */
function platformNames(): string[] {
  const os = Deno.build.os === "windows" ? "windows" : Deno.build.os;
  const arch = Deno.build.arch === "aarch64" ? "aarch64" : "x64";
  return [`${os}-${arch}`, `${os}-${arch}-baseline`, `${os}-${arch}-musl`];
}

async function firstExisting(paths: string[], what: string): Promise<string> {
  for (const path of paths) {
    if (await exists(path)) return path;
  }
  throw new Error(
    `Cannot find ${what} in tools/node_modules (looked for ${paths.join(", ")}); ` +
      "run `deno run -A scripts/runtimes.ts install`",
  );
}

/** The Bun executable from the `bun` npm package's platform package. */
export function bunExecutable(): Promise<string> {
  return firstExisting(
    platformNames().map((name) => `${TOOLS}/node_modules/@oven/bun-${name}/bin/bun`),
    "the Bun executable",
  );
}

/** The esbuild executable from its platform package. */
export function esbuildExecutable(): Promise<string> {
  const os = Deno.build.os === "windows" ? "win32" : Deno.build.os;
  const arch = Deno.build.arch === "aarch64" ? "arm64" : "x64";
  return firstExisting(
    [`${TOOLS}/node_modules/@esbuild/${os}-${arch}/bin/esbuild`],
    "the esbuild executable",
  );
}

/** The `node` executable on the PATH, or a clear error. */
export async function nodeExecutable(): Promise<string> {
  try {
    const output = await new Deno.Command("node", { args: ["--version"], stdout: "piped" })
      .output();
    const version = new TextDecoder().decode(output.stdout).trim();
    const major = Number(/^v(\d+)\./.exec(version)?.[1] ?? 0);
    if (!output.success || major < 20) {
      throw new Error(`found ${version || "nothing usable"}`);
    }
    return "node";
  } catch (error) {
    throw new Error(
      `Cannot use Node.js: version 20 or newer is needed (${(error as Error).message})`,
    );
  }
}
