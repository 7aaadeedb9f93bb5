/**
 * `deno task review`: computes the review tool's narrow permissions from its command line and
 * the environment (permissions.ts) and runs `deno.ts` with them, forwarding SIGINT/SIGTERM and
 * its exit code, and pages the output of `show` and `next` on a terminal (pager.ts). Like the
 * server's launcher (cli/launch.ts), this is the only process with
 * broad permissions, and it reads no database and no submission.
 *
 * @module
 */
import { npmCacheFolder, SERVE_CONFIG } from "../../src/cli/permissions.ts";
import { whenParentExits } from "./parent.ts";
import { needsPaging, pagerPlan } from "./pager.ts";
import { reviewPermissionFlags } from "./permissions.ts";

const flags = reviewPermissionFlags({
  args: Deno.args,
  env: (name) => Deno.env.get(name),
  npmCache: await npmCacheFolder(),
  cwd: Deno.cwd(),
});
const entry = new URL("./deno.ts", import.meta.url).pathname;
// `show` and `next` on a terminal: the output is read here and paged when long (pager.ts).
const plan = pagerPlan(
  Deno.args,
  (name) => Deno.env.get(name),
  Deno.stdout.isTerminal() ? Deno.consoleSize() : undefined,
);
const tool = new Deno.Command(Deno.execPath(), {
  args: ["run", `--config=${SERVE_CONFIG}`, ...flags, entry, ...(plan?.args ?? Deno.args)],
  stdout: plan === undefined ? "inherit" : "piped",
})
  .spawn();
const stop = (signal: Deno.Signal) => {
  try {
    tool.kill(signal);
  } catch {
    // It has ended already (its output is being paged).
  }
};
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  Deno.addSignalListener(signal, () => stop(signal));
}
// `deno task` passes signals on; should the task runner end without doing so, so does the tool.
whenParentExits(() => stop("SIGTERM"));
if (plan === undefined) Deno.exit((await tool.status).code);
const output = new Uint8Array(await new Response(tool.stdout).arrayBuffer());
const { code } = await tool.status;
if (needsPaging(new TextDecoder().decode(output), Deno.consoleSize().rows)) {
  try {
    const pager = new Deno.Command(plan.command[0], {
      args: plan.command.slice(1),
      env: plan.env,
      stdin: "piped",
    }).spawn();
    const writer = pager.stdin.getWriter();
    await writer.write(output).catch(() => {}); // the reader quit before the end (q in less)
    await writer.close().catch(() => {});
    await pager.status;
    Deno.exit(code);
  } catch (error) {
    // A pager that cannot start: the output is written directly instead.
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
}
await Deno.stdout.write(output);
Deno.exit(code);
