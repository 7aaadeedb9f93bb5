/**
 * The review tool's permission flags (review/runtime/permissions.ts): what each command line gets,
 * and that nothing gets subprocesses or an unrelated host. Every CLI test in this folder also
 * runs the tool with exactly these flags (support.ts), which proves they are enough.
 */
import { reviewPermissionFlags } from "../runtime/permissions.ts";
import { assert, assertEquals } from "../../tests/support/assert.ts";
import { fill, review, tempDatabase, text } from "./support.ts";

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

Deno.test("key commands may read and write the folder of the key file they name, once", () => {
  // A key file is made as a temporary file, linked to its name, and its folder flushed.
  const made = flags(["key", "generate", "--out", "keys/b.key", "--database", "file:/d/b.db"]);
  assertEquals(made.get("--allow-write"), "/d,/srv/beacon/keys");
  assert(made.get("--allow-read")!.split(",").includes("/srv/beacon/keys"));
  // Beside the database: its folder is granted already, and named once (Node 20 aborts on twice).
  const beside = flags(["key", "move-out", "--key-file", "/d/b.key", "--database", "file:/d/b.db"]);
  assertEquals(beside.get("--allow-write"), "/d");
  // Another command's --key-file grants nothing.
  assertEquals(
    flags(["list", "--key-file", "/k/b.key", "--database", "file:/d/b.db"]).get("--allow-write"),
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

Deno.test("an empty --out grants nothing, and export refuses it as a usage error", async () => {
  const exported = flags(["export", "--out", "", "--database", "file:/d/b.db"]);
  assertEquals(exported.get("--allow-write"), "/d");
  const store = await tempDatabase();
  await fill(store, [text("one")]);
  const run = await review(store, ["export", "--out", ""]);
  assertEquals(run.code, 2);
  assert(run.stderr.startsWith("error: Cannot parse --out: give the file to write"), run.stderr);
});

Deno.test("a database URL is decoded and resolved once: the grant is the folder opened", async () => {
  // As written, the path seems to be under /tmp/x; decoded once and resolved, it is /tmp's file.
  const list = flags(["list", "--database", "file:/tmp/x/nx%2F..%2F..%2Fbeacon.db"]);
  assertEquals(list.get("--allow-write"), "/tmp");
  assert(list.get("--allow-read")!.split(",").includes("/tmp"));
  assert(!list.get("--allow-read")!.includes(".."), "no unresolved segment is granted");
  // Decoded once: a %25 stays a percent sign in the file's name, in the folder as written.
  assertEquals(flags(["list", "--database", "file:/d/a%252Fb.db"]).get("--allow-write"), "/d");
  // And the tool, run with exactly those permissions, opens that very file.
  const root = await Deno.makeTempDir();
  await Deno.mkdir(`${root}/x/nx`, { recursive: true });
  await fill({ url: `file:${root}/beacon.db` }, [text("resolved ok")]);
  const run = await review(`file:${root}/x/nx%2F..%2F..%2Fbeacon.db`, ["list"]);
  assertEquals(run.code, 0, run.stderr);
  assert(run.stdout.includes("resolved ok"), run.stdout);
});
