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

async function sources(folder: string, skip: (path: string) => boolean): Promise<string[]> {
  const files: string[] = [];
  const walk = async (directory: string) => {
    for await (const entry of Deno.readDir(`${ROOT}${directory}`)) {
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
function resolved(file: string, specifier: string): string | undefined {
  if (!specifier.startsWith(".")) return undefined;
  return new URL(specifier, `file://${ROOT}${file}`).pathname.slice(ROOT.length);
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
