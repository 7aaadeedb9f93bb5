/**
 * The documented tasks, run exactly as a developer runs them (`deno task <name>` from the
 * repository root): each start task serves on the port it is given and shuts down cleanly on
 * SIGTERM, `start:workers` refuses an embedded database before starting anything, and
 * `deno task migrate` migrates a remote database (a real sqld with JWT auth) idempotently, and
 * `deno task db` starts a local sqld.
 */
import { assert, assertEquals, assertMatch, assertStrictEquals } from "../support/assert.ts";
import { jwtAuth, startSqld } from "../support/sqld.ts";
import { childEnvironment, startServerProcess } from "../../scripts/runtimes.ts";
import { ROOT } from "../../scripts/tools.ts";

const TASKS: Record<string, string> = JSON.parse(await Deno.readTextFile(`${ROOT}/deno.json`))
  .tasks ?? {};

function requireTask(name: string): void {
  if (TASKS[name] === undefined) {
    throw new Error(`deno.json has no "${name}" task (docs/deploy.md documents it)`);
  }
}

async function withTempDir(run: (directory: string) => Promise<void>): Promise<void> {
  const directory = await Deno.makeTempDir({ prefix: "beacon-tasks-" });
  try {
    await run(directory);
  } finally {
    await Deno.remove(directory, { recursive: true }).catch(() => {});
  }
}

async function startsAndStops(task: string, env: Record<string, string>): Promise<void> {
  requireTask(task);
  const server = await startServerProcess(Deno.execPath(), ["task", task], {
    PORT: "0",
    BEACON_HOSTNAME: "127.0.0.1",
    BEACON_LOG: "off",
    ...env,
  }, 120_000);
  let stopped = false;
  try {
    const response = await fetch(server.url + "/.well-known/autonomous-agent");
    assertStrictEquals(response.status, 200);
    assertStrictEquals((await response.json()).protocol, "beacon/0.1");
    const status = await server.stop();
    stopped = true;
    assertStrictEquals(status.code, 0, server.stderr());
    assert(server.lines.some((line) => line.event === "shutdown"), "it says it shut down");
  } finally {
    if (!stopped) await server.stop();
  }
}

for (const task of ["start", "start:bun", "start:node"]) {
  Deno.test(`deno task ${task} serves on PORT and stops on SIGTERM`, async () => {
    await withTempDir((directory) =>
      startsAndStops(task, { BEACON_DATABASE_URL: `file:${directory}/beacon.db` })
    );
  });
}

Deno.test("deno task start:workers serves with a remote database and stops on SIGTERM", async () => {
  await withTempDir(async (directory) => {
    const sqld = await startSqld({ directory: `${directory}/sqld` });
    try {
      await startsAndStops("start:workers", { BEACON_DATABASE_URL: sqld.url });
    } finally {
      await sqld.close();
    }
  });
});

