/**
 * The root `package.json` stays in step with `deno.json` (as Hono checks its
 * `jsr.json` against `package.json`): the same name and version, and every npm package the
 * runtime code imports is a dependency at exactly the version `deno.json` pins, in the lock file
 * too. The Workers tool folder, whose bundle is built from the same sources, pins the same
 * versions. Nothing but what runs is a dependency.
 */
import { assert, assertEquals, assertMatch, assertStrictEquals } from "../support/assert.ts";
import { ROOT } from "../../scripts/tools.ts";
import { bareImports, sourceImports } from "../support/imports.ts";

const readJson = async (path: string) => JSON.parse(await Deno.readTextFile(`${ROOT}/${path}`));
const denoJson = await readJson("deno.json");
const packageJson = await readJson("package.json");
const packageLock = await readJson("package-lock.json");
const workers = await readJson("tools/workers/package.json");
const workersLock = await readJson("tools/workers/package-lock.json");

/** Every bare npm import of the server's code (mod.ts and src/). */
const serverImports = () => sourceImports();

/** Every bare npm import of the reviewer's tool (review/, its tests aside), the `bin`. */
const reviewImports = () => bareImports(["review"], ["tests"]);

function npmPackage(specifier: string): { name: string; version: string } {
  const match = /^npm:(@?[^@/]+(?:\/[^@/]+)?)@([^/]+)/.exec(specifier);
  if (match === null) throw new Error(`Cannot read the npm specifier ${specifier}`);
  return { name: match[1], version: match[2] };
}

Deno.test("package.json has deno.json's name and version", () => {
  assertStrictEquals(packageJson.name, denoJson.name);
  assertStrictEquals(packageJson.version, denoJson.version);
  assertStrictEquals(packageLock.version, denoJson.version);
});

Deno.test("package.json pins every runtime npm import at deno.json's version, and nothing else", async () => {
  const pinned = (imports: Set<string>) => {
    const expected: Record<string, string> = {};
    for (const bare of imports) {
      const specifier = denoJson.imports?.[bare];
      assert(specifier !== undefined, `deno.json maps ${bare}`);
      const { name, version } = npmPackage(specifier);
      expected[name] = version;
    }
    return expected;
  };
  const server = pinned(await serverImports());
  const expected = { ...server, ...pinned(await reviewImports()) };
  assertEquals(
    Object.fromEntries(Object.entries(packageJson.dependencies).sort()),
    Object.fromEntries(Object.entries(expected).sort()),
    "dependencies are exactly what runs: the server and the reviewer's tool",
  );
  for (const [name, version] of Object.entries(expected)) {
    assertStrictEquals(packageLock.packages?.[`node_modules/${name}`]?.version, version, name);
  }
  // The Worker bundle is the server alone.
  for (const [name, version] of Object.entries(server)) {
    assertStrictEquals(workers.dependencies?.[name], version, `tools/workers ${name}`);
    assertStrictEquals(workersLock.packages?.[`node_modules/${name}`]?.version, version, name);
  }
});

Deno.test("every version in package.json and the tool folders is pinned exactly", async () => {
  const manifests = [packageJson, workers];
  for (const folder of ["bun", "sqld", "build"]) {
    manifests.push(await readJson(`tools/${folder}/package.json`));
  }
  for (const manifest of manifests) {
    for (const field of ["dependencies", "devDependencies"]) {
      for (const [name, version] of Object.entries(manifest[field] ?? {})) {
        assert(/^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/.test(String(version)), `${name}@${version}`);
      }
    }
  }
});

/** The source file of each tsdown entry, keyed by the name of the file it becomes in dist/. */
async function tsdownEntries(): Promise<Record<string, string>> {
  const config = await Deno.readTextFile(`${ROOT}/tsdown.config.ts`);
  const block = /entry:\s*\{([^}]*)\}/.exec(config);
  assert(block !== null, "tsdown.config.ts has an entry object");
  const entries: Record<string, string> = {};
  for (const [, name, source] of block[1].matchAll(/^\s*"?([\w-]+)"?:\s*"([^"]+)"/gm)) {
    entries[name] = source;
  }
  return entries;
}

Deno.test("deno.json and package.json export the same subpaths, built from the same sources", async () => {
  const npmSubpaths = Object.keys(packageJson.exports).filter((key) => key !== "./package.json");
  assertEquals(Object.keys(denoJson.exports).sort(), npmSubpaths.sort());
  const entries = await tsdownEntries();
  for (const subpath of npmSubpaths) {
    const built = /^\.\/dist\/(\w+)\.mjs$/.exec(packageJson.exports[subpath].default);
    assert(built !== null, `${subpath} is built into dist/`);
    assertStrictEquals(`./${entries[built[1]]}`, denoJson.exports[subpath], subpath);
  }
});

Deno.test("the reviewer's tool: a bin built from its Node launcher, a review command everywhere", async () => {
  const entries = await tsdownEntries();
  assertEquals(Object.keys(packageJson.bin), ["beacon-review"]);
  const bin = /^dist\/([\w-]+)\.mjs$/.exec(packageJson.bin["beacon-review"]);
  assert(bin !== null, "the bin is built into dist/");
  assertStrictEquals(entries[bin[1]], "review/runtime/launch_node.ts");
  // The launcher runs dist/review.mjs beside it, built from the Node and Bun entry.
  assertStrictEquals(entries.review, "review/runtime/node.ts");
  // `exec`: npm's shell becomes the launcher, so a signal to npm reaches it (sh passes none on).
  assertStrictEquals(packageJson.scripts.review, "exec node review/runtime/launch.mjs");
  assertMatch(denoJson.tasks.review, / review\/runtime\/launch_deno\.ts$/);
});

Deno.test("package.json's exports list types first and point into dist/", () => {
  for (const [subpath, target] of Object.entries(packageJson.exports)) {
    if (typeof target === "string") continue; // ./package.json
    const conditions = Object.keys(target as Record<string, string>);
    assertStrictEquals(conditions[0], "types", `${subpath}: types first`);
    for (const path of Object.values(target as Record<string, string>)) {
      assert(path.startsWith("./dist/"), `${subpath} → ${path}`);
    }
  }
  assertStrictEquals(packageJson.type, "module");
  // 20.19: the oldest Node 20 that @noble/hashes 2 supports (its own engines field).
  assertStrictEquals(packageJson.engines.node, ">=20.19");
});
