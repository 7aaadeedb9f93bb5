/**
 * Bundles the Beacon for the runtimes that cannot read `deno.json` with esbuild (from
 * `tools/`), into `tools/dist/`:
 *
 * | target | output | entry | notes |
 * |---|---|---|---|
 * | `node` | `node.mjs` | `main()` of `src/runtime/node.ts` | `@libsql/client` left external |
 * | `node-lib` | `beacon-node.mjs` | `mod.ts` + the `node:http` adapter | for embedding in Node apps |
 * | `bun` | `bun.mjs` | `src/runtime/bun.ts` | `@libsql/client` left external |
 * | `workers` | `worker.js` | `src/runtime/workers.ts` | self-contained, web client only |
 *
 * The external `@libsql/client` (it loads a native module) is resolved at run time from
 * `tools/node_modules`, next to `tools/dist/`. The Workers bundle resolves packages with the
 * `workerd` condition, so `@libsql/client` is its fetch-only web build, and `node:fs/promises`
 * (used only for embedded databases, which the Workers entry refuses) is replaced by a stub.
 *
 * Usage: `deno run -A scripts/build.ts [node|node-lib|bun|workers ...]` (default: all).
 *
 * @example
 * ```ts ignore
 * import { build } from "./scripts/build.ts";
 * const path = await build("workers"); // .../tools/dist/worker.js
 * ```
 *
 * @module
 */
import { DIST, ensureTools, esbuildExecutable, ROOT, TOOLS } from "./tools.ts";

/** What can be built. */
export type BuildTarget = "node" | "node-lib" | "bun" | "workers";

/** Every target. */
export const BUILD_TARGETS: readonly BuildTarget[] = ["node", "node-lib", "bun", "workers"];

interface Recipe {
  readonly output: string;
  /** An entry file, or the source of a generated entry (resolved from the repository root). */
  readonly entry: { file: string } | { contents: string };
  readonly args: readonly string[];
}

const NODE_ARGS = [
  "--platform=node",
  "--target=node20",
  "--external:@libsql/client",
  "--external:libsql",
];

const RECIPES: Readonly<Record<BuildTarget, Recipe>> = {
  node: {
    output: "node.mjs",
    entry: { contents: 'import { main } from "./src/runtime/node.ts";\nawait main();\n' },
    args: NODE_ARGS,
  },
  "node-lib": {
    output: "beacon-node.mjs",
    entry: {
      contents: 'export * from "./mod.ts";\n' +
        'export { toNodeListener, toRequest, writeResponse } from "./src/runtime/node.ts";\n',
    },
    args: NODE_ARGS,
  },
  bun: {
    output: "bun.mjs",
    entry: { file: "src/runtime/bun.ts" },
    args: ["--platform=node", "--target=esnext", "--external:@libsql/client", "--external:libsql"],
  },
  workers: {
    output: "worker.js",
    entry: { file: "src/runtime/workers.ts" },
    args: [
      "--platform=neutral",
      "--target=es2022",
      "--conditions=workerd,worker,browser",
      "--main-fields=browser,module,main",
      "--alias:node:fs/promises=./scripts/shims/no_node_fs.ts",
      // The embedded driver is imported lazily, only for file databases, which Workers refuse.
      "--alias:libsql=./scripts/shims/no_libsql.ts",
    ],
  },
};

/** Builds one target and returns the bundle's path. Installs `tools/` first if needed. */
export async function build(target: BuildTarget): Promise<string> {
  await ensureTools();
  const recipe = RECIPES[target];
  const output = `${DIST}/${recipe.output}`;
  // Written beside and renamed into place, so a concurrent reader never sees half a bundle.
  const partial = `${output}.${Deno.pid}.partial`;
  const args = [
    "--bundle",
    "--format=esm",
    "--log-level=warning",
    `--outfile=${partial}`,
    ...recipe.args,
  ];
  if ("file" in recipe.entry) args.unshift(recipe.entry.file);
  else args.push("--loader=ts", `--sourcefile=${target}_entry.ts`);
  const child = new Deno.Command(await esbuildExecutable(), {
    args,
    cwd: ROOT,
    // Bare imports (the deno.json import map's npm packages) resolve from tools/node_modules.
    env: { NODE_PATH: `${TOOLS}/node_modules` },
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const writer = child.stdin.getWriter();
  if ("contents" in recipe.entry) {
    await writer.write(new TextEncoder().encode(recipe.entry.contents));
  }
  await writer.close();
  const result = await child.output();
  if (!result.success) {
    throw new Error(
      `Cannot build ${target}: esbuild failed\n${new TextDecoder().decode(result.stderr)}`,
    );
  }
  await Deno.rename(partial, output);
  return output;
}

if (import.meta.main) {
  const targets = Deno.args.length === 0 ? BUILD_TARGETS : Deno.args;
  for (const target of targets) {
    if (!BUILD_TARGETS.includes(target as BuildTarget)) {
      console.error(`Cannot build "${target}": choose from ${BUILD_TARGETS.join(", ")}`);
      Deno.exit(2);
    }
    console.log(await build(target as BuildTarget));
  }
}
