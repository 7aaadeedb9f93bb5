/**
 * Run with the server's exact permission flags by tests/e2e/permissions_test.ts: tries what the
 * server must never do and prints, as one JSON line, which attempts the runtime refused.
 */
const target = Deno.args[0];
const port = Number(Deno.args[1]);

async function attempt(run: () => Promise<unknown>): Promise<string> {
  try {
    await run();
    return "allowed";
  } catch (error) {
    return (error as Error).name;
  }
}

const results = {
  listenOwnPort: await attempt(() => {
    const listener = Deno.listen({ hostname: "127.0.0.1", port });
    listener.close();
    return Promise.resolve();
  }),
  fetchOtherLoopbackPort: await attempt(() => fetch(target).then((r) => r.body?.cancel())),
  connectOtherLoopbackPort: await attempt(async () =>
    (await Deno.connect({ hostname: "127.0.0.1", port: Number(new URL(target).port) })).close()
  ),
  resolveDns: await attempt(() => Deno.resolveDns("example.com", "A")),
  fetchByName: await attempt(() => fetch("http://localhost:8080/")),
  readPasswd: await attempt(() => Deno.readTextFile("/etc/passwd")),
  writeTmp: await attempt(() => Deno.writeTextFile("/tmp/beacon-probe", "x")),
  readHome: await attempt(() => Promise.resolve(Deno.env.get("HOME"))),
  spawn: await attempt(() => new Deno.Command("true").output()),
};
console.log(JSON.stringify(results));
