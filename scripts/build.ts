/**
 * Builds what the non-Deno runtimes run, for the Deno-hosted tasks and tests:
 *
 * | target | output | how |
 * |---|---|---|
 * | `package` | `dist/` (the npm package; `dist/server.mjs` is the Node server) | `npm run build` (tsdown from `tools/build/`) |
 * | `workers` | `tools/workers/dist/worker.js` | esbuild from `tools/workers/`, self-contained, web client only |
 *
 * Bun needs no build: it runs the TypeScript sources. The Workers bundle resolves packages with
 * the `workerd` condition, so `@libsql/client` is its fetch-only web build, and
 * `node:fs/promises` (used only for embedded databases, which the Workers entry refuses) is
 * replaced by a stub.
 *
 * Usage: `deno run -A scripts/build.ts [package|workers ...]` (default: both).
 *
 * @example
 * ```ts ignore
 * import { build } from "./scripts/build.ts";
 * const path = await build("workers"); // .../tools/workers/dist/worker.js
 * ```
 *
 * @module
 */
import {
  DIST,
  ensurePackages,
  ensureTools,
  esbuildExecutable,
  nodeExecutable,
  ROOT,
  TOOLS,
  withLock,
} from "./tools.ts";

/** What can be built. */
export type BuildTarget = "package" | "workers";

/** Every target. */
export const BUILD_TARGETS: readonly BuildTarget[] = ["package", "workers"];

const WORKERS_ARGS = [
  "src/adapter/workers/workers.ts",
  "--bundle",
  "--format=esm",
  "--log-level=warning",
  "--platform=neutral",
  "--target=es2022",
  "--conditions=workerd,worker,browser",
  "--main-fields=browser,module,main",
  "--alias:node:fs/promises=./scripts/shims/no_node_fs.ts",
  // The embedded driver is imported lazily, only for file databases, which Workers refuse.
  "--alias:libsql=./scripts/shims/no_libsql.ts",
];

async function buildPackage(): Promise<string> {
  await ensurePackages();
  await ensureTools("build"); // tsdown

  // scripts/build_package.mjs decides, as `npm start` does, whether the inputs changed.
  return await withLock(`${ROOT}/.build-lock`, "build the package", async () => {
    const output = await new Deno.Command(await nodeExecutable(), {
      args: [`${ROOT}/scripts/build_package.mjs`],
      cwd: ROOT,
      stdout: "piped",
      stderr: "piped",
    }).output();
    if (!output.success) {
      throw new Error(
        `Cannot build the package: scripts/build_package.mjs failed\n` +
          new TextDecoder().decode(output.stdout) + new TextDecoder().decode(output.stderr),
      );
    }
    return `${ROOT}/dist/server.mjs`;
  });
}

async function buildWorkers(): Promise<string> {
  await ensureTools("workers");
  const output = `${DIST}/worker.js`;
  // Written beside and renamed into place, so a concurrent reader never sees half a bundle.
  const partial = `${output}.${Deno.pid}.partial`;
  await Deno.mkdir(DIST, { recursive: true });
  const result = await new Deno.Command(await esbuildExecutable(), {
    args: [...WORKERS_ARGS, `--outfile=${partial}`],
    cwd: ROOT,
    // Bare imports (the deno.json import map's npm packages) resolve from tools/workers.
    env: { NODE_PATH: `${TOOLS}/workers/node_modules` },
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (!result.success) {
    throw new Error(
      `Cannot build workers: esbuild failed\n${new TextDecoder().decode(result.stderr)}`,
    );
  }
  await Deno.rename(partial, output);
  return output;
}

/** Builds one target and returns the path to run. */
export function build(target: BuildTarget): Promise<string> {
  return target === "package" ? buildPackage() : buildWorkers();
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
