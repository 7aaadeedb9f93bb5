/**
 * Deno entry (`deno task start`; also the Deno Deploy entry): reads the environment, serves the
 * core handler with `Deno.serve`, passes the peer address, logs one JSON line per request, and
 * shuts down cleanly on SIGINT / SIGTERM (in-flight requests finish, then the database closes).
 *
 * @module
 */
import { beaconForServer, closeAndReport, configFromEnvironment } from "./config.ts";

const config = configFromEnvironment((name) => Deno.env.get(name));
const beacon = beaconForServer(config);
await beacon.ready();

const server = Deno.serve({
  port: config.port,
  hostname: config.hostname,
  onListen: ({ hostname, port }) =>
    console.log(JSON.stringify({ event: "listening", hostname, port })),
}, (request, info) => {
  const address = info.remoteAddr.transport === "tcp" ? info.remoteAddr.hostname : undefined;
  return beacon.fetch(request, { remoteAddress: address });
});

let stopping = false;
async function stop(): Promise<void> {
  if (stopping) return;
  stopping = true;
  await server.shutdown(); // stops accepting, lets in-flight requests finish
  await closeAndReport(beacon);
  Deno.exit(0);
}
for (const signal of ["SIGINT", "SIGTERM"] as const) Deno.addSignalListener(signal, stop);
