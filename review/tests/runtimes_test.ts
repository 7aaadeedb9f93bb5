/**
 * The reviewer's tool on every runtime: a Node-only and a Bun-only machine list, show,
 * mark and verify submissions with the documented commands, and print what Deno prints.
 *
 * "Node-only" and "Bun-only" are made real: each run gets a `PATH` holding nothing but that
 * runtime (and `npm` for Node) and `sh`, so a step that quietly needed Deno, or the other
 * runtime, fails here. The commands are the documented ones, run from the repository's folder:
 * `npm run -s review -- …` and `bun run review …`, and the built `beacon-review` bin. The store
 * is hostile (escape sequences, bidi controls, invisible characters, look-alike letters) and every
 * output is checked inert. On Node the tool runs under Node's permission model, which is read back
 * from the running process itself.
 */
import {
  assert,
  assertEquals,
  assertMatch,
  assertStrictEquals,
} from "../../tests/support/assert.ts";
import { build } from "../../scripts/build.ts";
import { bunExecutable, ensurePackages, nodeExecutable, ROOT } from "../../scripts/tools.ts";
import {
  encodeSeed,
  generateSeed,
  parseSigningKey,
  signingKeyFromSeed,
} from "../../src/signing/mod.ts";
import {
  assertRunInert,
  fill,
  message,
  review,
  type Run,
  runTool,
  serveWith,
  startConsole,
  tempDatabase,
  text,
} from "./support.ts";

const HOSTILE = [
  text(
    "pay\u200Bpal invoice \x1b[31mred\x1b[0m \x1b]8;;https://evil.example/\x07click\x1b]8;;\x07",
  ),
  message({ subject: "Invoice \u202Etxt.exe", body: "p\u0430ypal \u2066hidden\u2069" }),
  text("third, plain"),
];

/** A folder whose only programs are `programs` (name → executable) and `sh`. */
async function onlyOnPath(programs: Record<string, string>): Promise<string> {
  const folder = await Deno.makeTempDir({ prefix: "beacon-path-" });
  for (const [name, target] of Object.entries({ ...programs, sh: "/bin/sh" })) {
    await Deno.symlink(await Deno.realPath(await which(target)), `${folder}/${name}`);
  }
  return folder;
}

/** The file `name` runs from this PATH (`npm` is a script that `node` runs). */
async function which(name: string): Promise<string> {
  if (name.includes("/")) return name;
  const output = await new Deno.Command("sh", {
    args: ["-c", 'command -v "$0"', name],
    stdout: "piped",
  }).output();
  const path = new TextDecoder().decode(output.stdout).trim();
  assert(path !== "", `${name} is on the PATH`);
  return path;
}

/** Runs `command args` from the repository's folder with only `path` on the PATH. */
function runWithPath(
  path: string,
  command: string,
  args: string[],
  env: Record<string, string> = {},
  input?: string,
): Promise<Run> {
  return runTool(command, args, { ...env, PATH: path }, input);
}

/** The documented way to run the tool on each runtime, from a clone. */
interface Way {
  readonly name: string;
  /** How the tool names itself in its hints there. */
  readonly program: string;
  run(args: string[], env?: Record<string, string>, input?: string): Promise<Run>;
}

async function ways(): Promise<Way[]> {
  await ensurePackages(); // the root package.json's dependencies: `npm install` / `bun install`
  await build("package"); // dist/ built now, under the build lock, so no run below rebuilds it
  const node = await nodeExecutable();
  const nodeOnly = await onlyOnPath({ node, npm: "npm" });
  const bunOnly = await onlyOnPath({ bun: await bunExecutable() });
  return [
    {
      name: "deno",
      program: "deno task review",
      run: (args, env = {}, input) => review(args.at(-1)!, args.slice(0, -1), env, input),
    },
    {
      name: "node (npm run review)",
      program: "npm run review --",
      run: (args, env, input) =>
        runWithPath(
          nodeOnly,
          `${nodeOnly}/npm`,
          ["run", "-s", "review", "--", ...database(args)],
          env,
          input,
        ),
    },
    {
      name: "node (the beacon-review bin)",
      program: "beacon-review",
      run: (args, env, input) =>
        runWithPath(
          nodeOnly,
          `${nodeOnly}/node`,
          [
            `${ROOT}/dist/beacon-review.mjs`,
            ...database(args),
          ],
          env,
          input,
        ),
    },
    {
      name: "bun (bun run review)",
      program: "bun run review",
      run: (args, env, input) =>
        runWithPath(bunOnly, `${bunOnly}/bun`, ["run", "review", ...database(args)], env, input),
    },
  ];
}

