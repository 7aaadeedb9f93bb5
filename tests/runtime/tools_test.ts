/**
 * The project-local tools (`tools/package.json`, installed by scripts/tools.ts) bundle the same
 * npm packages, at the same versions, as `deno.json` gives the Deno runtime: the Bun, Node and
 * Workers bundles must run the very code the Deno tests test.
 */
import { assert, assertStrictEquals } from "../support/assert.ts";
import { ROOT } from "../../scripts/tools.ts";

const denoJson = JSON.parse(await Deno.readTextFile(`${ROOT}/deno.json`));
const toolsPackage = JSON.parse(await Deno.readTextFile(`${ROOT}/tools/package.json`));
const toolsLock = JSON.parse(await Deno.readTextFile(`${ROOT}/tools/package-lock.json`));

/**
 * Every npm package the runtime code (mod.ts and src/) imports. `src/review/` is left out: the
 * reviewer's tool runs on Deno only and is never bundled for another runtime.
 */
async function runtimeImports(): Promise<Set<string>> {
  const names = new Set<string>();
  const walk = async (path: string) => {
    for await (const entry of Deno.readDir(path)) {
      const child = `${path}/${entry.name}`;
      if (entry.isDirectory) {
        if (child !== `${ROOT}/src/review`) await walk(child);
      } else if (entry.name.endsWith(".ts")) {
        const text = await Deno.readTextFile(child);
        for (const match of text.matchAll(/\bfrom\s+["']([^."'][^"']*)["']/g)) {
          if (!match[1].startsWith("node:")) names.add(match[1]);
        }
        for (const match of text.matchAll(/import\(\s*["']([^."'][^"']*)["']\s*\)/g)) {
          if (!match[1].startsWith("node:")) names.add(match[1]);
        }
      }
    }
  };
  await walk(`${ROOT}/src`);
  for (
    const match of (await Deno.readTextFile(`${ROOT}/mod.ts`)).matchAll(
      /from ["']([^."'][^"']*)["']/g,
    )
  ) {
    names.add(match[1]);
  }
  return names;
}

function npmPackage(specifier: string): { name: string; version: string } {
  const match = /^npm:(@?[^@/]+(?:\/[^@/]+)?)@([^/]+)/.exec(specifier);
  if (match === null) throw new Error(`Cannot read the npm specifier ${specifier}`);
  return { name: match[1], version: match[2] };
}

Deno.test("tools/package.json pins every runtime npm import at deno.json's version", async () => {
  for (const bare of await runtimeImports()) {
    const specifier = denoJson.imports?.[bare];
    assert(specifier !== undefined, `deno.json maps ${bare}`);
    const { name, version } = npmPackage(specifier);
    assertStrictEquals(toolsPackage.dependencies?.[name], version, `tools/package.json ${name}`);
    assertStrictEquals(
      toolsLock.packages?.[`node_modules/${name}`]?.version,
      version,
      `tools/package-lock.json ${name}`,
    );
  }
});

Deno.test("tools/package-lock.json locks the runtimes the conformance run starts", () => {
  for (const name of ["bun", "miniflare", "esbuild"]) {
    const locked = toolsLock.packages?.[`node_modules/${name}`]?.version;
    assertStrictEquals(locked, toolsPackage.dependencies[name], `${name} is locked as declared`);
  }
});
