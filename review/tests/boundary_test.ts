/**
 * The review package's boundary: it imports the server only through the server's
 * public faces, the server never imports it, and only the runtime entries touch a runtime.
 * Checked on the import statements of every file, so a new file cannot slip past.
 */
import { assert, assertEquals } from "../../tests/support/assert.ts";

const ROOT = new URL("../../", import.meta.url).pathname;

/** The server's modules the review package may import (review/README.md says why each). */
const SERVER_FACES = [
  "src/store/mod.ts",
  "src/signing/mod.ts",
  "src/message/mod.ts",
  "src/transparency/audit.ts", // the log's one audit loop, shared with the server's head signer
  "src/adapter/node/node.ts", // the npm package's `./node` export: node:http for the console
  "src/cli/permissions.ts", // the native driver's permission facts, shared with the server's launcher
  "src/start/key_file.ts", // the key file's form and durable creation, shared with the server's start
];

/** The files that may use a runtime's own API: the entries and the launchers. */
const RUNTIME_FILES: Record<string, RegExp> = {
  "review/runtime/deno.ts": /\bDeno\./,
  "review/runtime/launch_deno.ts": /\bDeno\./,
  "review/runtime/node.ts": /"node:(process|http)"/,
  "review/runtime/launch_node.ts": /"node:(process|child_process)"/,
  // The pager's plumbing for Node's launcher and Bun (pager.ts decides).
  "review/runtime/page_node.ts": /"node:(process|child_process)"/,
  // The parent-exit check every entry and launcher shares (`process.ppid` on all three).
  "review/runtime/parent.ts": /"node:process"/,
};

async function sources(
  folder: string,
  skip: (path: string) => boolean,
  root = ROOT,
): Promise<string[]> {
  const files: string[] = [];
  const walk = async (directory: string) => {
    for await (const entry of Deno.readDir(`${root}${directory}`)) {
      const path = `${directory}/${entry.name}`;
      if (skip(path)) continue;
      if (entry.isDirectory) await walk(path);
      else if (/\.(ts|mjs|js)$/.test(entry.name)) files.push(path);
    }
  };
  await walk(folder);
  return files.sort();
}

/** Every module specifier a file imports or re-exports, statically or dynamically. */
function specifiers(code: string): string[] {
  const found: string[] = [];
  const patterns = [
    /^\s*(?:import|export)\b[^"';]*?\bfrom\s+"([^"]+)"/gm,
    /^\s*import\s+"([^"]+)"/gm,
    /\bimport\(\s*"([^"]+)"\s*\)/g,
  ];
  for (const pattern of patterns) {
    for (const match of code.matchAll(pattern)) found.push(match[1]);
  }
  return found;
}

/** `specifier` imported from `file`, as a path from the repository's root (relative ones only). */
function resolved(file: string, specifier: string, root = ROOT): string | undefined {
  if (!specifier.startsWith(".")) return undefined;
  return new URL(specifier, `file://${root}${file}`).pathname.slice(root.length);
}

/**
 * What a command may import besides the server's faces: it parses (options.ts), asks data/ (and
 * search/), and hands the answer to render/, writing through io.ts. Another command is not on the
 * list: what two commands share lives in data/ or render/, where the console finds it too.
 */
const COMMAND_MAY_IMPORT = [
  /^review\/data\//,
  /^review\/render\//,
  /^review\/search\//,
  /^review\/io\.ts$/,
  /^review\/commands\/options\.ts$/,
];

