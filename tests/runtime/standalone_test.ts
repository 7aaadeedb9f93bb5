/**
 * The README's commands on a machine with only Bun, and on one with only Node 20 and npm (issue
 * 12, items 2 and 3): a copy of the repository's tracked files, a `PATH` holding nothing but that
 * runtime (and `sh`, which npm runs scripts with), and the documented commands:
 *
 * - Bun: `bun install && bun run start:bun` serves from the TypeScript sources, no build.
 * - Node: `npm install && npm start` builds with tsdown and serves `dist/server.mjs`.
 *
 * Both must serve the Beacon and stop cleanly on SIGTERM; neither finds Deno, esbuild or
 * Miniflare on the way.
 */
import { assert, assertStrictEquals } from "../support/assert.ts";
import { childEnvironment, startServerProcess } from "../../scripts/runtimes.ts";
import { bunExecutable, nodeExecutable, ROOT } from "../../scripts/tools.ts";

/** A copy of the tracked files (what a clone has), without node_modules or build output. */
async function copyOfRepository(): Promise<string> {
  const listing = await new Deno.Command("git", {
    args: ["ls-files", "-z"],
    cwd: ROOT,
    stdout: "piped",
  }).output();
  const directory = await Deno.makeTempDir({ prefix: "beacon-standalone-" });
  for (const path of new TextDecoder().decode(listing.stdout).split("\0").filter(Boolean)) {
    const source = `${ROOT}/${path}`;
    if (!(await Deno.stat(source).then((info) => info.isFile, () => false))) continue;
    const target = `${directory}/repo/${path}`;
    await Deno.mkdir(target.slice(0, target.lastIndexOf("/")), { recursive: true });
    await Deno.copyFile(source, target);
  }
  return directory;
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
    await runIn(repo, path, `${path}/bun`, ["install"]);
    await servesAndStops(repo, path, `${path}/bun`, ["run", "start:bun"], 0);
    assert(!(await Deno.stat(`${repo}/dist`).then(() => true, () => false)), "nothing was built");
  } finally {
    await Deno.remove(directory, { recursive: true }).catch(() => {});
  }
});

Deno.test("only Node and npm: npm install && npm start builds once and serves", async () => {
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
    assert((await Deno.stat(`${repo}/dist/server.mjs`)).isFile, "npm start built dist/");
  } finally {
    await Deno.remove(directory, { recursive: true }).catch(() => {});
  }
});
