/**
 * The npm package embeds: `npm pack` makes a tarball that `publint --strict`
 * and `attw --profile esm-only` find clean; it installs into a fresh project where
 * `import { createBeacon } from "@beacon/beacon"` answers a submission with an embedded database
 * on Node and on Bun, and a strict TypeScript consumer (`module`/`moduleResolution: nodenext`)
 * type-checks against its real types, a misspelt option being a type error; and its
 * `beacon-review` bin reads that store. Also: the sources are erasable TypeScript only
 * (`erasableSyntaxOnly`, so Node and Bun can strip their types without a build).
 */
import { assert, assertMatch, assertStrictEquals } from "../support/assert.ts";
import { build } from "../../scripts/build.ts";
import { childEnvironment } from "../../scripts/runtimes.ts";
import { buildTool, bunExecutable, nodeExecutable, ROOT, TOOLS } from "../../scripts/tools.ts";

async function run(
  command: string,
  args: string[],
  cwd: string,
): Promise<{ code: number; stdout: string; stderr: string }> {
  const output = await new Deno.Command(command, {
    args,
    cwd,
    clearEnv: true,
    env: childEnvironment(),
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  return {
    code: output.code,
    stdout: new TextDecoder().decode(output.stdout),
    stderr: new TextDecoder().decode(output.stderr),
  };
}

function ok(result: { code: number; stdout: string; stderr: string }, what: string): string {
  assertStrictEquals(result.code, 0, `${what}:\n${result.stdout}\n${result.stderr}`);
  return result.stdout;
}

const CONSUMER_JS = `
import { createBeacon } from "@beacon/beacon";
import { toNodeListener } from "@beacon/beacon/node";
import { bunFetch } from "@beacon/beacon/bun";

const beacon = createBeacon({
  database: { url: "file:" + process.argv[2] + "/beacon.db" },
  rateLimit: "off",
});
const response = await beacon.fetch(
  new Request("http://127.0.0.1/beacon/0.1/submissions", {
    method: "POST",
    headers: { "content-type": "text/plain; charset=utf-8" },
    body: "Hello from a fresh project.",
  }),
  { remoteAddress: "127.0.0.1" },
);
const body = await response.json();
await beacon.close();
console.log(JSON.stringify({
  status: response.status,
  receipt: body.receipt?.id ?? null,
  adapters: [typeof toNodeListener, typeof bunFetch],
}));
`;

const CONSUMER_TS = `
import { type BeaconOptions, createBeacon, type RequestLogEntry } from "@beacon/beacon";
import { toNodeListener } from "@beacon/beacon/node";
import { createServer } from "node:http";

const options: BeaconOptions = {
  database: { url: "file:data/beacon.db" },
  rateLimit: "10/1m",
  log: (entry: RequestLogEntry) => console.log(entry.status),
};
const beacon = createBeacon(options);
const status: Promise<number> = beacon.fetch(new Request("http://x/"), { remoteAddress: null })
  .then((r) => r.status);
createServer(toNodeListener(beacon.fetch, { prefix: "/beacon" }));
void status;

// @ts-expect-error: a misspelt option is a type error (the types are real, not any)
createBeacon({ databse: { url: "file:x.db" } });
// @ts-expect-error: so is a wrong value
createBeacon({ rateLimitStore: "redis" });
// @ts-expect-error: and a call without the client address (every client would share a bucket)
void beacon.fetch(new Request("http://x/"));
`;

const TSCONFIG = {
  compilerOptions: {
    strict: true,
    module: "nodenext",
    moduleResolution: "nodenext",
    target: "es2022",
    types: ["node"],
    noEmit: true,
    skipLibCheck: false,
  },
  include: ["consumer.ts"],
};

Deno.test("npm pack: the tarball lints clean and embeds on Node and Bun, with real types", async () => {
  await build("package"); // dist/, as `npm pack` would build it (prepack)
  const directory = await Deno.makeTempDir({ prefix: "beacon-pack-" });
  try {
    // --ignore-scripts: dist/ was just built under the build lock; prepack would rebuild it.
    const packed = ok(
      await run("npm", ["pack", "--ignore-scripts", "--pack-destination", directory], ROOT),
      "npm pack",
    );
    const tarball = `${directory}/${packed.trim().split("\n").pop()}`;
    assertMatch(tarball, /beacon-beacon-\d+\.\d+\.\d+\.tgz$/);

    const publint = ok(
      await run(await buildTool("publint"), ["run", tarball, "--strict"], ROOT),
      "publint --strict",
    );
    assertMatch(publint, /All good!/);
    ok(
      await run(await buildTool("attw"), [tarball, "--profile", "esm-only"], ROOT),
      "attw --profile esm-only",
    );

    const project = `${directory}/consumer`;
    await Deno.mkdir(project);
    await Deno.writeTextFile(
      `${project}/package.json`,
      JSON.stringify({ name: "consumer", private: true, type: "module" }),
    );
    ok(
      await run(
        "npm",
        ["install", "--no-audit", "--no-fund", tarball, "@types/node@20.19.43"],
        project,
      ),
      "npm install of the tarball",
    );
    await Deno.writeTextFile(`${project}/consumer.mjs`, CONSUMER_JS);
    const stored: { data: string; receipt: string }[] = [];
    for (
      const [runtime, executable] of [
        ["node", await nodeExecutable()],
        ["bun", await bunExecutable()],
      ] as const
    ) {
      const data = await Deno.makeTempDir({ dir: directory });
      const stdout = ok(await run(executable, ["consumer.mjs", data], project), runtime);
      const result = JSON.parse(stdout.trim().split("\n").pop()!);
      assertStrictEquals(result.status, 202, `${runtime}: the submission was accepted`);
      assert(typeof result.receipt === "string" && result.receipt.length > 0, "a receipt id");
      assertStrictEquals(result.adapters.join(), "function,function");
      stored.push({ data, receipt: result.receipt });
    }

    // The reviewer's tool from the tarball: its bin, under Node's permission model,
    // reads what the consumer stored, and the console's files were packed beside it.
    const { data, receipt } = stored[0];
    const listed = ok(
      await run(
        "npx",
        ["--no", "beacon-review", "list", "--database", `file:${data}/beacon.db`],
        project,
      ),
      "npx beacon-review list",
    );
    assert(listed.includes(receipt.slice(0, 12)), listed);
    const shown = ok(
      await run("npx", [
        "--no",
        "beacon-review",
        "show",
        receipt,
        "--database",
        `file:${data}/beacon.db`,
      ], project),
      "npx beacon-review show",
    );
    assertMatch(shown, /Hello from a fresh project\./);
    for (const file of ["console.js", "console.css"]) {
      await Deno.stat(`${project}/node_modules/@beacon/beacon/dist/static/${file}`);
    }

    await Deno.writeTextFile(`${project}/consumer.ts`, CONSUMER_TS);
    await Deno.writeTextFile(`${project}/tsconfig.json`, JSON.stringify(TSCONFIG));
    ok(
      await run(
        await nodeExecutable(),
        [`${TOOLS}/build/node_modules/typescript/bin/tsc`, "-p", "."],
        project,
      ),
      "tsc (strict, nodenext) on the consumer",
    );
  } finally {
    await Deno.remove(directory, { recursive: true }).catch(() => {});
  }
});

Deno.test("the sources use only erasable TypeScript syntax (erasableSyntaxOnly)", async () => {
  await build("package"); // installs tools/build/, whose TypeScript the check uses
  ok(
    await run(await nodeExecutable(), [`${ROOT}/scripts/check_erasable.mjs`], ROOT),
    "scripts/check_erasable.mjs",
  );
});
