/**
 * The layers of src/: which folder (or top-level module) may import which, checked on every
 * import of every file as Deno's own module parser reads it (static imports, `import type`,
 * `export … from`, `import()` and type queries), so a new file or a new import cannot slip past.
 * The table is itself a layering (no two units may import each other, directly or round a loop),
 * and no module imports itself round a circle. Modelled on review/tests/boundary_test.ts, which
 * guards the review package's edge the same way.
 */
import { assert, assertEquals, assertRejects } from "../support/assert.ts";

const ROOT = new URL("../../", import.meta.url).pathname;

/**
 * What each unit of src/ may import. A unit is a folder of src/ or a module at src/'s top level.
 * Read from the top down: the domain errors, the database errors' classification, byte helpers,
 * clocks, defaults and route paths import nothing; JSON, then signing, then the message format are the vocabulary (json → signing →
 * message → intake); storage, HTTP, logging and limits sit on it; the intake on those; the
 * protocol handlers on the intake; the middleware chain, the handler and the composition on top,
 * then the runtime entries and command-line tools. The table is exact: every permission is used
 * by at least one import, so a new reach across layers shows up as a new line here, in review.
 */
export const LAYERS: Readonly<Record<string, readonly string[]>> = {
  "errors.ts": [],
  "database_error.ts": [],
  "bytes.ts": [],
  "timers.ts": [],
  "defaults.ts": [],
  "routes.ts": [],
  "version.ts": [],
  "ids.ts": ["bytes.ts"],
  json: [],
  signing: ["bytes.ts", "json"],
  message: ["bytes.ts", "json", "signing"],
  // The store keeps each batch's receipt leaves and signature as stored; turning them into a
  // receipt's signature and proof is signing's (`receiptSignatureOf`), so the store names none of
  // signing's types: it defines the shapes it stores.
  store: ["bytes.ts", "defaults.ts", "errors.ts", "timers.ts"],
  // The signed log: its signer, tiles read back, schedule and origin. Hashing and proofs are
  // signing's; every statement it runs is the store's (store/log_rows.ts).
  transparency: ["bytes.ts", "routes.ts", "signing", "store", "timers.ts"],
  http: ["bytes.ts", "errors.ts"],
  limits: ["errors.ts", "http"],
  metrics: ["database_error.ts", "http"],
  intake: ["bytes.ts", "errors.ts", "ids.ts", "message", "signing", "store"],
  native: [
    "errors.ts",
    "http",
    "intake",
    "json",
    "limits",
    "message",
    "routes.ts",
    "signing",
    "transparency",
    "version.ts",
  ],
  a2a: [
    ...["bytes.ts", "errors.ts", "http", "intake", "json", "limits", "message", "signing"],
    // A status read answers with the stored row's summary, the type the store defines.
    "store",
    // An A2A task carries the native receipt document and status URL, built once, in
    // native/receipt.ts: the one sideways import between the two protocols.
    "native",
  ],
  middleware: ["http", "limits", "timers.ts"],
  "documents.ts": ["a2a", "bytes.ts", "http", "message", "native", "routes.ts", "signing"],
  // The options name where a new signing key goes (`newSigningKey`), a type of signing's.
  "types.ts": ["http", "limits", "signing", "store"],
  "handler.ts": [
    "a2a",
    "http",
    "intake",
    "limits",
    "metrics",
    "middleware",
    "native",
    "routes.ts",
    "transparency",
  ],
  "options.ts": ["defaults.ts", "limits", "types.ts"],
  "open.ts": [
    ...["documents.ts", "handler.ts", "http", "intake", "limits", "metrics", "middleware"],
    "native",
    "options.ts",
    ...["signing", "store", "transparency", "types.ts"],
  ],
  "beacon.ts": [
    ...["a2a", "http", "metrics", "middleware", "open.ts", "options.ts", "routes.ts"],
    "types.ts",
  ],
  start: [
    ...["beacon.ts", "bytes.ts", "database_error.ts", "defaults.ts", "limits", "signing"],
    ...["store", "timers.ts"],
    "types.ts",
    "version.ts",
  ],
  adapter: ["defaults.ts", "http", "middleware", "start", "store", "types.ts"],
  cli: ["a2a", "defaults.ts", "message", "native", "routes.ts", "signing", "start", "store"],
};

/**
 * Files outside src/ that the server imports, and the units that may: the A2A agent card is
 * built on the A2A specification's own JSON Schema of a card, kept beside the published schemas.
 * Any other import that leaves src/ (the review tool, the tests, the scripts) is a stray.
 */
