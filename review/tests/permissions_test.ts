/**
 * The review tool's permission flags (review/permissions.ts): what each command line gets,
 * and that nothing gets subprocesses or an unrelated host. Every CLI test in this folder also
 * runs the tool with exactly these flags (support.ts), which proves they are enough.
 */
import { reviewPermissionFlags } from "../permissions.ts";
import { assert, assertEquals } from "../../tests/support/assert.ts";

function flags(args: string[], env: Record<string, string> = {}): Map<string, string> {
  const list = reviewPermissionFlags({
    args,
    env: (name) => env[name],
    npmCache: "/cache/npm",
    cwd: "/srv/beacon",
  });
  assert(!list.some((flag) => flag.startsWith("--allow-run")), "never subprocesses");
  assert(!list.includes("--allow-all") && !list.includes("-A"));
  assert(list.includes("--no-prompt"));
  return new Map(list.map((flag) => {
    const [name, ...value] = flag.split("=");
    return [name, value.join("=")];
  }));
}

Deno.test("a file database: its folder, the npm cache, no network", () => {
  const list = flags(["list", "--database", "file:/var/lib/beacon/beacon.db"]);
  assert(list.get("--allow-read")!.split(",").includes("/var/lib/beacon"));
  assert(list.get("--allow-read")!.split(",").includes("/cache/npm"));
  assertEquals(list.get("--allow-write"), "/var/lib/beacon");
  assertEquals(list.has("--allow-net"), false);
  assert(list.has("--allow-ffi"));
  assertEquals(
    list.get("--allow-env"),
    "BEACON_DATABASE_URL,BEACON_DATABASE_AUTH_TOKEN,BEACON_SIGNING_KEY,BEACON_REVIEWER,LIBSQL_JS_DEV",
  );
  // The default database, relative to the working directory.
  assertEquals(flags(["show", "AaIx"]).get("--allow-write"), "/srv/beacon/data");
  // The environment's URL, when no --database is given.
  assertEquals(
    flags(["stats"], { BEACON_DATABASE_URL: "file:/tmp/x/b.db" }).get("--allow-write"),
    "/tmp/x",
  );
});

Deno.test("export may write its one file; serve may listen on loopback", () => {
  const exported = flags(["export", "--out", "out/e.ndjson", "--database", "file:/d/b.db"]);
  assertEquals(exported.get("--allow-write"), "/d,/srv/beacon/out/e.ndjson");
  assertEquals(exported.has("--allow-net"), false);
  assertEquals(flags(["serve", "--database", "file:/d/b.db"]).get("--allow-net"), "127.0.0.1");
  assertEquals(
    flags(["serve", "--port", "8089", "--database", "file:/d/b.db"]).get("--allow-net"),
    "127.0.0.1:8089",
  );
  // --out on another command grants nothing.
  assertEquals(
    flags(["list", "--out", "x", "--database", "file:/d/b.db"]).get("--allow-write"),
    "/d",
  );
});

Deno.test("a remote database: that host only, no files to write, no native driver", () => {
  const remote = flags(["list"], { BEACON_DATABASE_URL: "libsql://db.example.org" });
  assertEquals(remote.get("--allow-net"), "db.example.org");
  assertEquals(remote.has("--allow-write"), false);
  assertEquals(remote.has("--allow-ffi"), false);
  assertEquals(
    flags(["serve", "--database", "http://127.0.0.1:8080"]).get("--allow-net"),
    "127.0.0.1:8080,127.0.0.1",
  );
});
