/**
 * `deno task test` on a machine without Node.js and npm stops in its first step with one line
 * naming what is missing and where to get it (scripts/preflight.ts), instead of failing dozens of
 * tests one by one. The machine is made real: a PATH holding only `deno`.
 */
import { assert, assertMatch, assertStrictEquals } from "../support/assert.ts";
import { childEnvironment } from "../../scripts/runtimes.ts";
import { ROOT } from "../../scripts/tools.ts";

Deno.test("deno task test without node and npm: one line naming them, a non-zero exit, no test run", async () => {
  const bin = await Deno.makeTempDir({ prefix: "beacon-deno-only-" });
  try {
    await Deno.symlink(Deno.execPath(), `${bin}/deno`);
    const output = await new Deno.Command(`${bin}/deno`, {
      args: ["task", "test"],
      cwd: ROOT,
      clearEnv: true,
      env: { ...childEnvironment(), PATH: bin, NO_COLOR: "1" },
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).output();
    const stdout = new TextDecoder().decode(output.stdout);
    const stderr = new TextDecoder().decode(output.stderr);
    assert(output.code !== 0, "the task fails");
    assertStrictEquals(stdout, "", "no test ran");
    // `deno task` names the task it runs first; the preflight's line follows.
    const lines = stderr.split("\n").filter((line) => line !== "" && !/^Task test /.test(line));
    assertStrictEquals(lines.length, 1, stderr);
    assertMatch(
      lines[0],
      /^Cannot run the tests: they need Node\.js \(no node on the PATH\) and npm \(no npm on the PATH\); install Node\.js 20\.19\+ with npm \(https:\/\/nodejs\.org\/en\/download\)/,
    );
  } finally {
    await Deno.remove(bin, { recursive: true });
  }
});

Deno.test("the preflight passes, silently, where Node.js and npm are installed", async () => {
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-run", `${ROOT}/scripts/preflight.ts`],
    clearEnv: true,
    env: childEnvironment(),
    stdout: "piped",
    stderr: "piped",
  }).output();
  assertStrictEquals(output.code, 0, new TextDecoder().decode(output.stderr));
  assertStrictEquals(new TextDecoder().decode(output.stderr), "");
});
