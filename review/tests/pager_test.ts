/**
 * `show` pages a long submission through `PAGER` on a terminal, and never when its output is
 * not a terminal (review/runtime/pager.ts), through each launcher: `deno task review`, Node's
 * `beacon-review` and the entry `bun run review` runs on Bun. The terminal is a real
 * pseudo-terminal (util-linux `script`, 20 rows); the pager is a script that keeps what it is
 * given in a file, so what went through it can be read back.
 */
import { build } from "../../scripts/build.ts";
import { bunExecutable, ensurePackages, nodeExecutable, ROOT } from "../../scripts/tools.ts";
import { assert, assertStrictEquals } from "../../tests/support/assert.ts";
import { fill, runTool, tempDatabase, text } from "./support.ts";

const hasScript = await Deno.stat("/usr/bin/script").then(() => true, () => false);
if (!hasScript) console.log("SKIPPED the terminal half: /usr/bin/script is not installed");

/** Each way to run the tool, as a command line before the tool's own arguments. */
async function launchers(): Promise<[string, string[]][]> {
  await ensurePackages();
  await build("package");
  return [
    ["deno task review", [Deno.execPath(), "task", "review"]],
    ["beacon-review (Node)", [await nodeExecutable(), `${ROOT}/dist/beacon-review.mjs`]],
    ["Bun (launch.mjs, what bun run review runs)", [
      await bunExecutable(),
      `${ROOT}/review/runtime/launch.mjs`,
    ]],
  ];
}

/** A shell word. */
const quote = (word: string) => `'${word.replaceAll("'", `'"'"'`)}'`;

Deno.test("show pages long content through PAGER on a terminal, and never into a pipe", async () => {
  const database = await tempDatabase();
  const folder = await Deno.makeTempDir({ prefix: "beacon-pager-" });
  try {
    const long = Array.from({ length: 400 }, (_, i) => `line ${i} of a long submission`)
      .join("\n");
    const [longOne, shortOne] = await fill(database, [text(long), text("a short one")]);
    const pager = `${folder}/pager`;
    const kept = `${folder}/paged.txt`;
    await Deno.writeTextFile(pager, `#!/bin/sh\ncat > ${quote(kept)}\n`);
    await Deno.chmod(pager, 0o755);
    const env = { PAGER: pager };
    for (const [name, launcher] of await launchers()) {
      const show = (id: unknown) => ["show", String(id), "--database", database.url];
      // Into a pipe: everything on stdout, the pager never started.
      const piped = await runTool(launcher[0], [...launcher.slice(1), ...show(longOne.id)], env);
      assertStrictEquals(piped.code, 0, `${name}: ${piped.stderr}`);
      assert(piped.stdout.includes("line 399 of a long submission"), `${name}: all of it`);
      assert(!await Deno.stat(kept).then(() => true, () => false), `${name}: no pager`);
      if (!hasScript) continue;
      // On a terminal of 20 rows: the long one goes through the pager, the short one does not.
      const onTerminal = (id: unknown) =>
        runTool("/usr/bin/script", [
          "-qec",
          `stty rows 20 cols 100; exec ${[...launcher, ...show(id)].map(quote).join(" ")}`,
          "/dev/null",
        ], env);
      const paged = await onTerminal(longOne.id);
      assertStrictEquals(paged.code, 0, `${name}: ${paged.stdout}`);
      const through = await Deno.readTextFile(kept);
      assert(through.includes("line 399 of a long submission"), `${name}: paged`);
      assert(!paged.stdout.includes("line 399"), `${name}: not also written to the terminal`);
      await Deno.remove(kept);
      const short = await onTerminal(shortOne.id);
      assertStrictEquals(short.code, 0, `${name}: ${short.stdout}`);
      assert(short.stdout.includes("a short one"), `${name}: a short one is written directly`);
      assert(!await Deno.stat(kept).then(() => true, () => false), `${name}: short, no pager`);
    }
  } finally {
    await Deno.remove(folder, { recursive: true });
    await Deno.remove(database.directory, { recursive: true });
  }
});
