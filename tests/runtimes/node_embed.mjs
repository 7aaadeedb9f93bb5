// An existing Node app that embeds the Beacon under /beacon with the node:http adapter, the way
// docs/deploy.md shows it. Started by node_adapter_test.ts with Node itself (not Deno):
//   node tests/runtimes/node_embed.mjs <file URL of the built dist/ folder> <database folder>
import { createServer } from "node:http";
import process from "node:process";

const { createBeacon } = await import(new URL("mod.mjs", process.argv[2]).href);
const { toNodeListener } = await import(new URL("node.mjs", process.argv[2]).href);
const folder = process.argv[3];

let beacon;
let beaconListener;
const server = createServer((request, response) => {
  if (request.url === "/health") return response.end("ok");
  if (request.url === "/beacon" || request.url.startsWith("/beacon/")) {
    return beaconListener(request, response);
  }
  response.writeHead(404, { "content-type": "text/plain" }).end("not the beacon");
});

server.listen(0, "127.0.0.1", () => {
  const { port } = server.address();
  beacon = createBeacon({
    database: { url: `file:${folder}/beacon.db` },
    publicUrl: `http://127.0.0.1:${port}/beacon`,
    rateLimit: "off",
    bodyTimeoutMs: 500,
  });
  beaconListener = toNodeListener(beacon.fetch, { prefix: "/beacon" });
  console.log(JSON.stringify({ event: "listening", hostname: "127.0.0.1", port }));
});

process.on("SIGTERM", () => {
  server.close(async () => {
    await beacon.close();
    console.log(JSON.stringify({ event: "shutdown" }));
    process.exit(0);
  });
  server.closeAllConnections();
});