export const OUTSIDE: Readonly<Record<string, readonly string[]>> = {
  "schemas/agent-card.json": ["a2a"],
};

/** A module graph: each file (a path from the repository's root) and the files it imports. */
export type ModuleGraph = ReadonlyMap<string, readonly string[]>;

/** Every module of `root`/src: TypeScript, and the JavaScript a runtime entry shares. */
async function sourceFiles(root: string): Promise<string[]> {
  const files: string[] = [];
  const walk = async (directory: string) => {
    for await (const entry of Deno.readDir(`${root}${directory}`)) {
      const path = `${directory}/${entry.name}`;
      if (entry.isDirectory) await walk(path);
      else if (/\.(ts|mts|mjs|js)$/.test(entry.name)) files.push(path);
    }
  };
  await walk("src");
  return files.sort();
}

/** What `deno info --json` says of one module and of each specifier it names. */
interface InfoModule {
  specifier: string;
  error?: string;
  dependencies?: {
    specifier: string;
    code?: { specifier?: string; error?: string };
    type?: { specifier?: string; error?: string };
  }[];
}

/**
 * The imports of every module under `root`/src that lead to a file, resolved by Deno's own module
 * parser (`deno info --json`, the graph `deno check` and `deno run` build): static imports,
 * `import type`, `export … from` and `import()` with a literal specifier, each as the file it
 * resolves to, a path from `root`; packages (`npm:`, `node:`) are not files and are left out.
 * Throws if a module cannot be parsed, a relative specifier cannot be resolved, or a module does
 * not reach the graph, so no file and no import can slip past unread.
 */
