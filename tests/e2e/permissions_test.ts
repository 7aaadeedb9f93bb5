/**
 * Least privilege enforced by the runtime: a probe run with exactly the flags `deno task start`
 * gives the server cannot reach another loopback port, resolve names, read other files or spawn
 * processes, while it can listen on its own port.
 */
import { assertEquals } from "../support/assert.ts";
import { npmCacheFolder, serverPermissionFlags } from "../../src/cli/permissions.ts";

Deno.test("the server's permission flags deny every contact but its own port", async () => {
  const other = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    () => new Response("reached"),
  );
  const directory = await Deno.makeTempDir({ prefix: "beacon-probe-" });
  try {
    const probePort = 20_000 + Math.floor(Math.random() * 20_000);
    const flags = serverPermissionFlags({
      hostname: "127.0.0.1",
      port: probePort,
      databaseUrl: `file:${directory}/beacon.db`,
      npmCache: await npmCacheFolder(),
      cwd: Deno.cwd(),
    });
    const probe = new URL("../support/permission_probe.ts", import.meta.url).pathname;
    const output = await new Deno.Command(Deno.execPath(), {
      args: ["run", ...flags, probe, `http://127.0.0.1:${other.addr.port}/`, String(probePort)],
      stdout: "piped",
      stderr: "piped",
    }).output();
    const results = JSON.parse(new TextDecoder().decode(output.stdout));
    assertEquals(results, {
      listenOwnPort: "allowed",
      fetchOtherLoopbackPort: "NotCapable",
      connectOtherLoopbackPort: "NotCapable",
      resolveDns: "NotCapable",
      fetchByName: "NotCapable",
      readPasswd: "NotCapable",
      writeTmp: "NotCapable",
      readHome: "NotCapable",
      spawn: "NotCapable",
    });
  } finally {
    await other.shutdown();
    await Deno.remove(directory, { recursive: true });
  }
});

Deno.test("a remote database adds exactly its host to the network allow-list", () => {
  const flags = serverPermissionFlags({
    hostname: "0.0.0.0",
    port: 8000,
    databaseUrl: "libsql://beacon-acme.turso.io",
    npmCache: "/cache/npm",
    cwd: "/srv",
  });
  assertEquals(flags[0], "--allow-net=0.0.0.0:8000,beacon-acme.turso.io");
  assertEquals(flags.some((flag) => flag.startsWith("--allow-ffi")), false);
  assertEquals(flags.some((flag) => flag.startsWith("--allow-write")), false);
});
