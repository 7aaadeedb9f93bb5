/**
 * One version: src/version.ts (what a running server reports), deno.json and package.json (what
 * the package managers publish), and the newest versioned heading of CHANGELOG.md agree.
 */
import { BEACON_VERSION } from "../src/version.ts";
import { assertEquals } from "./support/assert.ts";

const ROOT = new URL("../", import.meta.url);

Deno.test("BEACON_VERSION is the version of deno.json, package.json and the newest CHANGELOG entry", async () => {
  const deno = JSON.parse(await Deno.readTextFile(new URL("deno.json", ROOT)));
  const npm = JSON.parse(await Deno.readTextFile(new URL("package.json", ROOT)));
  const changelog = await Deno.readTextFile(new URL("CHANGELOG.md", ROOT));
  const newest = /^## (\d+\.\d+\.\d+)\b/m.exec(changelog)?.[1];
  assertEquals([deno.version, npm.version, newest], [
    BEACON_VERSION,
    BEACON_VERSION,
    BEACON_VERSION,
  ]);
});
