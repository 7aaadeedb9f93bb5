/**
 * The review tool on Deno: Deno's standard streams, environment and `Deno.serve` behind the
 * {@linkcode Context} every command takes. `deno task review` (launch_deno.ts) runs this file
 * with the permissions permissions.ts computes; nothing else in the tool touches `Deno`.
 *
 * @module
 */
import { type Context, type ServeConsole, textOutput } from "../io.ts";
import { main } from "../main.ts";
import { whenParentExits } from "./parent.ts";

const STOP_SIGNALS = ["SIGINT", "SIGTERM"] as const;

/** `Deno.serve` until SIGINT or SIGTERM. */
const serve: ServeConsole = (listen, handler) => {
  const stopped = new AbortController();
  const server = Deno.serve(
    { hostname: listen.hostname, port: listen.port, signal: stopped.signal, onListen: () => {} },
    handler,
  );
  const stop = () => stopped.abort();
  // The listeners stay: a signal after the close (the launcher's forwarded one) must find one,
  // or it would end the process by default before main.ts returns its status.
  for (const signal of STOP_SIGNALS) Deno.addSignalListener(signal, stop);
  whenParentExits(stop); // the launcher gone without a signal passed on (parent.ts)
  return Promise.resolve({ port: server.addr.port, finished: server.finished });
};

/**
 * The context of a real run on Deno.
 *
 * @returns Deno's stdout and stderr, the process environment and clock, `Deno.serve`.
 */
export function denoContext(): Context {
  return {
    program: "deno task review",
    stdout: textOutput(Deno.stdout),
    stderr: textOutput(Deno.stderr),
    progress: Deno.stderr.isTerminal() ? Deno.stderr : undefined,
    terminalColumns: Deno.stdout.isTerminal() ? Deno.consoleSize().columns : undefined,
    env: (name) => Deno.env.get(name),
    now: Date.now,
    input: () => Deno.stdin.readable,
    serve,
  };
}

if (import.meta.main) {
  Deno.exit(await main(Deno.args, denoContext()));
}
