/**
 * `deno task start`: computes the server's narrow permissions from the environment
 * (`permissions.ts`) and runs the Deno entry (`src/adapter/deno/server.ts`) with them,
 * forwarding SIGINT/SIGTERM and its exit code. This launcher is the only process with broad permissions, and it handles no
 * request.
 *
 * @module
 */
import { configFromEnvironment, type ServerConfig } from "../start/config.ts";
import { DEFAULT_DATABASE_URL } from "../defaults.ts";
import { npmCacheFolder, SERVER_V8_FLAGS, serverPermissionFlags } from "./permissions.ts";
import { refusalMessage } from "../start/serve.ts";

let config: ServerConfig;
try {
  config = configFromEnvironment((name) => Deno.env.get(name));
} catch (error) {
  console.error(refusalMessage(error));
  Deno.exit(2);
}
const flags = serverPermissionFlags({
  hostname: config.hostname,
  port: config.port,
  databaseUrl: config.options.database?.url ?? DEFAULT_DATABASE_URL,
  npmCache: await npmCacheFolder(),
  cwd: Deno.cwd(),
  signingKeyFile: config.signingKeyFile,
});
const entry = new URL("../adapter/deno/server.ts", import.meta.url).pathname;
const server = new Deno.Command(Deno.execPath(), {
  args: ["run", ...flags, ...SERVER_V8_FLAGS, entry],
}).spawn();
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  Deno.addSignalListener(signal, () => server.kill(signal));
}
const status = await server.status;
Deno.exit(status.code);