/** The helper's convention (the database URL last) as the command line a reviewer types. */
function database(args: string[]): string[] {
  return [...args.slice(0, -1), "--database", args.at(-1)!];
}

/** Output with the runtime's own name for the tool replaced, so runtimes can be compared. */
function comparable(run: Run, way: Way): string {
  return run.stdout.replaceAll(way.program, "<program>");
}

Deno.test("list, show, stats, export and verify print the same on Deno, Node and Bun", async () => {
  const seedBytes = generateSeed();
  const seed = encodeSeed(seedBytes);
  const publicKey = (await signingKeyFromSeed(seedBytes)).publicKey;
  const store = await tempDatabase();
  const receipts = await fill(store, HOSTILE, { signingKey: seed, treeHeads: true });
  const hostileId = String(receipts[1].id);
  const commands = [
    ["list"],
    ["list", "--json"],
    ["show", hostileId, "--trust", publicKey],
    ["next", "--trust", publicKey],
    ["stats"],
    ["export", "--format", "csv"],
    ["verify", "--trust", publicKey],
  ];
  const all = await ways();
  const reference = new Map<string, string>();
  for (const way of all) {
    for (const command of commands) {
      const run = await way.run([...command, store.url]);
      const what = `${way.name}: ${command.join(" ")}`;
      assertStrictEquals(run.code, 0, `${what}\n${run.stdout}\n${run.stderr}`);
      assertRunInert(run);
      const key = command.join(" ");
      if (!reference.has(key)) reference.set(key, comparable(run, way));
      else assertEquals(comparable(run, way), reference.get(key), `${what} differs from Deno`);
    }
  }
  // The checks really ran: escapes shown, the look-alike flagged, the tree head verified.
  assertMatch(reference.get(`show ${hostileId} --trust ${publicKey}`)!, /\\u202E/);
  assertMatch(reference.get("list")!, /pay\\u200Bpal/);
  assertMatch(reference.get(`verify --trust ${publicKey}`)!, /no problems found/);
  assertMatch(reference.get(`next --trust ${publicKey}`)!, /^next: <program> mark /m);
});

Deno.test("a Node-only and a Bun-only machine mark and triage submissions, and refuse the same", async () => {
  const store = await tempDatabase();
  const receipts = await fill(store, HOSTILE);
  const all = (await ways()).filter((way) => way.name !== "deno");
  for (const [index, way] of all.entries()) {
    const id = String(receipts[index].id);
    const mark = await way.run(
      [
        "mark",
        id,
        "--status",
        "dismissed",
        "--note",
        `by ${way.name}`,
        "--reviewer",
        "R",
        store.url,
      ],
    );
    assertStrictEquals(mark.code, 0, `${way.name}: ${mark.stderr}`);
    assertRunInert(mark);
  }
  // Deno reads back what Node and Bun appended.
  for (const [index, way] of all.entries()) {
    const shown = await review(store, ["show", String(receipts[index].id)]);
    assertMatch(shown.stdout, /status\s+dismissed/);
    assert(shown.stdout.includes(`by ${way.name}`), `${way.name}'s note is in the history`);
  }
  // export --out writes its one new file beside the database, and in a folder whose name the
  // database folder's is a prefix of (Node 20's permission model once lost the folder then).
  const expected = (await review(store, ["export"])).stdout;
  for (const [index, way] of all.entries()) {
    for (const folder of [store.directory, `${store.directory}-exports`]) {
      await Deno.mkdir(folder, { recursive: true });
      const out = `${folder}/export-${index}.ndjson`;
      const exported = await way.run(["export", "--out", out, store.url]);
      assertStrictEquals(exported.code, 0, `${way.name}: export --out ${out}: ${exported.stderr}`);
      assertStrictEquals(await Deno.readTextFile(out), expected, `${way.name}: the same export`);
    }
  }
  // triage reads its answers from standard input on every runtime: the oldest new one escalated.
  for (const way of all) {
    const store = await tempDatabase();
    const [first, second] = await fill(store, HOSTILE);
    const triage = await way.run(["triage", "--reviewer", "R", store.url], {}, "e\nq\n");
    assertStrictEquals(triage.code, 0, `${way.name}: ${triage.stderr}`);
    assertRunInert(triage);
    assertMatch(triage.stdout, /stopped: 1 marked in this run/);
    assertMatch((await review(store, ["show", String(first.id)])).stdout, /status\s+escalated/);
    assertMatch((await review(store, ["show", String(second.id)])).stdout, /status\s+new/);
  }
  // The same usage error, exit status and hint on every runtime (with its own program name).
  for (const way of all) {
    const refused = await way.run(["list", "--limit", "0", store.url]);
    assertStrictEquals(refused.code, 2, `${way.name}: ${refused.stderr}`);
    assertMatch(refused.stderr, /^error: Cannot parse --limit/m);
    assert(refused.stderr.includes(`Try: ${way.program} list --help`), refused.stderr);
  }
});

