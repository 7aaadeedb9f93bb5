/**
 * `deno task start`: computes the server's narrow permissions from the environment
 * (`permissions.ts`) and runs the Deno entry (`deno.ts`) with them, forwarding SIGINT/SIGTERM and
 * its exit code. This launcher is the only process with broad permissions, and it handles no
 * request.
 *
 * @module
 */
import { configFromEnvironment } from "./config.ts";
import { npmCacheFolder, SERVER_V8_FLAGS, serverPermissionFlags } from "./permissions.ts";

const config = configFromEnvironment((name) => Deno.env.get(name));
const flags = serverPermissionFlags({
  hostname: config.hostname,
  port: config.port,
  databaseUrl: config.options.database?.url ?? "file:data/beacon.db",
  npmCache: await npmCacheFolder(),
  cwd: Deno.cwd(),
});
const entry = new URL("./deno.ts", import.meta.url).pathname;
const server = new Deno.Command(Deno.execPath(), {
  args: ["run", ...flags, ...SERVER_V8_FLAGS, entry],
}).spawn();
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  Deno.addSignalListener(signal, () => server.kill(signal));
}
const status = await server.status;
Deno.exit(status.code);
