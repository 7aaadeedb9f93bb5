/**
 * `deno task review`: computes the review tool's narrow permissions from its command line and
 * the environment (permissions.ts) and runs `deno.ts` with them, forwarding SIGINT/SIGTERM and
 * its exit code. Like the server's launcher (cli/launch.ts), this is the only process with
 * broad permissions, and it reads no database and no submission.
 *
 * @module
 */
import { npmCacheFolder, SERVE_CONFIG } from "../../src/cli/permissions.ts";
import { whenParentExits } from "./parent.ts";
import { reviewPermissionFlags } from "./permissions.ts";

const flags = reviewPermissionFlags({
  args: Deno.args,
  env: (name) => Deno.env.get(name),
  npmCache: await npmCacheFolder(),
  cwd: Deno.cwd(),
});
const entry = new URL("./deno.ts", import.meta.url).pathname;
const tool = new Deno.Command(Deno.execPath(), {
  args: ["run", `--config=${SERVE_CONFIG}`, ...flags, entry, ...Deno.args],
})
  .spawn();
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  Deno.addSignalListener(signal, () => tool.kill(signal));
}
// `deno task` passes signals on; should the task runner end without doing so, so does the tool.
whenParentExits(() => tool.kill("SIGTERM"));
Deno.exit((await tool.status).code);
