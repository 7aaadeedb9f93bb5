/**
 * The bare imports of the Beacon's own code (mod.ts and src/), `node:` ones aside: what the
 * package manifests and the serving configuration must provide (tests/runtimes/package_test.ts,
 * tests/runtimes/serve_config_test.ts).
 */
import { ROOT } from "../../scripts/tools.ts";

/** Every bare import of mod.ts and src/, without the folders named in `skip` (such as `review`). */
export async function sourceImports(skip: readonly string[] = []): Promise<Set<string>> {
  const names = await bareImports(["src"], skip);
  for (const name of await bareImports([], [], ["mod.ts"])) names.add(name);
  return names;
}

/**
 * Every bare import (`node:` ones aside) of the .ts files under `folders` (paths from the root,
 * without the folders named in `skip`) and of the single `files`.
 */
export async function bareImports(
  folders: readonly string[],
  skip: readonly string[] = [],
  files: readonly string[] = [],
): Promise<Set<string>> {
  const names = new Set<string>();
  const scan = (text: string) => {
    // Code in documentation examples is not imported by the program.
    const code = text.replace(/^\s*\*.*$/gm, "");
    for (const match of code.matchAll(/\bfrom\s+["']([^."'][^"']*)["']/g)) names.add(match[1]);
    for (const match of code.matchAll(/import\(\s*["']([^."'][^"']*)["']\s*\)/g)) {
      names.add(match[1]);
    }
  };
  const walk = async (path: string) => {
    for await (const entry of Deno.readDir(path)) {
      const child = `${path}/${entry.name}`;
      // Installed packages (bench/sdk/node_modules after a bench run) are not our imports.
      if (entry.isDirectory && !skip.includes(entry.name) && entry.name !== "node_modules") {
        await walk(child);
      } else if (
        !entry.isDirectory && entry.name.endsWith(".ts") && !entry.name.startsWith("generate_")
      ) {
        scan(await Deno.readTextFile(child));
      }
    }
  };
  for (const folder of folders) await walk(`${ROOT}/${folder}`);
  for (const file of files) scan(await Deno.readTextFile(`${ROOT}/${file}`));
  for (const name of names) if (name.startsWith("node:")) names.delete(name);
  return names;
}
