/**
 * The review tool's console and CLI on each runtime, for the tests that run one flow on all
 * three: Deno from the sources with the permissions `deno task review` computes, Node from the
 * built package (`dist/beacon-review.mjs`, under Node's permission model), Bun from the sources.
 *
 * @module
 */
import { build } from "../../scripts/build.ts";
import { bunExecutable, ensurePackages, nodeExecutable, ROOT } from "../../scripts/tools.ts";
import {
  review,
  type Run,
  type RunningConsole,
  runTool,
  serveWith,
  startConsole,
} from "./support.ts";

/** How one runtime serves the console and runs the CLI. */
export interface Runtime {
  serve(databaseUrl: string): Promise<RunningConsole>;
  cli(args: string[], env: Record<string, string>): Promise<Run>;
}

/** Each runtime's console and CLI, from the sources (Deno, Bun) or the built package (Node). */
export const RUNTIMES: Record<string, () => Promise<Runtime>> = {
  deno: () =>
    Promise.resolve({
      serve: (url: string) => startConsole(url),
      cli: (args: string[], env: Record<string, string>) =>
        review(args.at(-1)!, args.slice(0, -1), env),
    }),
  node: async () => {
    await ensurePackages();
    await build("package");
    const node = await nodeExecutable();
    const entry = `${ROOT}/dist/beacon-review.mjs`;
    return {
      serve: (url: string) => serveWith(node, [entry, "serve", "--database", url]),
      cli: (args: string[], env: Record<string, string>) =>
        runTool(node, [entry, ...withDatabase(args)], env),
    };
  },
  bun: async () => {
    await ensurePackages();
    const bun = await bunExecutable();
    const entry = `${ROOT}/review/runtime/node.ts`;
    return {
      serve: (url: string) => serveWith(bun, [entry, "serve", "--database", url]),
      cli: (args: string[], env: Record<string, string>) =>
        runTool(bun, [entry, ...withDatabase(args)], env),
    };
  },
};

/** The helper's convention (the database URL last) as a command line. */
function withDatabase(args: string[]): string[] {
  return [...args.slice(0, -1), "--database", args.at(-1)!];
}