/** The console answers its page under the CSP, and its queue with the token. */
async function assertConsoleServes(origin: string, token: string, items: number): Promise<void> {
  const page = await fetch(`${origin}/`);
  assertStrictEquals(page.status, 200);
  assertMatch(page.headers.get("content-security-policy") ?? "", /default-src 'none'/);
  await page.body?.cancel();
  const script = await fetch(`${origin}/static/console.js`);
  assertStrictEquals(script.status, 200, "the console's script is served (dist/static on Node)");
  await script.body?.cancel();
  const queue = await fetch(`${origin}/api/queue`, {
    headers: { authorization: `Bearer ${token}` },
  });
  assertStrictEquals(queue.status, 200);
  assertStrictEquals((await queue.json()).items.length, items);
  const refused = await fetch(`${origin}/api/queue`);
  assertStrictEquals(refused.status, 401, "no token, no data");
  await refused.body?.cancel();
}

Deno.test("serve on Node runs under the permission model: no process, no worker, no other folder", async () => {
  await build("package");
  const store = await tempDatabase();
  await fill(store, [text("one")]);
  const serving = await serveWith(await nodeExecutable(), [
    `${ROOT}/dist/beacon-review.mjs`,
    "serve",
    "--database",
    store.url,
  ]);
  try {
    // The console answers from the Node process, through the server's node:http adapter.
    await assertConsoleServes(serving.origin, await serving.session(), 1);
    // The process that serves is the launcher's child; its command line is its permissions.
    const children = (await Deno.readTextFile(`/proc/${serving.pid}/task/${serving.pid}/children`))
      .trim().split(/\s+/);
    assertStrictEquals(children.length, 1, "one child: the tool");
    const argv = (await Deno.readTextFile(`/proc/${children[0]}/cmdline`)).split("\0");
    assert(
      argv.some((arg) => arg === "--permission" || arg === "--experimental-permission"),
      argv.join(" "),
    );
    assert(argv.includes(`--allow-fs-write=${store.directory}`));
    assert(argv.includes(`--allow-fs-read=${store.directory}`));
    assert(argv.includes("--allow-addons"), "a file database loads the native driver");
    for (const forbidden of ["--allow-child-process", "--allow-worker", "--allow-wasi"]) {
      assert(!argv.some((arg) => arg.startsWith(forbidden)), `${forbidden} is never given`);
    }
    const reads = argv.filter((arg) => arg.startsWith("--allow-fs-read=")).map((arg) =>
      arg.slice("--allow-fs-read=".length)
    );
    for (const folder of reads) {
      assert(
        folder === store.directory || folder.endsWith("/dist") || folder.endsWith("/node_modules"),
        `reads only the database, its own code and its dependencies: ${folder}`,
      );
    }
    // Ctrl-C in a terminal signals the launcher and the tool at once, and the launcher forwards
    // its own: the tool gets SIGINT twice and must still close the console cleanly.
    Deno.kill(Number(children[0]), "SIGINT");
    Deno.kill(serving.pid, "SIGINT");
  } finally {
    const stopped = await serving.stop();
    assertStrictEquals(
      stopped.code,
      0,
      `stopped cleanly on SIGINT twice (${stopped.code}): ${stopped.stderr}`,
    );
  }
});

