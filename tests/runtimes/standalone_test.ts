/**
 * The README's commands on a machine with only Bun, and on one with only Node 20 and npm
 * : a copy of the source tree (made without git), a `PATH` holding nothing but that
 * runtime (and `sh`, which npm runs scripts with), and the documented commands:
 *
 * - Bun: `bun install && bun run start:bun` serves from the TypeScript sources, no build.
 * - Node: `npm install && npm start` builds with tsdown and serves `dist/server.mjs`.
 *
 * Both must serve the Beacon and stop cleanly on SIGTERM; neither finds Deno, esbuild or
 * Miniflare on the way.
 */
import { assert, assertEquals, assertStrictEquals } from "../support/assert.ts";
import { childEnvironment, startServerProcess } from "../../scripts/runtimes.ts";
import { bunExecutable, nodeExecutable, ROOT } from "../../scripts/tools.ts";

/**
 * What a clone or an unpacked release does not hold (.gitignore's entries, and `.git`): the copy
 * is made by walking the tree, so the test runs the same in a plain source tree without git.
 */
const NOT_IN_A_RELEASE_FOLDERS = new Set([
  ".git",
  "node_modules",
  "dist",
  "coverage",
  ".build-lock",
  ".install-lock",
]);
const NOT_IN_A_RELEASE_FILES = /\.(db|db-wal|db-shm|cpuprofile|tgz)$/;

/** A copy of the source tree (what a clone has), without node_modules, build output or data. */
async function copyOfRepository(): Promise<string> {
  const directory = await Deno.makeTempDir({ prefix: "beacon-standalone-" });
  const copy = async (relative: string) => {
    for await (const entry of Deno.readDir(`${ROOT}/${relative}`)) {
      const path = relative === "" ? entry.name : `${relative}/${entry.name}`;
      if (entry.isDirectory) {
        if (NOT_IN_A_RELEASE_FOLDERS.has(entry.name) || path === "data") continue;
        await Deno.mkdir(`${directory}/repo/${path}`, { recursive: true });
        await copy(path);
      } else if (entry.isFile && !NOT_IN_A_RELEASE_FILES.test(entry.name)) {
        await Deno.copyFile(`${ROOT}/${path}`, `${directory}/repo/${path}`);
      }
    }
  };
  await Deno.mkdir(`${directory}/repo`);
  await copy("");
  return directory;
}

/** The files of a copy, relative to it: what must be the same after an install. */
async function filesOf(root: string): Promise<Set<string>> {
  const files = new Set<string>();
  const walk = async (relative: string) => {
    for await (const entry of Deno.readDir(`${root}/${relative}`)) {
      const path = relative === "" ? entry.name : `${relative}/${entry.name}`;
      if (entry.isDirectory && entry.name !== "node_modules") await walk(path);
      else if (entry.isFile) files.add(path);
    }
  };
  await walk("");
  return files;
}

/** A folder of links to exactly `tools`, to be the whole `PATH`. */
async function onlyThese(directory: string, tools: Record<string, string>): Promise<string> {
  const bin = `${directory}/bin`;
  await Deno.mkdir(bin);
  for (const [name, target] of Object.entries(tools)) await Deno.symlink(target, `${bin}/${name}`);
  return bin;
}

async function which(name: string): Promise<string> {
  const output = await new Deno.Command("sh", {
    args: ["-c", `readlink -f "$(command -v ${name})"`],
    stdout: "piped",
  }).output();
  return new TextDecoder().decode(output.stdout).trim();
}

async function runIn(cwd: string, path: string, command: string, args: string[]): Promise<void> {
  const output = await new Deno.Command(command, {
    args,
    cwd,
    clearEnv: true,
    env: { ...childEnvironment(), PATH: path },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(output.stdout) + new TextDecoder().decode(output.stderr);
  assertStrictEquals(output.code, 0, `${command} ${args.join(" ")}:\n${text}`);
}

async function servesAndStops(
  cwd: string,
  path: string,
  command: string,
  args: string[],
  exitCode: number,
): Promise<void> {
  const server = await startServerProcess(
    command,
    args,
    {
      PATH: path,
      PORT: "0",
      BEACON_HOSTNAME: "127.0.0.1",
      BEACON_DATABASE_URL: `file:${cwd}/data/beacon.db`,
    },
    120_000,
    cwd,
  );
  let stopped = false;
  try {
    const response = await fetch(`${server.url}/beacon/0.1/submissions`, {
      method: "POST",
      headers: { "content-type": "text/plain; charset=utf-8" },
      body: "Hello from a machine with one runtime.",
    });
    assertStrictEquals(response.status, 202);
    await response.body?.cancel();
    assert(
      server.lines.some((line) => line.route === "native.submit" && line.status === 202),
      "the same JSON request log line as the Deno entry",
    );
    const status = await server.stop();
    stopped = true;
    assertStrictEquals(
      status.code,
      exitCode,
      `exit ${status.code} ${status.signal}: ${server.stderr()}`,
    );
    assert(server.lines.some((line) => line.event === "shutdown"), "it says it shut down");
  } finally {
    if (!stopped) await server.stop();
  }
}

Deno.test("only Bun: bun install && bun run start:bun serves from the sources", async () => {
  const directory = await copyOfRepository();
  try {
    const path = await onlyThese(directory, { bun: await bunExecutable() });
    const repo = `${directory}/repo`;
    const before = await filesOf(repo);
    const lock = await Deno.readTextFile(`${repo}/bun.lock`);
    await runIn(repo, path, `${path}/bun`, ["install"]);
    // The committed bun.lock is what Bun installs from: it adds no file and changes none.
    assertEquals([...await filesOf(repo)].filter((file) => !before.has(file)), []);
    assertStrictEquals(await Deno.readTextFile(`${repo}/bun.lock`), lock);
    await servesAndStops(repo, path, `${path}/bun`, ["run", "start:bun"], 0);
    assert(!(await Deno.stat(`${repo}/dist`).then(() => true, () => false)), "nothing was built");
  } finally {
    await Deno.remove(directory, { recursive: true }).catch(() => {});
  }
});

Deno.test("only Node and npm: npm install && npm start builds once, then only when changed", async () => {
  const directory = await copyOfRepository();
  try {
    const path = await onlyThese(directory, {
      node: await which(await nodeExecutable()),
      npm: await which("npm"),
      sh: await which("sh"),
    });
    const repo = `${directory}/repo`;
    await runIn(repo, path, `${path}/npm`, ["install", "--no-audit", "--no-fund"]);
    // npm forwards SIGTERM to the server (the script `exec`s node, so no shell stands between
    // them and leaves it running), which shuts down cleanly and exits 0, as npm then does.
    await servesAndStops(repo, path, `${path}/npm`, ["start"], 0);
    const built = await Deno.stat(`${repo}/dist/server.mjs`);
    assert(built.isFile, "npm start built dist/");
    // Unchanged sources: the second start runs the same build, without tsdown.
    await servesAndStops(repo, path, `${path}/npm`, ["start"], 0);
    assertEquals((await Deno.stat(`${repo}/dist/server.mjs`)).mtime, built.mtime, "not rebuilt");
  } finally {
    await Deno.remove(directory, { recursive: true }).catch(() => {});
  }
});
