/**
 * Look-alike folding on Deno, Node and Bun: how long review/search/fold.ts takes on the two
 * rows the red team used against the console (63 KB of U+FDFA, 60 KB of emoji), beside the
 * `unhomoglyph` regular expression the fold used before. A benchmark, not a test: it prints
 * figures (bench/README.md, "Search fold", keeps a run's) and asserts nothing about time.
 *
 * Deno and Bun run bench/fold_measure.ts from the sources; Node 20 cannot run TypeScript, so it
 * runs an esbuild bundle of the same file (written beside it and removed after, its packages
 * left to resolve from the repository's node_modules).
 *
 * Run with `deno run -A bench/fold_bench.ts` (`FOLD_ROUNDS=9` for more rounds).
 *
 * @module
 */
import { childEnvironment } from "../scripts/runtimes.ts";
import {
  bunExecutable,
  ensurePackages,
  esbuildExecutable,
  nodeExecutable,
  ROOT,
} from "../scripts/tools.ts";

const MEASURE = `${ROOT}/bench/fold_measure.ts`;

async function run(command: string, args: string[]): Promise<string> {
  const output = await new Deno.Command(command, {
    args,
    cwd: ROOT,
    env: { ...childEnvironment(), FOLD_ROUNDS: Deno.env.get("FOLD_ROUNDS") ?? "5" },
    clearEnv: true,
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (!output.success) {
    throw new Error(`${command} failed: ${new TextDecoder().decode(output.stderr)}`);
  }
  return new TextDecoder().decode(output.stdout);
}

/** The measuring module as one ES module for Node, its packages left as imports. */
async function nodeBundle(): Promise<string> {
  // Beside the source, so that Node resolves its packages from the repository's node_modules.
  const bundle = `${ROOT}/bench/.fold_measure.${Deno.pid}.mjs`;
  await run(await esbuildExecutable(), [
    MEASURE,
    "--bundle",
    "--format=esm",
    "--platform=node",
    "--packages=external",
    `--outfile=${bundle}`,
  ]);
  return bundle;
}

await ensurePackages();
const bundle = await nodeBundle();
try {
  const runtimes: [string, string, string[]][] = [
    // The old fold's package is a test-only import (the server no longer uses it).
    ["deno", Deno.execPath(), ["run", "-A", "--config", `${ROOT}/tools/test/deno.json`, MEASURE]],
    ["node", await nodeExecutable(), [bundle]],
    ["bun", await bunExecutable(), [MEASURE]],
  ];
  console.log("runtime  row            bytes   table fold (ms)  regex fold (ms)");
  for (const [name, command, args] of runtimes) {
    for (const line of (await run(command, args)).trim().split("\n")) {
      const { row, bytes, tableMs, regexMs } = JSON.parse(line);
      console.log(
        `${name.padEnd(8)} ${row.padEnd(14)} ${String(bytes).padStart(6)}  ` +
          `${tableMs.toFixed(1).padStart(15)}  ${regexMs.toFixed(1).padStart(15)}`,
      );
    }
  }
} finally {
  await Deno.remove(bundle);
}