Deno.test("serve on Bun: the same console, stopped by SIGTERM", async () => {
  await ensurePackages();
  const store = await tempDatabase();
  await fill(store, [text("one"), text("two")]);
  const serving = await serveWith(await bunExecutable(), [
    `${ROOT}/review/runtime/node.ts`,
    "serve",
    "--database",
    store.url,
  ]);
  try {
    await assertConsoleServes(serving.origin, await serving.session(), 2);
  } finally {
    const stopped = await serving.stop();
    assertStrictEquals(stopped.code, 0, `stopped cleanly on SIGTERM: ${stopped.stderr}`);
  }
});

Deno.test("serve on Deno: a second signal while it closes still ends it with status 0", async () => {
  const store = await tempDatabase();
  await fill(store, [text("one")]);
  const serving = await startConsole(store.url);
  await assertConsoleServes(serving.origin, await serving.session(), 1);
  // SIGINT, then at once SIGTERM (as `deno task review`'s launcher forwards a Ctrl-C).
  Deno.kill(serving.pid, "SIGINT");
  const stopped = await serving.stop();
  assertStrictEquals(stopped.code, 0, `stopped cleanly (${stopped.code}): ${stopped.stderr}`);
});

/** Every process under `pid`, from /proc, depth first. */
async function descendants(pid: number): Promise<number[]> {
  const text = await Deno.readTextFile(`/proc/${pid}/task/${pid}/children`).catch(() => "");
  const children = text.trim() === "" ? [] : text.trim().split(/\s+/).map(Number);
  const all: number[] = [];
  for (const child of children) all.push(child, ...await descendants(child));
  return all;
}

/** Whether `pid` still runs (a zombie, ended but not yet reaped, does not). */
async function running(pid: number): Promise<boolean> {
  const stat = await Deno.readTextFile(`/proc/${pid}/stat`).catch(() => undefined);
  return stat !== undefined && !/^\d+ \(.*\) Z /.test(stat);
}