export async function moduleGraph(root: string): Promise<ModuleGraph> {
  const files = await sourceFiles(root);
  const scratch = await Deno.makeTempDir({ prefix: "beacon-layers-graph-" });
  try {
    // One entry that names every module, so one run of the parser reads them all.
    const entry = `${scratch}/entry.ts`;
    await Deno.writeTextFile(
      entry,
      files.map((file) => `import ${JSON.stringify(`file://${root}${file}`)};\n`).join(""),
    );
    const config = `${root}deno.json`;
    const hasConfig = await Deno.stat(config).then(() => true, () => false);
    const output = await new Deno.Command(Deno.execPath(), {
      args: ["info", "--json", ...(hasConfig ? ["--config", config] : ["--no-config"]), entry],
      stdout: "piped",
      stderr: "piped",
    }).output();
    const report = new TextDecoder().decode(output.stdout);
    assert(output.success, new TextDecoder().decode(output.stderr));
    const modules: InfoModule[] = JSON.parse(report).modules;
    const prefix = `file://${root}`;
    const graph = new Map<string, string[]>();
    for (const module of modules) {
      if (!module.specifier.startsWith(`${prefix}src/`)) continue;
      const file = module.specifier.slice(prefix.length);
      if (module.error !== undefined) throw new Error(`${file}: ${module.error}`);
      const targets = new Set<string>();
      for (const dependency of module.dependencies ?? []) {
        for (const resolved of [dependency.code, dependency.type]) {
          if (resolved === undefined) continue;
          if (resolved.error !== undefined) {
            throw new Error(`${file} imports ${dependency.specifier}: ${resolved.error}`);
          }
          if (resolved.specifier?.startsWith(prefix)) {
            targets.add(resolved.specifier.slice(prefix.length));
          }
        }
      }
      graph.set(file, [...targets].sort());
    }
    const unread = files.filter((file) => !graph.has(file));
    if (unread.length > 0) throw new Error(`not in the module graph: ${unread.join(", ")}`);
    return graph;
  } finally {
    await Deno.remove(scratch, { recursive: true });
  }
}

/**
 * The modules under `root`/src with an `import()` whose specifier is computed rather than a
 * literal: no parser can say where it leads, so the table could not judge it.
 */
export async function computedImports(root: string): Promise<string[]> {
  const found: string[] = [];
  for (const file of await sourceFiles(root)) {
    const code = await Deno.readTextFile(`${root}${file}`);
    // Examples in doc comments import the module they document; only code counts.
    const uncommented = code.replace(/\/\*[\s\S]*?\*\//g, "").replace(/^\s*\/\/.*$/gm, "");
    if (/\bimport\(\s*(?!["'][^"'`$]*["']\s*[,)])/.test(uncommented)) found.push(file);
  }
  return found;
}

/** The unit of src/ a path belongs to: its folder, or the module itself at the top level. */
function unitOf(path: string): string | undefined {
  const parts = path.split("/");
  if (parts[0] !== "src") return undefined;
  return parts[1];
}

/** Every import that the tables do not allow, as `file imports target`. */
export function strayImports(
  graph: ModuleGraph,
  layers: Readonly<Record<string, readonly string[]>> = LAYERS,
  outside: Readonly<Record<string, readonly string[]>> = OUTSIDE,
): string[] {
  const strays: string[] = [];
  for (const [file, targets] of graph) {
    const from = unitOf(file)!;
    for (const target of targets) {
      const to = unitOf(target);
      if (to === from) continue;
      const allowed = to === undefined
        ? outside[target]?.includes(from) ?? false
        : layers[from]?.includes(to) ?? false;
      if (!allowed) strays.push(`${file} imports ${target}`);
    }
  }
  return strays.sort();
}

/** The permissions of the table that no import uses, as `unit → unit`: each should leave it. */
export function unusedPermissions(
  graph: ModuleGraph,
  layers: Readonly<Record<string, readonly string[]>> = LAYERS,
): string[] {
  const used = new Set<string>();
  for (const [file, targets] of graph) {
    for (const target of targets) used.add(`${unitOf(file)} → ${unitOf(target)}`);
  }
  return Object.entries(layers).flatMap(([from, targets]) =>
    targets.map((to) => `${from} → ${to}`).filter((edge) => !used.has(edge))
  ).sort();
}

/** The circles of a directed graph, each as the path that closes it (first node repeated). */
export function circles(edges: ReadonlyMap<string, readonly string[]>): string[][] {
  const found: string[][] = [];
  const state = new Map<string, "open" | "done">();
  const path: string[] = [];
  const visit = (node: string) => {
    state.set(node, "open");
    path.push(node);
    for (const next of edges.get(node) ?? []) {
      if (state.get(next) === "open") found.push([...path.slice(path.indexOf(next)), next]);
      else if (!state.has(next)) visit(next);
    }
    path.pop();
    state.set(node, "done");
  };
  for (const node of [...edges.keys()].sort()) if (!state.has(node)) visit(node);
  return found;
}

Deno.test("every import in src/ points down the table of layers", async () => {
  const graph = await moduleGraph(ROOT);
  assert(graph.size > 100, "the server's modules were found");
  assertEquals(strayImports(graph), []);
  assertEquals(await computedImports(ROOT), []);
  // Every unit of src/ has a row, so a new folder has to say where it sits.
  const units = new Set([...graph.keys()].map((file) => unitOf(file)!));
  assertEquals([...units].filter((unit) => !(unit in LAYERS)).sort(), []);
  assertEquals(Object.keys(LAYERS).filter((unit) => !units.has(unit)).sort(), []);
  // The table says exactly what is imported: a permission nothing uses leaves it, so a new
  // upward import needs a new line here, in review.
  assertEquals(unusedPermissions(graph), []);
});

Deno.test("docs/architecture.md's map of src/ names every unit of the table", async () => {
  const readme = await Deno.readTextFile(`${ROOT}docs/architecture.md`);
  const map = readme.slice(readme.indexOf("## Where things are"));
  const block = map.slice(map.indexOf("```"), map.indexOf("```", map.indexOf("```") + 3));
  const named = new Set(
    [...block.matchAll(/^src\/([^/\s]+)/gm)].map((match) => match[1]),
  );
  assertEquals(Object.keys(LAYERS).filter((unit) => !named.has(unit)).sort(), []);
});

Deno.test("the table of layers is a layering: no unit imports itself round a loop", () => {
  const edges = new Map(Object.entries(LAYERS));
  for (const targets of edges.values()) {
    for (const target of targets) assert(edges.has(target), `${target} has a row`);
  }
  assertEquals(circles(edges), []);
});

Deno.test("no module of src/ imports itself round a circle", async () => {
  assertEquals(circles(await moduleGraph(ROOT)), []);
});

Deno.test("the checker fails on planted upward imports of every kind and on a circle", async () => {
  const root = `${await Deno.makeTempDir({ prefix: "beacon-layers-" })}/`;
  try {
    const write = async (path: string, code: string) => {
      await Deno.mkdir(`${root}${path.slice(0, path.lastIndexOf("/"))}`, { recursive: true });
      await Deno.writeTextFile(`${root}${path}`, code);
    };
    await write("src/bytes.ts", "export const b = 1;\n");
    await write("src/http/context.ts", "export interface Context {}\nexport const c = 1;\n");
    await write("src/http/errors.ts", "export const e = 1;\n");
    await write("src/http/route.ts", "export const r = 1;\n");
    await write("src/http/ip.ts", "export const i = 1;\n");
    await write("src/store/store.ts", "export const s = 1;\n");
    // The domain errors reaching up into HTTP, once by each kind of import, the type import
    // counting as much as any other; an example in a doc comment does not count.
    await write(
      "src/errors.ts",
      [
        'import type { Context } from "./http/context.ts";',
        'export { e } from "./http/errors.ts";',
        'export * from "./http/route.ts";',
        'export const later = () => import("./http/ip.ts");',
        "/**",
        " * ```ts",
        ' * import { s } from "./store/store.ts";',
        " * ```",
        " */",
        "export type C = Context;",
        "",
      ].join("\n"),
    );
    // A circle between two message modules, closed by a type query.
    await write("src/message/schema.ts", 'import { examples } from "./examples.ts";\nexamples;\n');
    await write(
      "src/message/examples.ts",
      'export const examples = [];\nexport type S = typeof import("./schema.ts");\n',
    );
    // A unit without a row may import nothing at all, and nothing outside src/ but what the
    // outside table names.
    await write("tests/helper.ts", "export const t = 1;\n");
    await write(
      "src/new/thing.ts",
      'import { b } from "../bytes.ts";\nimport { t } from "../../tests/helper.ts";\nb + t;\n',
    );
    // An import() of a computed specifier, which no table can judge.
    await write("src/log/dynamic.ts", 'const name = "./x.ts";\nawait import(name);\n');
    const graph = await moduleGraph(root);
    assertEquals(strayImports(graph), [
      "src/errors.ts imports src/http/context.ts",
      "src/errors.ts imports src/http/errors.ts",
      "src/errors.ts imports src/http/ip.ts",
      "src/errors.ts imports src/http/route.ts",
      "src/new/thing.ts imports src/bytes.ts",
      "src/new/thing.ts imports tests/helper.ts",
    ]);
    assertEquals(circles(graph), [[
      "src/message/examples.ts",
      "src/message/schema.ts",
      "src/message/examples.ts",
    ]]);
    assertEquals(await computedImports(root), ["src/log/dynamic.ts"]);
    // The same imports pass once the tables allow them, and an allowance nothing uses is named.
    const allowing = { "errors.ts": ["http"], new: ["bytes.ts"], http: ["store"] };
    assertEquals(strayImports(graph, allowing, { "tests/helper.ts": ["new"] }), []);
    assertEquals(unusedPermissions(graph, allowing), ["http → store"]);
    // A module the parser cannot read, or an import that leads nowhere, fails the scan itself.
    await write("src/http/broken.ts", 'import { gone } from "./gone.ts";\ngone;\n');
    await assertRejects(() => moduleGraph(root));
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

/**
 * What bench/ may import of the server: its public faces (the package's mod.ts and the faces the
 * review tool uses) and the launch contract (the permission flags and V8 settings
 * `deno task start` runs the server with), so no refactor inside src/ has to keep a benchmark
 * compiling.
 */
const BENCH_FACES = [
  "mod.ts",
  "src/signing/mod.ts",
  "src/store/mod.ts",
  "src/message/mod.ts",
  "src/cli/permissions.ts",
];

Deno.test("bench/ imports the server only through its public faces", async () => {
  const strays: string[] = [];
  const walk = async (directory: string) => {
    for await (const entry of Deno.readDir(`${ROOT}${directory}`)) {
      const path = `${directory}/${entry.name}`;
      if (entry.isDirectory && entry.name !== "node_modules") await walk(path);
      else if (/\.(ts|mjs|js)$/.test(entry.name)) {
        const text = await Deno.readTextFile(`${ROOT}${path}`);
        for (const [, target] of text.matchAll(/\bfrom\s+"(\.[^"]+)"/g)) {
          const resolved = new URL(target, `file://${ROOT}${path}`).pathname.slice(ROOT.length);
          if (!resolved.startsWith("src/") && resolved !== "mod.ts") continue;
          if (!BENCH_FACES.includes(resolved)) strays.push(`${path} imports ${resolved}`);
        }
      }
    }
  };
  await walk("bench");
  assertEquals(strays, []);
});
