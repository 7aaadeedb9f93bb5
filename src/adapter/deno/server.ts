/**
 * Deno entry (`deno task start`, which runs it with narrow permissions through `launch.ts`):
 * serves the core handler with `Deno.serve` through the shared start-up and shutdown path
 * (`serve.ts`), passing the peer address.
 *
 * What `Deno.serve` does not let an entry control (Deno 2.9): it takes no listener, no header
 * deadline, no idle keep-alive timeout and no connection cap, and when accepting fails (`EMFILE`:
 * out of file descriptors) its accept loop ends, the listener closes and the error rejects
 * `finished`. This entry survives that: it logs the error with back-off and listens again on the
 * same address after a pause that doubles up to 5 s. (With `PORT=0` under `deno task start`'s
 * permissions, which name port 0, listening again on the port the kernel chose is refused: the
 * entry keeps trying and logging; use a fixed port in production.) Idle and slow connections are
 * bounded only by what runs in front (docs/deploy.md, "Connections and timeouts").
 *
 * @module
 */
import type { Beacon } from "../../types.ts";
import type { ServerConfig } from "../../start/config.ts";
import { acceptErrorLogger, type Listening, runServer } from "../../start/serve.ts";

/** Pause before listening again after the accept loop failed: doubling, at most 5 s. */
const RELISTEN_FIRST_MS = 100;
const RELISTEN_MAX_MS = 5_000;

function serveOnce(
  config: ServerConfig,
  beacon: Beacon,
  port: number,
): Deno.HttpServer<Deno.NetAddr> {
  return Deno.serve({
    port,
    hostname: config.hostname,
    onListen: () => {},
  }, (request, info) => beacon.fetch(request, { remoteAddress: info.remoteAddr.hostname }));
}

/** The Beacon this process serves, once listening: what the cron job below signs for. */
let served: Beacon | undefined;

/** `Deno.cron`, where the runtime has it (Deno Deploy; the CLI with `--unstable-cron`). */
const cron = (Deno as unknown as {
  cron?: (name: string, schedule: string, handler: () => Promise<void>) => Promise<void>;
}).cron;

// On Deno Deploy an isolate lives only while it serves, so the server's own timer cannot be
// relied on to sign the log: a cron job signs it once a minute (the shortest schedule), as a Cron
// Trigger does on Workers. It is registered at the top level, where Deno Deploy finds cron jobs.
// Elsewhere `Deno.cron` is absent and the timer alone signs (docs/deploy.md).
if (typeof cron === "function") {
  cron("beacon: sign the log", "* * * * *", async () => {
    await served?.signLog().catch(() => {}); // failures are logged by the timer's own signing
  });
}

/** Listens, and listens again whenever the accept loop fails, until closed. */
function listen(config: ServerConfig, beacon: Beacon): Promise<Listening> {
  served = beacon;
  let stopped = false;
  const logAcceptError = acceptErrorLogger("deno");
  let server = serveOnce(config, beacon, config.port); // throws if it cannot bind
  const port = server.addr.port;
  const serving = (async () => {
    let pause = RELISTEN_FIRST_MS;
    while (true) {
      try {
        await server.finished;
        return; // closed on purpose
      } catch (error) {
        logAcceptError(error);
      }
      while (!stopped) {
        await new Promise((resolve) => setTimeout(resolve, pause));
        pause = Math.min(pause * 2, RELISTEN_MAX_MS);
        if (stopped) return;
        try {
          server = serveOnce(config, beacon, port);
          break;
        } catch (error) {
          logAcceptError(error); // still out of descriptors, or the port was taken meanwhile
        }
      }
      if (stopped) return;
    }
  })();
  // A failed accept loop's rejection is handled above; Deno would otherwise also report it as
  // unhandled and exit.
  globalThis.addEventListener("unhandledrejection", (event) => {
    if ((event.reason as Error)?.name === "Http") event.preventDefault();
  });
  return Promise.resolve({
    port,
    async close() {
      stopped = true;
      await server.shutdown().catch(() => {}); // in-flight requests finish
      await serving;
    },
  });
}

await runServer({
  env: (name) => Deno.env.get(name),
  listen,
  onStopSignal(handler) {
    for (const signal of ["SIGINT", "SIGTERM"] as const) Deno.addSignalListener(signal, handler);
  },
  exit: (code) => Deno.exit(code),
});