Deno.test("serve on every runtime: SIGTERM or SIGINT to the top PID ends every process and frees the port", async () => {
  await ensurePackages();
  await build("package");
  const store = await tempDatabase();
  await fill(store, [text("one")]);
  const nodeOnly = await onlyOnPath({ node: await nodeExecutable(), npm: "npm" });
  const bunOnly = await onlyOnPath({ bun: await bunExecutable() });
  const serve = ["serve", "--database", store.url];
  const commands: [string, string, string[], Record<string, string>][] = [
    ["npm run review -- serve", `${nodeOnly}/npm`, ["run", "-s", "review", "--", ...serve], {
      PATH: nodeOnly,
    }],
    [
      "beacon-review serve (Node)",
      `${nodeOnly}/node`,
      [`${ROOT}/dist/beacon-review.mjs`, ...serve],
      {
        PATH: nodeOnly,
      },
    ],
    ["bun run review serve", `${bunOnly}/bun`, ["run", "review", ...serve], { PATH: bunOnly }],
    ["deno task review serve", Deno.execPath(), ["task", "review", ...serve], {}],
  ];
  for (const [name, command, args, env] of commands) {
    for (const signal of ["SIGTERM", "SIGINT"] as const) {
      const what = `${name}, ${signal}`;
      const serving = await serveWith(command, args, env);
      const under = await descendants(serving.pid);
      assert(under.length >= 1, `${what}: the console runs under the top process`);
      await assertConsoleServes(serving.origin, await serving.session(), 1);
      Deno.kill(serving.pid, signal); // the top PID only, as a terminal or a supervisor does
      await serving.ended();
      // Every process that was under it ends (the bound only keeps a broken run from hanging).
      for (let round = 0; round < 200; round++) {
        const left = [];
        for (const pid of under) if (await running(pid)) left.push(pid);
        if (left.length === 0) break;
        if (round === 199) throw new Error(`${what}: still running: ${left.join(", ")}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      const { hostname, port } = new URL(serving.origin);
      const refused = await Deno.connect({ hostname, port: Number(port) }).then(
        (connection) => {
          connection.close();
          return false;
        },
        (error) => error instanceof Deno.errors.ConnectionRefused,
      );
      assert(refused, `${what}: the port is free`);
    }
  }
});

Deno.test("Node says a missing database folder does not exist, as Deno and Bun do", async () => {
  await build("package");
  const missing = `file:${await Deno.makeTempDir()}/not-here/x.db`;
  const node = await runTool(await nodeExecutable(), [
    `${ROOT}/dist/beacon-review.mjs`,
    "list",
    "--database",
    missing,
  ]);
  const deno = await review(missing, ["list"]);
  assertStrictEquals(node.code, 1);
  assertStrictEquals(node.stderr, `error: Cannot open the database: ${missing} does not exist\n`);
  assertStrictEquals(node.stderr, deno.stderr);
});

Deno.test("key generate, show, export and move-out work the same on Deno, Node and Bun", async () => {
  const all = await ways();
  for (const way of all) {
    const store = await tempDatabase();
    try {
      // generate: into a new 0600 file, never over one; or printed as BEACON_SIGNING_KEY's line.
      const file = `${store.directory}/made.key`;
      const made = await way.run(["key", "generate", "--out", file, store.url]);
      assertStrictEquals(made.code, 0, `${way.name}: ${made.stdout}${made.stderr}`);
      assertStrictEquals((await Deno.stat(file)).mode! & 0o777, 0o600, way.name);
      const keyLine = await Deno.readTextFile(file);
      assertMatch(keyLine, /^[A-Za-z0-9_-]{43}\n$/);
      const key = await signingKeyFromSeed(parseSigningKey(keyLine));
      assertMatch(
        made.stdout,
        new RegExp(`public key ${key.publicKey}, fingerprint ${key.fingerprint}`),
      );
      const again = await way.run(["key", "generate", "--out", file, store.url]);
      assertStrictEquals(again.code, 1, way.name);
      assertMatch(again.stderr, /is never overwritten/);
      assertStrictEquals(await Deno.readTextFile(file), keyLine, `${way.name}: the file is kept`);
      const printed = await way.run(["key", "generate", store.url]);
      assertStrictEquals(printed.code, 0, `${way.name}: ${printed.stderr}`);
      assertMatch(printed.stdout, /^[A-Za-z0-9_-]{43}\n$/);
      // show: the public half only; export: the private key's one line.
      const shown = await way.run(["key", "show", "--key-file", file, store.url]);
      assertStrictEquals(
        shown.stdout,
        `public key ${key.publicKey}, fingerprint ${key.fingerprint} (from key file ${file})\n`,
        `${way.name}: ${shown.stderr}`,
      );
      assert(
        !shown.stdout.includes(keyLine.trim()),
        `${way.name}: show never prints the private key`,
      );
      const exported = await way.run(["key", "export", "--key-file", file, store.url]);
      assertStrictEquals(exported.stdout, keyLine, `${way.name}: ${exported.stderr}`);
      const fromEnv = await way.run(["key", "show", store.url], {
        BEACON_SIGNING_KEY: keyLine.trim(),
      });
      assertMatch(
        fromEnv.stdout,
        new RegExp(`^public key ${key.publicKey}, .*\\(from BEACON_SIGNING_KEY\\)$`, "m"),
      );
      // move-out: an earlier version's store keeps its key in the database until it is moved.
      await fill(store, [text("kept")]);
      const kept = await way.run(["key", "export", store.url]);
      assertStrictEquals(kept.code, 0, `${way.name}: ${kept.stderr}`);
      assertMatch(kept.stderr, /from the database's secrets table/);
      const moved = await way.run(["key", "move-out", store.url]);
      assertStrictEquals(moved.code, 0, `${way.name}: ${moved.stdout}${moved.stderr}`);
      assertMatch(
        moved.stdout,
        /^no copy of the private key is left in the database file or its WAL$/m,
      );
      assertStrictEquals(await Deno.readTextFile(`${store.directory}/x.key`), kept.stdout);
      const after = await way.run(["key", "export", store.url]);
      assertStrictEquals(after.stdout, kept.stdout, way.name);
      assertMatch(after.stderr, /from key file .*x\.key/);
    } finally {
      await Deno.remove(store.directory, { recursive: true }).catch(() => {});
    }
  }
});
