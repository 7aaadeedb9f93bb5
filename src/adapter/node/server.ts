/**
 * Node server entry (`npm start`; the build writes it to `dist/server.mjs`): serves the Beacon
 * with `node:http` and the adapter of `node.ts`, through the shared start-up and shutdown path
 * (`serve.ts`): same environment variables, same JSON lines, same refusals as every entry.
 *
 * Node lets the entry bound connections, so it does:
 *
 * - `headersTimeout` (10 s): a client must finish its request head within it, or the
 *   connection is closed (408 where a response is still possible): the slowloris bound.
 * - `requestTimeout` (30 s): the whole request, body included (the core's own body deadline,
 *   10 s, normally answers first).
 * - `keepAliveTimeout` (5 s): an idle keep-alive connection is closed after it.
 * - accept errors (`EMFILE`, `ENFILE`): libuv itself accepts and closes connections over the
 *   limit (its "EMFILE trick"); what it passes on reaches the server's `error` event, which is
 *   logged with back-off instead of ending the process (an unhandled `error` event would).
 *
 * @module
 */
import { createServer, type Server } from "node:http";
import type { Beacon } from "../../types.ts";
import type { ServerConfig } from "../../start/config.ts";
import { refuseConnect, toNodeListener } from "./node.ts";
import { acceptErrorLogger, type Listening, runServer } from "../../start/serve.ts";
import { nodeProcess } from "../../start/node_process.ts";
import { NODE_TIMEOUTS } from "../../defaults.ts";

function listen(config: ServerConfig, beacon: Beacon): Promise<Listening> {
  const server: Server = createServer(
    {
      headersTimeout: NODE_TIMEOUTS.headersTimeoutMs,
      requestTimeout: NODE_TIMEOUTS.requestTimeoutMs,
      keepAliveTimeout: NODE_TIMEOUTS.keepAliveTimeoutMs,
      // How often Node checks those deadlines (default 30 s): a slow connection is closed within
      // a second of its deadline.
      connectionsCheckingInterval: 1_000,
    },
    toNodeListener(beacon.fetch, {
      log: config.logRequests ? (entry) => console.log(JSON.stringify(entry)) : undefined,
    }),
  );
  server.on("connect", refuseConnect);
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(config.port, config.hostname, () => {
      server.off("error", reject);
      server.on("error", acceptErrorLogger("node"));
      const address = server.address();
      resolve({
        port: typeof address === "object" && address !== null ? address.port : config.port,
        close: () =>
          new Promise<void>((done) => {
            server.close(() => done()); // in-flight requests finish
            server.closeIdleConnections();
          }),
      });
    });
  });
}

/** Serves the Beacon on Node from the environment until SIGINT / SIGTERM. */
export function main(): Promise<void> {
  return runServer({ ...nodeProcess, listen });
}

await main();
