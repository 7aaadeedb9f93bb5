// Checks that mod.ts, src/ and review/ (its tests aside) use only erasable TypeScript syntax (TypeScript's
// `erasableSyntaxOnly`: no enums, namespaces, parameter properties or other syntax with run-time
// semantics), so Node ≥ 22.18 could run the sources by stripping types. Uses the TypeScript
// compiler from tools/build/ (installed on first use). Prints each offending place and exits 1,
// or prints nothing and exits 0.
//
//   node scripts/check_erasable.mjs
import { readdirSync } from "node:fs";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { createRequire } from "node:module";
import { BUILD_TOOLS, ensureBuildTools } from "./build_tools.mjs";

ensureBuildTools();
const ts = createRequire(`${BUILD_TOOLS}/package.json`)("typescript");

const root = fileURLToPath(new URL("..", import.meta.url));
const files = [`${root}mod.ts`];
const walk = (folder) => {
  for (const entry of readdirSync(folder, { withFileTypes: true })) {
    const path = `${folder}/${entry.name}`;
    if (entry.isDirectory()) {
      if (entry.name !== "tests") walk(path); // review/tests/ runs on Deno only
    } else if (entry.name.endsWith(".ts")) files.push(path);
  }
};
walk(`${root}src`);
walk(`${root}review`);

// Only the syntax matters here, not types: nothing is resolved, and only the diagnostic
// "This syntax is not allowed when 'erasableSyntaxOnly' is enabled" (TS1294) counts.
const program = ts.createProgram(files, {
  erasableSyntaxOnly: true,
  noEmit: true,
  noResolve: true,
  noLib: true,
  allowImportingTsExtensions: true,
  target: ts.ScriptTarget.ESNext,
  module: ts.ModuleKind.ESNext,
});
const offending = ts.getPreEmitDiagnostics(program).filter((d) => d.code === 1294);
for (const diagnostic of offending) {
  const { line, character } = diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start);
  const where = `${diagnostic.file.fileName.slice(root.length)}:${line + 1}:${character + 1}`;
  console.error(`${where}: ${ts.flattenDiagnosticMessageText(diagnostic.messageText, " ")}`);
}
process.exit(offending.length === 0 ? 0 : 1);
