/**
 * A loopback TCP proxy that can black-hole the connections open at one moment: from
 * {@linkcode BlackHoleProxy.blackHole} on, those connections stay open and nothing more moves on
 * them in either direction (not even a close), while connections made afterwards work normally
 * and the server behind stays healthy. That is what a NAT mapping that timed out, a failed
 * load-balancer node or a half-open TCP connection does to a client's pooled connections
 * (docs/deploy.md, "The database connection: deadlines, dark sockets, and what the answers
 * mean"). Like `fault_proxy.ts` it speaks no protocol: it is a piece of cable.
 *
 * @example
 * ```ts ignore
 * import { startBlackHoleProxy } from "./tests/support/black_hole_proxy.ts";
 * import { startSqld } from "./tests/support/sqld.ts";
 *
 * const sqld = await startSqld();
 * const proxy = startBlackHoleProxy(sqld.port);
 * proxy.blackHole(); // every connection open now goes dark; new ones are forwarded
 * await proxy.close();
 * ```
 *
 * @module
 */

/** A running proxy. */
export interface BlackHoleProxy {
  /** `http://127.0.0.1:<port>`: the URL to give the client instead of the server's. */
  readonly url: string;
  /**
   * Every connection open now stops forwarding, for good; returns how many went dark. With
   * `newOnesToo`, connections accepted from now on go dark as soon as they are accepted.
   */
  blackHole(newOnesToo?: boolean): number;
  /** Stops darkening new connections (after `blackHole(true)`); dark ones stay dark. */
  light(): void;
  /** Connections accepted so far. */
  accepted(): number;
  /** Stops listening and closes every connection, dark ones included. Idempotent. */
  close(): Promise<void>;
}

interface Link {
  readonly client: Deno.Conn;
  server?: Deno.Conn;
  dark: boolean;
}

/** Starts a proxy on 127.0.0.1 (a free port) to `127.0.0.1:targetPort`. */
export function startBlackHoleProxy(targetPort: number): BlackHoleProxy {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const links = new Set<Link>();
  let darkenNew = false;
  let accepted = 0;
  let closing = false;

  const closeQuietly = (connection: Deno.Conn | undefined) => {
    try {
      connection?.close();
    } catch {
      // already closed
    }
  };
  const end = (link: Link) => {
    links.delete(link);
    closeQuietly(link.client);
    closeQuietly(link.server);
  };

  /** Copies `from` to `to`; a dark link stops moving bytes and never closes on its own. */
  const pump = async (link: Link, from: Deno.Conn, to: Deno.Conn) => {
    const buffer = new Uint8Array(64 * 1024);
    try {
      while (!link.dark) {
        const n = await from.read(buffer);
        if (n === null || link.dark) break; // bytes read after dark are swallowed
        let written = 0;
        while (written < n) written += await to.write(buffer.subarray(written, n));
      }
    } catch {
      // a side closed
    }
    // A dark link keeps both sockets open, unanswered, until the proxy closes.
    if (link.dark && !closing) await closed();
    end(link);
  };

  let whenClosed: PromiseWithResolvers<void> | undefined;
  const closed = () => (whenClosed ??= Promise.withResolvers<void>()).promise;

  const accepting = (async () => {
    try {
      for await (const client of listener) {
        accepted++;
        const link: Link = { client, dark: darkenNew };
        links.add(link);
        if (link.dark) continue; // accepted, never answered
        Deno.connect({ hostname: "127.0.0.1", port: targetPort }).then((server) => {
          if (!links.has(link)) return closeQuietly(server);
          link.server = server;
          void pump(link, client, server);
          void pump(link, server, client);
        }, () => end(link));
      }
    } catch {
      // the listener was closed
    }
  })();

  const port = (listener.addr as Deno.NetAddr).port;
  let closingDone: Promise<void> | undefined;
  return {
    url: `http://127.0.0.1:${port}`,
    blackHole(newOnesToo = false) {
      darkenNew = newOnesToo;
      for (const link of links) link.dark = true;
      return links.size;
    },
    light() {
      darkenNew = false;
    },
    accepted: () => accepted,
    close() {
      closingDone ??= (async () => {
        closing = true;
        whenClosed?.resolve();
        closeQuietly(listener as unknown as Deno.Conn);
        for (const link of [...links]) end(link);
        await accepting;
      })();
      return closingDone;
    },
  };
}
