/**
 * The server and the review tool run with tools/serve/deno.json (issue 20, item 4), which names
 * only the npm packages they import, with its own lock file: their processes resolve and install
 * nothing of the development tools, and `deno task review` no longer fetches package metadata on
 * every call. It stays in step with the root deno.json: the same packages at the same versions,
 * and nothing src/ imports is missing.
 */
import { assert, assertStrictEquals } from "../support/assert.ts";
import { ROOT } from "../../scripts/tools.ts";
import { SERVE_CONFIG } from "../../src/cli/permissions.ts";
import { sourceImports } from "../support/imports.ts";

const readJson = async (path: string) => JSON.parse(await Deno.readTextFile(path));
const root: { imports: Record<string, string>; tasks: Record<string, string> } = await readJson(
  `${ROOT}/deno.json`,
);
const serve: { imports: Record<string, string> } = await readJson(SERVE_CONFIG);

Deno.test("tools/serve/deno.json maps every import of src/ as the root deno.json does", async () => {
  const used = await sourceImports();
  for (const name of used) {
    assert(serve.imports[name] !== undefined, `tools/serve/deno.json maps ${name}`);
  }
  for (const [name, target] of Object.entries(serve.imports)) {
    assertStrictEquals(target, root.imports[name], `${name}: the same pin as the root`);
    assert(used.has(name), `${name} is imported by src/ (else it need not be installed)`);
  }
});

Deno.test("deno task start and review run with tools/serve/deno.json", () => {
  for (const task of ["start", "review", "migrate"]) {
    assert(root.tasks[task].includes("--config tools/serve/deno.json"), root.tasks[task]);
  }
});