Deno.test("deno task start:workers refuses an embedded database before starting", async () => {
  requireTask("start:workers");
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["task", "start:workers"],
    cwd: ROOT,
    clearEnv: true,
    env: { ...childEnvironment(), BEACON_DATABASE_URL: "file:data/beacon.db", PORT: "0" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  assertStrictEquals(output.code, 2);
  assertMatch(new TextDecoder().decode(output.stderr), /Cannot start on Workers/);
});

/**
 * A PATH with only Node, npm and a shell: what a Node-only machine has. No Deno
 * and no Bun can be found through it.
 */
async function nodeOnlyPath(directory: string): Promise<string> {
  const bin = `${directory}/bin`;
  await Deno.mkdir(bin);
  for (const tool of ["node", "npm", "sh"]) {
    const which = await new Deno.Command("sh", { args: ["-c", `command -v ${tool}`] }).output();
    await Deno.symlink(new TextDecoder().decode(which.stdout).trim(), `${bin}/${tool}`);
  }
  return bin;
}

Deno.test("npm run start:workers bundles and serves with only Node and npm", async () => {
  await withTempDir(async (directory) => {
    const sqld = await startSqld({ directory: `${directory}/sqld` });
    try {
      const server = await startServerProcess("npm", ["run", "start:workers"], {
        PATH: await nodeOnlyPath(directory),
        PORT: "0",
        BEACON_HOSTNAME: "127.0.0.1",
        BEACON_LOG: "off",
        BEACON_DATABASE_URL: sqld.url,
      }, 180_000);
      try {
        const response = await fetch(server.url + "/.well-known/autonomous-agent");
        assertStrictEquals(response.status, 200, server.stderr());
        assertStrictEquals((await response.json()).protocol, "beacon/0.1");
      } finally {
        await server.stop();
      }
    } finally {
      await sqld.close();
    }
  });
});

Deno.test("npm run start:workers refuses an embedded database, naming http:// for a local sqld", async () => {
  await withTempDir(async (directory) => {
    const output = await new Deno.Command("npm", {
      args: ["run", "--silent", "start:workers"],
      cwd: ROOT,
      clearEnv: true,
      env: {
        ...childEnvironment(),
        PATH: await nodeOnlyPath(directory),
        BEACON_DATABASE_URL: "file:data/beacon.db",
        PORT: "0",
      },
      stdout: "piped",
      stderr: "piped",
    }).output();
    assertStrictEquals(output.code, 2);
    const lines = new TextDecoder().decode(output.stderr).trim().split("\n");
    assertStrictEquals(lines.length, 1, lines.join("\n"));
    assertMatch(lines[0], /^Cannot start on Workers: .*the http:\/\/ URL of a local sqld/);
  });
});

async function migrateTask(env: Record<string, string>): Promise<{
  code: number;
  line: Record<string, unknown>;
  stderr: string;
}> {
  requireTask("migrate");
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["task", "migrate"],
    cwd: ROOT,
    clearEnv: true,
    env: { ...childEnvironment(), ...env },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const stdout = new TextDecoder().decode(output.stdout).trim().split("\n");
  const stderr = new TextDecoder().decode(output.stderr);
  let line: Record<string, unknown> = {};
  for (const text of [...stdout, ...stderr.trim().split("\n")]) {
    if (text.startsWith("{")) line = JSON.parse(text);
  }
  return { code: output.code, line, stderr };
}

Deno.test("deno task migrate applies the migrations to a remote database, once", async () => {
  await withTempDir(async (directory) => {
    const auth = await jwtAuth();
    const sqld = await startSqld({ directory: `${directory}/sqld`, jwtPublicKey: auth.publicKey });
    try {
      const authToken = await auth.token();
      const env = { BEACON_DATABASE_URL: sqld.url, BEACON_DATABASE_AUTH_TOKEN: authToken };
      const first = await migrateTask(env);
      assertStrictEquals(first.code, 0, first.stderr);
      assertStrictEquals(first.line.event, "migrated");
      assert(Number(first.line.applied) >= 1, "the first run applies the migrations");
      assertStrictEquals(first.line.version, first.line.latest);
      assertStrictEquals(first.line.database, new URL(sqld.url).origin);
      const again = await migrateTask(env);
      assertStrictEquals(again.code, 0, again.stderr);
      assertStrictEquals(again.line.applied, 0);
      const refused = await migrateTask({ ...env, BEACON_DATABASE_AUTH_TOKEN: "wrong-token" });
      assertStrictEquals(refused.code, 1);
      assertStrictEquals(refused.line.event, "error");
      assert(!refused.stderr.includes("wrong-token"), "the token is never printed");
    } finally {
      await sqld.close();
    }
  });
});

for (const [tool, args] of [["deno", ["task", "db"]], ["npm", ["run", "db"]]] as const) {
  Deno.test(`${tool} ${args.join(" ")} starts a local sqld that serves the remote-database path`, async () => {
    await withTempDir(async (directory) => {
      const probe = Deno.listen({ hostname: "127.0.0.1", port: 0 });
      const port = (probe.addr as Deno.NetAddr).port;
      probe.close();
      const child = new Deno.Command(tool === "deno" ? Deno.execPath() : "npm", {
        args: [...args],
        cwd: ROOT,
        clearEnv: true,
        env: { ...childEnvironment(), SQLD_PORT: String(port), SQLD_DIR: `${directory}/sqld` },
        stdin: "null",
        stdout: "null",
        stderr: "null",
      }).spawn();
      try {
        const deadline = Date.now() + 120_000;
        let healthy = false;
        while (!healthy && Date.now() < deadline) {
          healthy = await fetch(`http://127.0.0.1:${port}/health`).then(
            (response) => response.body?.cancel().then(() => response.ok) ?? response.ok,
            () => false,
          );
          if (!healthy) await new Promise((resolve) => setTimeout(resolve, 200));
        }
        assert(healthy, "sqld answers /health");
        await startsAndStops("start", { BEACON_DATABASE_URL: `http://127.0.0.1:${port}` });
      } finally {
        child.kill("SIGTERM");
        await child.status;
      }
    });
  });
}

/**
 * `deno task start` needs nothing but the serving packages. A fresh DENO_DIR
 * gets only the npm packages of the root deno.lock (copied from this runtime's cache, which
 * `deno install --frozen` fills), the registry is made unreachable (a dead loopback proxy), and
 * the task must still serve and leave that cache as it found it: `deno task` installed nothing
 * else (the build tools, the test libraries, the browser driver) and the server fetched nothing.
 */
Deno.test("deno task start serves from a cache holding only the serving packages", async () => {
  requireTask("start");
  const env = childEnvironment();
  const run = async (args: string[], extra: Record<string, string> = {}) => {
    const output = await new Deno.Command(Deno.execPath(), {
      args,
      cwd: ROOT,
      clearEnv: true,
      env: { ...env, ...extra },
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).output();
    const text = new TextDecoder().decode(output.stdout) + new TextDecoder().decode(output.stderr);
    assert(output.success, `deno ${args.join(" ")}:\n${text}`);
    return new TextDecoder().decode(output.stdout);
  };
  await run(["install", "--frozen"]);
  const registry = new URL(
    env.NPM_CONFIG_REGISTRY ?? env.npm_config_registry ?? "https://registry.npmjs.org/",
  )
    .host.replace(":", "_");
  const source = `${JSON.parse(await run(["info", "--json"])).npmCache}/${registry}`;
  const lock: { npm: Record<string, unknown> } = JSON.parse(
    await Deno.readTextFile(`${ROOT}/deno.lock`),
  );
  const names = [...new Set(Object.keys(lock.npm).map((key) => key.slice(0, key.indexOf("@", 1))))]
    .sort();
  const listCache = async (npm: string) => {
    const found: string[] = [];
    for await (const entry of Deno.readDir(npm)) {
      if (!entry.name.startsWith("@")) found.push(entry.name);
      else {for await (const inner of Deno.readDir(`${npm}/${entry.name}`)) {
          found.push(`${entry.name}/${inner.name}`);
        }}
    }
    return found.sort();
  };
  // The lock also names other platforms' native packages (@libsql/darwin-arm64, …), which Deno
  // never downloads here: copy what this machine's cache holds. Were one of the missing ones
  // needed, the start below would have to fetch it, and the dead proxy would fail it.
  const present: string[] = [];
  for (const name of names) {
    if (await Deno.stat(`${source}/${name}`).then(() => true, () => false)) present.push(name);
  }
  await withTempDir(async (directory) => {
    const npm = `${directory}/deno/npm/${registry}`;
    for (const name of present) {
      await Deno.mkdir(`${npm}/${name}`, { recursive: true });
      const copied = await new Deno.Command("cp", {
        args: ["-a", `${source}/${name}/.`, `${npm}/${name}/`],
      }).output();
      assert(copied.success, `copied ${name} from ${source}`);
    }
    const deadProxy = "http://127.0.0.1:9";
    await startsAndStops("start", {
      BEACON_DATABASE_URL: `file:${directory}/beacon.db`,
      DENO_DIR: `${directory}/deno`,
      HTTPS_PROXY: deadProxy,
      HTTP_PROXY: deadProxy,
      https_proxy: deadProxy,
      http_proxy: deadProxy,
      NO_PROXY: "",
      no_proxy: "",
    });
    assertEquals(await listCache(npm), present, "deno task start added no npm package");
  });
});