/** SQL is data/'s: a command neither imports the driver nor runs a statement. */
const RUNS_SQL = /\.(execute|batch|executeMultiple|transaction)\(/;

/** Every import of a command under `root` that the rule above refuses, and every SQL call. */
async function commandStrays(root: string): Promise<string[]> {
  const files = await sources("review/commands", () => false, root);
  const strays: string[] = [];
  for (const file of files) {
    if (file === "review/commands/options.ts") continue;
    const code = await Deno.readTextFile(`${root}${file}`);
    // Examples in doc comments import what they show; only code counts.
    const uncommented = code.replace(/\/\*[\s\S]*?\*\//g, "").replace(/^\s*\/\/.*$/gm, "");
    for (const specifier of specifiers(uncommented)) {
      const target = resolved(file, specifier, root);
      if (target === undefined) {
        if (!specifier.startsWith("node:")) strays.push(`${file} imports ${specifier}`);
      } else if (
        !SERVER_FACES.includes(target) &&
        !COMMAND_MAY_IMPORT.some((allowed) => allowed.test(target))
      ) {
        strays.push(`${file} imports ${target}`);
      }
    }
    if (RUNS_SQL.test(uncommented)) strays.push(`${file} runs SQL`);
  }
  return strays;
}

Deno.test("the review package imports the server only through its public faces", async () => {
  const files = await sources("review", (path) => path === "review/tests");
  assert(files.length > 20, "the package's files were found");
  const strays: string[] = [];
  const used = new Set<string>();
  for (const file of files) {
    for (const specifier of specifiers(await Deno.readTextFile(`${ROOT}${file}`))) {
      const target = resolved(file, specifier);
      if (target === undefined || !(target.startsWith("src/") || target === "mod.ts")) continue;
      if (SERVER_FACES.includes(target)) used.add(target);
      else strays.push(`${file} imports ${target}`);
    }
  }
  assertEquals(strays, []);
  // The scan sees imports at all: every face is in use (an unused one should leave the list).
  assertEquals([...used].sort(), [...SERVER_FACES].sort());
});

Deno.test("nothing of the server imports the review package", async () => {
  const files = [
    "mod.ts",
    ...await sources("src", (path) => path === "src/native/served_docs.ts"),
  ];
  const strays: string[] = [];
  for (const file of files) {
    for (const specifier of specifiers(await Deno.readTextFile(`${ROOT}${file}`))) {
      const target = resolved(file, specifier);
      if (target?.startsWith("review/")) strays.push(`${file} imports ${target}`);
    }
  }
  assertEquals(strays, []);
});

Deno.test("only the runtime entries and launchers use a runtime's own API", async () => {
  const files = await sources("review", (path) => path === "review/tests");
  const runtimeApi = /\bDeno\.|"node:(process|http|child_process)"|\bBun\./;
  const strays = [];
  for (const file of files) {
    const code = await Deno.readTextFile(`${ROOT}${file}`);
    // Comments may name an API; only code counts.
    const uncommented = code.replace(/\/\*[\s\S]*?\*\//g, "").replace(/^\s*\/\/.*$/gm, "");
    if (file in RUNTIME_FILES) {
      assert(RUNTIME_FILES[file].test(uncommented), `${file} is a runtime entry`);
    } else if (file !== "review/runtime/launch.mjs" && runtimeApi.test(uncommented)) {
      strays.push(file);
    }
  }
  assertEquals(strays, []);
});

Deno.test("a command imports only data/, render/, search/, io.ts and options, and runs no SQL", async () => {
  const files = await sources("review/commands", () => false);
  assert(files.length > 8, "the commands were found");
  assertEquals(await commandStrays(ROOT), []);
});

Deno.test("the command rule fails on a planted command that imports a command or runs SQL", async () => {
  const root = `${await Deno.makeTempDir({ prefix: "beacon-commands-" })}/`;
  try {
    const write = async (path: string, code: string) => {
      await Deno.mkdir(`${root}${path.slice(0, path.lastIndexOf("/"))}`, { recursive: true });
      await Deno.writeTextFile(`${root}${path}`, code);
    };
    await write("review/commands/options.ts", "export const o = 1;\n");
    await write("review/commands/show.ts", "export const describe = 1;\n");
    await write(
      "review/commands/planted.ts",
      [
        'import { o } from "./options.ts";',
        'import { q } from "../data/queries.ts";',
        'import { describe } from "./show.ts";',
        'import type { Client } from "@libsql/client";',
        'export { later } from "../console/api.ts";',
        'const lazy = () => import("./show.ts");',
        "/**",
        " * ```ts",
        ' * import { shown } from "./show.ts";',
        " * ```",
        " */",
        "export const run = (client: Client) => client.execute(`SELECT ${o + q + describe}`);",
        "",
      ].join("\n"),
    );
    await write("review/commands/clean.ts", 'import { safeText } from "../render/mod.ts";\n');
    assertEquals(await commandStrays(root), [
      "review/commands/planted.ts imports review/commands/show.ts",
      "review/commands/planted.ts imports @libsql/client",
      "review/commands/planted.ts imports review/console/api.ts",
      "review/commands/planted.ts imports review/commands/show.ts",
      "review/commands/planted.ts runs SQL",
    ]);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});
