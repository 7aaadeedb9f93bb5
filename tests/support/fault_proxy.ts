/**
 * A loopback TCP proxy that injects network faults between the Beacon and a real server (sqld):
 * it forwards bytes unchanged and can delay them, stall them (connections stay open, nothing
 * moves) or cut every connection. It speaks no protocol of its own: it is a piece of cable, not a
 * fake server.
 *
 * @example
 * ```ts ignore
 * import { startFaultProxy } from "./tests/support/fault_proxy.ts";
 * import { startSqld } from "./tests/support/sqld.ts";
 *
 * const sqld = await startSqld();
 * const proxy = startFaultProxy(sqld.port);
 * proxy.setDelay(300); // every chunk waits 300 ms, both ways
 * proxy.stall();       // nothing moves until resume()
 * proxy.cut();         // every open connection is closed at once
 * proxy.hold();        // bytes towards the server are held, even after the client gives up …
 * await proxy.deliver(); // … and delivered late; resolves once the server answered them
 * proxy.dieOnNextAnswer(); // the server's next answer never arrives: the proxy goes down instead
 * await proxy.close();
 * ```
 *
 * @module
 */

/** A running proxy. */
export interface FaultProxy {
  /** `http://127.0.0.1:<port>`: the URL to give the client instead of the server's. */
  readonly url: string;
  /** The proxy's port. */
  readonly port: number;
  /** Every chunk, in both directions, waits `ms` before it is forwarded (0: none). */
  setDelay(ms: number): void;
  /** Holds every chunk (and new connections' first bytes) until {@linkcode resume}. */
  stall(): void;
  /** Ends a {@linkcode stall}. */
  resume(): void;
  /**
   * Holds every chunk on its way to the server until {@linkcode deliver}. Unlike a stall, a
   * connection that held a chunk keeps its server side open when the client closes its own: the
   * held bytes still reach the server, as from a middlebox that buffered a request its sender
   * already gave up on.
   */
  hold(): void;
  /**
   * Ends a {@linkcode hold}: writes the held chunks to the server and resolves, with the number of
   * such connections, once the server answered (or closed) each of them.
   */
  deliver(): Promise<number>;
  /** Closes every open connection now (new ones are still accepted). */
  cut(): void;
  /** While on, new connections are closed at once (as if the server were down). */
  refuse(on: boolean): void;
  /**
   * The next chunk the server answers with is dropped, and the proxy goes down at that moment:
   * every connection closed and the port no longer listening (a new connection is refused). To
   * the client, a database that ran its request and died before answering.
   */
  dieOnNextAnswer(): void;
  /** Resolves once {@linkcode dieOnNextAnswer} went down. */
  died(): Promise<void>;
  /** Connections open right now. */
  open(): number;
  /**
   * Starts recording what clients send toward the server; the function returns every byte sent
   * since, as Latin-1 text (HTTP heads and bodies). Nothing is kept before this is called.
   */
  recordToServer(): () => string;
  /** Stops listening and closes every connection. Idempotent. */
  close(): Promise<void>;
}

/** Starts a proxy on 127.0.0.1 (a free port, or `listenPort`) to `127.0.0.1:targetPort`. */
export function startFaultProxy(targetPort: number, listenPort = 0): FaultProxy {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: listenPort });
  const connections = new Set<Deno.Conn>();
  let delayMs = 0;
  let refusing = false;
  let gate: PromiseWithResolvers<void> | undefined;
  let holding: PromiseWithResolvers<void> | undefined;
  /** Connections that held a chunk, each settled once the server answered or closed it. */
  const held = new Map<Deno.Conn, PromiseWithResolvers<void>>();
  /** Armed by `dieOnNextAnswer`; resolved when the proxy went down. */
  let dying: PromiseWithResolvers<void> | undefined;

  const closeQuietly = (connection: Deno.Conn) => {
    connections.delete(connection);
    try {
      connection.close();
    } catch {
      // already closed
    }
  };

  /**
   * Copies `from` to `to` until either side ends, honouring delay, stall and hold (`server` is the
   * server's side of this pair: where held chunks go, and what stays open after a hold).
   */
  let toServer: string[] | undefined;
  const latin1 = new TextDecoder("latin1");
  const pump = async (from: Deno.Conn, to: Deno.Conn, server: Deno.Conn) => {
    const buffer = new Uint8Array(64 * 1024);
    try {
      while (true) {
        const n = await from.read(buffer);
        if (n === null) break;
        const chunk = buffer.slice(0, n);
        if (to === server) toServer?.push(latin1.decode(chunk));
        if (from === server && dying !== undefined) {
          // The answer is dropped and the proxy goes down: nothing more reaches the client.
          goDown();
          return;
        }
        // The server answered a held request (one sent before the hold does not count).
        if (from === server && holding === undefined) held.get(server)?.resolve();
        if (holding !== undefined && to === server) {
          if (!held.has(server)) held.set(server, Promise.withResolvers<void>());
          await holding.promise;
        }
        if (gate !== undefined) await gate.promise;
        if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
        let written = 0;
        while (written < chunk.length) written += await to.write(chunk.subarray(written));
      }
    } catch {
      // either side closed or was cut
    } finally {
      closeQuietly(from);
      // A held request's server side stays open until the server answers it (the other pump
      // then finds the client gone and closes both).
      if (!(to === server && held.has(server))) closeQuietly(to);
      if (from === server) held.get(server)?.resolve(); // closed by the server
    }
  };

  const accepting = (async () => {
    try {
      for await (const client of listener) {
        if (refusing) {
          closeQuietly(client);
          continue;
        }
        connections.add(client);
        Deno.connect({ hostname: "127.0.0.1", port: targetPort }).then((server) => {
          if (!connections.has(client)) return closeQuietly(server); // cut meanwhile
          connections.add(server);
          void pump(client, server, server);
          void pump(server, client, server);
        }, () => closeQuietly(client)); // the server is down: the client sees a closed socket
      }
    } catch {
      // the listener was closed
    }
  })();

  const port = (listener.addr as Deno.NetAddr).port;
  let closed: Promise<void> | undefined;
  const goDown = () => {
    try {
      listener.close();
    } catch {
      // already closed
    }
    for (const connection of [...connections]) closeQuietly(connection);
    dying?.resolve();
  };
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    setDelay(ms) {
      delayMs = ms;
    },
    stall() {
      gate ??= Promise.withResolvers<void>();
    },
    resume() {
      gate?.resolve();
      gate = undefined;
    },
    hold() {
      holding ??= Promise.withResolvers<void>();
    },
    async deliver() {
      const answered = [...held.values()].map((settled) => settled.promise);
      holding?.resolve();
      holding = undefined;
      await Promise.all(answered);
      held.clear();
      return answered.length;
    },
    cut() {
      for (const connection of [...connections]) closeQuietly(connection);
    },
    refuse(on) {
      refusing = on;
    },
    dieOnNextAnswer() {
      dying ??= Promise.withResolvers<void>();
    },
    died: () => dying?.promise ?? Promise.resolve(),
    open: () => connections.size,
    recordToServer: () => {
      const recorded: string[] = toServer = [];
      return () => recorded.join("");
    },
    close() {
      closed ??= (async () => {
        try {
          listener.close();
        } catch {
          // already closed
        }
        gate?.resolve();
        holding?.resolve();
        for (const connection of [...connections]) closeQuietly(connection);
        await accepting;
      })();
      return closed;
    },
  };
}
