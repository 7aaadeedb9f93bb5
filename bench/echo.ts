/**
 * The limit: a bare `Deno.serve` handler that reads the JSON body and answers a small JSON.
 *
 * bench/run.ts loads it with the same requests as the Beacon, so its throughput, latency and RSS
 * are the ceiling the Beacon is measured against (same runtime, same HTTP stack, no storage).
 * It parses the body because the Beacon must too; answering without reading it would measure
 * less than any real intake could do.
 *
 * Run: `PORT=8125 HOSTNAME=127.0.0.1 deno run --allow-net --allow-env bench/echo.ts`
 *
 * With `ECHO_MODE=refuse413` it instead answers every POST with 413 without reading the body
 * (cancelling it, the cheapest correct way on Deno): the ceiling for the Beacon's 413 scenario,
 * where the client still has to push a 70 KB body through loopback for every request.
 *
 * @module
 */

const port = Number(Deno.env.get("PORT") ?? "8125");
const refuse413 = Deno.env.get("ECHO_MODE") === "refuse413";
const hostname = Deno.env.get("HOSTNAME") ?? "127.0.0.1";

const ok = JSON.stringify({ ok: true });
const bad = JSON.stringify({ ok: false });
const tooLarge = JSON.stringify({ error: { code: "too_large" } });
const jsonHeaders = { "content-type": "application/json" };

const server = Deno.serve({
  port,
  hostname,
  // The harness reads stdout for one machine-readable line; the default banner is noise there.
  onListen: (addr) => console.log(JSON.stringify({ event: "listening", ...addr })),
}, async (request) => {
  if (request.method !== "POST") return new Response(ok, { headers: jsonHeaders });
  if (refuse413) {
    await request.body?.cancel();
    return new Response(tooLarge, { status: 413, headers: jsonHeaders });
  }
  try {
    await request.json();
  } catch {
    // Non-JSON bodies (bench/upload_memory.ts sends plain text) are refused, not crashed on.
    return new Response(bad, { status: 400, headers: jsonHeaders });
  }
  return new Response(ok, { headers: jsonHeaders });
});

// Exit on SIGTERM after in-flight requests finish, as the Beacon does, so both stop alike.
Deno.addSignalListener("SIGTERM", () => {
  server.shutdown().then(() => Deno.exit(0));
});
