/**
 * Every embedding docs/deploy.md prints works as printed: each project (its files are the code
 * blocks marked `<!-- embedding: <project> <file> -->`) is written into a fresh folder, the package
 * installed with `npm install` from a fresh `npm pack` tarball (the one change: the tarball's
 * path), type-checked (`deno check` on Deno, `tsc` strict from the project's own devDependencies
 * on Node), run on a loopback port, and sent a real A2A `SendMessage`, which must be answered
 * `200` with a task. Bun runs TypeScript without checking it, so its projects are only run.
 */
import { ClientFactory, JsonRpcTransportFactory } from "@a2a-js/sdk/client";
import { TaskState } from "@a2a-js/sdk";
import { sdkTextRequest } from "../support/sdk.ts";
import { assert, assertStrictEquals } from "../support/assert.ts";
import { build } from "../../scripts/build.ts";
import { childEnvironment, freePort } from "../../scripts/runtimes.ts";
import { bunExecutable, nodeExecutable, ROOT } from "../../scripts/tools.ts";

type Project = { name: string; files: Map<string, string> };

/** The marked blocks of `markdown`, grouped by project, in the order printed. */
export function embeddingProjects(markdown: string): Project[] {
  const projects = new Map<string, Map<string, string>>();
  const marked = /<!-- embedding: (\S+) (\S+) -->\n\n```[a-z]*\n([\s\S]*?)\n```/g;
  for (const [, project, file, text] of markdown.matchAll(marked)) {
    if (!projects.has(project)) projects.set(project, new Map());
    projects.get(project)!.set(file, text + "\n");
  }
  return [...projects].map(([name, files]) => ({ name, files }));
}

const PRINTED_TARBALL = "file:../beacon/beacon-beacon-0.1.0.tgz";

async function run(command: string, args: string[], cwd: string, env: Record<string, string> = {}) {
  const output = await new Deno.Command(command, {
    args,
    cwd,
    clearEnv: true,
    env: { ...childEnvironment(), ...env },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const stdout = new TextDecoder().decode(output.stdout);
  const text = stdout + new TextDecoder().decode(output.stderr);
  assertStrictEquals(output.code, 0, `${command} ${args.join(" ")}:\n${text}`);
  return stdout;
}

/** Sends SendMessage until the server answers (it may still be starting), at most 60 tries. */
async function sendMessage(
  url: string,
): Promise<{ status: number; body: Record<string, unknown> }> {
  let last: unknown;
  for (let attempt = 0; attempt < 60; attempt++) {
    try {
      const response = await fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json", "a2a-version": "1.0" },
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 1,
          method: "SendMessage",
          params: {
            message: { messageId: `m-${attempt}`, role: "ROLE_USER", parts: [{ text: "Hello" }] },
          },
        }),
      });
      return { status: response.status, body: await response.json() };
    } catch (error) {
      last = error; // not listening yet
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }
  throw new Error(`the server never answered: ${last}`);
}

const markdown = await Deno.readTextFile(`${ROOT}/docs/deploy.md`);
const projects = embeddingProjects(markdown);

Deno.test("docs/deploy.md marks a project for every documented embedding", () => {
  assertStrictEquals(
    projects.map((project) => project.name).join(),
    "deno-serve,hono-deno,hono-bun,bun,node",
  );
});

let tarball: Promise<string> | undefined;
function packed(directory: string): Promise<string> {
  return tarball ??= (async () => {
    await build("package");
    const out = await run(
      "npm",
      ["pack", "--ignore-scripts", "--pack-destination", directory],
      ROOT,
    );
    return `${directory}/${out.trim().split("\n").pop()}`;
  })();
}
const packDirectory = await Deno.makeTempDir({ prefix: "beacon-embedding-pack-" });
globalThis.addEventListener("unload", () => Deno.removeSync(packDirectory, { recursive: true }));

for (const project of projects) {
  Deno.test(`docs/deploy.md, ${project.name}: type-checks, runs and answers SendMessage`, async () => {
    const directory = await Deno.makeTempDir({ prefix: `beacon-embedding-${project.name}-` });
    const path = await packed(packDirectory);
    let server: Deno.ChildProcess | undefined;
    try {
      for (const [file, text] of project.files) {
        assert(file !== "package.json" || text.includes(PRINTED_TARBALL), "the printed tarball");
        await Deno.writeTextFile(
          `${directory}/${file}`,
          text.replace(PRINTED_TARBALL, `file:${path}`),
        );
      }
      await run("npm", ["install", "--no-audit", "--no-fund"], directory);
      const port = freePort();
      const runtime = project.name.includes("deno")
        ? "deno"
        : project.name.includes("bun")
        ? "bun"
        : "node";
      let command: string;
      let args: string[];
      if (runtime === "deno") {
        await run(Deno.execPath(), ["check", "main.ts"], directory);
        command = Deno.execPath();
        args = [
          "run",
          "--allow-net",
          "--allow-read",
          "--allow-write",
          "--allow-env",
          "--allow-ffi",
          "--allow-sys",
          "main.ts",
        ];
      } else if (runtime === "node") {
        await run(
          await nodeExecutable(),
          ["node_modules/typescript/bin/tsc", "-p", "."],
          directory,
        );
        command = await nodeExecutable();
        args = ["server.js"];
      } else {
        command = await bunExecutable();
        args = ["run", "index.ts"];
      }
      server = new Deno.Command(command, {
        args,
        cwd: directory,
        clearEnv: true,
        env: { ...childEnvironment(), PORT: String(port) },
        stdin: "null",
        stdout: "null",
        stderr: "piped",
      }).spawn();
      const mounted = project.name === "node" || project.name.startsWith("hono") ? "/beacon" : "";
      const base = `http://127.0.0.1:${port}${mounted}`;
      const { status, body } = await sendMessage(`${base}/a2a/v1`);
      assertStrictEquals(status, 200, JSON.stringify(body));
      const task = (body.result as { task?: { id?: unknown; status?: { state?: unknown } } })?.task;
      assert(typeof task?.id === "string", `a task: ${JSON.stringify(body)}`);
      // The official SDK, given the mounted card, follows the URL the card names: one without the
      // prefix would fail here. (`""`: the first argument is the card's whole URL.)
      const client = await new ClientFactory({
        transports: [new JsonRpcTransportFactory()],
      }).createFromUrl(`${base}/.well-known/agent-card.json`, "");
      const card = await client.getAgentCard();
      assertStrictEquals(card.supportedInterfaces[0].url, `${base}/a2a/v1`);
      const sent = await client.sendMessage(sdkTextRequest("through the mounted card"));
      const submitted = sent as { id?: unknown; status?: { state?: unknown } };
      assert(typeof submitted.id === "string", JSON.stringify(sent));
      assertStrictEquals(submitted.status?.state, TaskState.TASK_STATE_SUBMITTED);
      const discovery = await (await fetch(`${base}/.well-known/autonomous-agent`)).json();
      assertStrictEquals(discovery.endpoints.submit, `${base}/beacon/0.1/submissions`);
    } finally {
      if (server !== undefined) {
        server.kill("SIGTERM");
        const stderr = new TextDecoder().decode((await server.output()).stderr);
        assert(!stderr.includes('"warning"'), `no warning: ${stderr}`);
      }
      await Deno.remove(directory, { recursive: true }).catch(() => {});
    }
  });
}
