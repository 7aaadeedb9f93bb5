/**
 * Every start-up refusal is one clear line on stderr and exit code 2, on every server entry
 * : an invalid variable names the variable and what it accepts, a database URL
 * of an unknown kind names the accepted forms (and never echoes the URL), a busy port says which
 * address is busy, an embedded database file that cannot be created names its path and the
 * operating system's reason, and no credential of a database URL is ever printed. No
 * stack trace. `HOSTNAME` (Docker sets it to the container id) is ignored:
 * the bind address is `BEACON_HOSTNAME`.
 */
import { assert, assertMatch, assertStrictEquals } from "../support/assert.ts";
import { build } from "../../scripts/build.ts";
import { childEnvironment, startServerProcess } from "../../scripts/runtimes.ts";
import { bunExecutable, ensurePackages, nodeExecutable, ROOT } from "../../scripts/tools.ts";

type Entry = { name: string; command: () => Promise<[string, ...string[]]> };

const ENTRIES: Entry[] = [
  { name: "deno task start", command: () => Promise.resolve([Deno.execPath(), "task", "start"]) },
  {
    name: "deno (entry)",
    command: () =>
      Promise.resolve([Deno.execPath(), "run", "-A", `${ROOT}/src/adapter/deno/server.ts`]),
  },
  { name: "node", command: async () => [await nodeExecutable(), await build("package")] },
  {
    name: "bun",
    command: async () => {
      await ensurePackages();
      return [await bunExecutable(), `${ROOT}/src/adapter/bun/server.ts`];
    },
  },
];

async function refusal(entry: Entry, env: Record<string, string>) {
  const [command, ...args] = await entry.command();
  const output = await new Deno.Command(command, {
    args,
    cwd: ROOT,
    clearEnv: true,
    env: { ...childEnvironment(), PORT: "0", BEACON_HOSTNAME: "127.0.0.1", ...env },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const stderr = new TextDecoder().decode(output.stderr);
  // `deno task` prints its own "Task start …" line first; the server's lines follow.
  const lines = stderr.split("\n").filter((line) => line !== "" && !/^\S*Task\S* /.test(line));
  return { code: output.code, lines };
}

/** A plain file, where a database folder would have to be created. */
const BLOCKED = await Deno.makeTempFile({ prefix: "beacon-startup-blocked-" });
globalThis.addEventListener("unload", () => Deno.removeSync(BLOCKED));

type Case = { env: Record<string, string>; expect: RegExp; secret?: string };

const CASES: Case[] = [
  { env: { BEACON_RATE_LIMIT: "lots" }, expect: /^Cannot start: BEACON_RATE_LIMIT must be/ },
  { env: { PORT: "99999" }, expect: /^Cannot start: PORT must be an integer from 0 to 65535$/ },
  {
    env: { BEACON_DATABASE_URL: "postgres://user:hunter2@db.example/beacon" },
    expect: /^Cannot start: BEACON_DATABASE_URL must start with file: .*libsql:\/\/.*https:\/\//,
    secret: "hunter2",
  },
  { env: { BEACON_SIGNING_KEY: "not a key" }, expect: /^Cannot start: BEACON_SIGNING_KEY/ },
  // One parser for both rate limits, whatever is wrong with the value.
  ...["abc", "5", "0/1m"].flatMap((value): Case[] => [
    {
      env: { BEACON_STATUS_RATE_LIMIT: value },
      expect: /^Cannot start: BEACON_STATUS_RATE_LIMIT must be "off" or a count of at least 1 per/,
    },
    {
      env: { BEACON_RATE_LIMIT: value },
      expect: /^Cannot start: BEACON_RATE_LIMIT must be "off" or a count of at least 1 per/,
    },
  ]),
  {
    env: { BEACON_HOSTNAME: "999.1.1.1" },
    expect: /^Cannot start: BEACON_HOSTNAME must be an address of this machine: an IPv4 /,
  },
  {
    // A remote URL that does not parse (its port is out of range), with credentials in three
    // places: none is printed, and the Deno launcher does not crash on it.
    env: {
      BEACON_DATABASE_URL: "libsql://user:SECRET@db.example:99999?authToken=SECRET",
      BEACON_DATABASE_AUTH_TOKEN: "SECRET",
    },
    expect: /^Cannot start: BEACON_DATABASE_URL is not a valid URL: expected <scheme>:\/\/<host>/,
    secret: "SECRET",
  },
  {
    env: { BEACON_DATABASE_URL: "https://user:SECRET@db.example/?authToken=SECRET" },
    expect: /^Cannot start: BEACON_DATABASE_URL must not carry a user name or password; put the/,
    secret: "SECRET",
  },
  {
    // An embedded database whose folder cannot be created (a file is in the way).
    env: { BEACON_DATABASE_URL: `file:${BLOCKED}/beacon.db` },
    expect: new RegExp(
      `^Cannot start: the database file "${BLOCKED}/beacon.db" \\(BEACON_DATABASE_URL\\) ` +
        "cannot be opened or created: a part of the path is not a directory$",
    ),
  },
  {
    // One the operating system refuses: /sys takes no new files, not even from root.
    env: { BEACON_DATABASE_URL: "file:/sys/beacon.db" },
    expect:
      /^Cannot start: the database file "\/sys\/beacon.db" \(BEACON_DATABASE_URL\) cannot be opened or created: (permission denied|not permitted by the server's Deno permissions)/,
  },
  {
    env: { BEACON_DATABASE_URL: "file:/proc/x/beacon.db" },
    expect:
      /^Cannot start: the database file "\/proc\/x\/beacon.db" \(BEACON_DATABASE_URL\) cannot be opened or created: \S/,
  },
  {
    env: { BEACON_CHECKPOINT_INTERVAL: "5 minutes" },
    expect: /^Cannot start: BEACON_CHECKPOINT_INTERVAL must be "off" or a duration/,
  },
  // Durations in lower case only: `5M` could mean minutes or months.
  {
    env: { BEACON_CHECKPOINT_INTERVAL: "5M" },
    expect: /^Cannot start: BEACON_CHECKPOINT_INTERVAL must be .*\(units s, m, h, in lower case\)$/,
  },
  {
    env: { BEACON_RATE_LIMIT: "10/1M" },
    expect: /^Cannot start: BEACON_RATE_LIMIT must be .*\(units s, m, h, d, in lower case\)$/,
  },
  // A public URL whose query, fragment or credentials would be dropped without a word.
  ...[
    "https://beacon.example/?x=1",
    "https://beacon.example/#top",
    "https://user:pw@beacon.example/",
    "https://beacon.example?",
  ].map((url): Case => ({
    env: { BEACON_PUBLIC_URL: url },
    expect:
      /^Cannot start: BEACON_PUBLIC_URL must be an origin with at most a path, like .*: no query, fragment, user name or password$/,
    secret: "pw@",
  })),
  // A port fetch never connects to (the Fetch standard's bad ports): nothing could reach it.
  ...["http://127.0.0.1:1", "libsql://127.0.0.1:6000", "https://127.0.0.1:22/db"].map(
    (url): Case => ({
      env: { BEACON_DATABASE_URL: url },
      expect:
        /^Cannot start: BEACON_DATABASE_URL names port \d+, which fetch never connects to \(a bad port of the Fetch standard, https:\/\/fetch.spec.whatwg.org\/#bad-port\)/,
    }),
  ),
  {
    env: { BEACON_DATABASE_URL: "file:" },
    expect: /^Cannot start: BEACON_DATABASE_URL names no file: give a path after file:, like/,
  },
  {
    env: { BEACON_BODY_TIMEOUT_MS: "10s" },
    expect: /^Cannot start: BEACON_BODY_TIMEOUT_MS must be milliseconds from 100 to 600000$/,
  },
  // The common mistake: a key in standard base64 (`openssl rand -base64 32`), named with its fix.
  {
    env: { BEACON_SIGNING_KEY: "nWGxne/9WmC6hEr0kuwsxERJxWl7MmkZcDusAxyuf2A=" },
    expect:
      /^Cannot start: BEACON_SIGNING_KEY: it looks like standard base64 .*expected 43 base64url characters .*32-byte Ed25519 seed.*replace \+ with -, \/ with _ and drop the trailing =$/,
    secret: "nWGxne/9WmC6hEr0kuwsxERJxWl7MmkZcDusAxyuf2A",
  },
  {
    env: { BEACON_SIGNING_KEY: "shortkey" },
    expect: /^Cannot start: BEACON_SIGNING_KEY: it decodes to 6 bytes; expected 43 base64url/,
    secret: "shortkey",
  },
  {
    env: {
      BEACON_SIGNING_KEY: "nWGxne_9WmC6hEr0kuwsxERJxWl7MmkZcDusAxyuf2A",
      BEACON_SIGNING_KEY_FILE: "/etc/beacon/beacon.key",
    },
    expect: /^Cannot start: BEACON_SIGNING_KEY and BEACON_SIGNING_KEY_FILE are both set; set one$/,
    secret: "nWGxne_9WmC6hEr0kuwsxERJxWl7MmkZcDusAxyuf2A",
  },
  {
    env: { BEACON_SIGNING_KEY_FILE: `${BLOCKED}-missing.key` },
    expect:
      /^Cannot start: the key file ".*-missing\.key" \(BEACON_SIGNING_KEY_FILE\) does not exist; make one with `deno task review key generate --out FILE`/,
  },
  {
    // A standard-base64 seed among the previous keys: the entry is named, never the value.
    env: {
      BEACON_PREVIOUS_SIGNING_KEYS:
        "nWGxne_9WmC6hEr0kuwsxERJxWl7MmkZcDusAxyuf2A,nWGxne/9WmC6hEr0kuwsxERJxWl7MmkZcDusAxyuf2A=",
    },
    expect:
      /^Cannot start: BEACON_PREVIOUS_SIGNING_KEYS \(entry 2\): it looks like standard base64/,
    secret: "nWGxne/9WmC6hEr0kuwsxERJxWl7MmkZcDusAxyuf2A",
  },
  // Megabytes or mebibytes? Only the IEC spelling, and no bound below a few commits' pages.
  ...["80MB", "100KiB"].map((limit): Case => ({
    env: { BEACON_WAL_LIMIT: limit },
    expect: /^Cannot start: BEACON_WAL_LIMIT must be a size from 512KiB to 4GiB like "4MiB"/,
  })),
  // Values the database client would fail on at every connection, or drop without a word.
  ...[
    ["http://127.0.0.1:8080/?tls=maybe", /has tls set to neither "0" nor "1"/],
    ["http://127.0.0.1:8080/?timeout=5", /has "timeout", which the database client does not know/],
    ["libsql://db.example.com?tls=0", /with tls=0 must name the port/],
    ["https://db.example.com/#frag", /must not have a fragment/],
    ["file:data/beacon.db?mode=ro", /takes no parameters after a file: path/],
  ].map(([url, expect]): Case => ({
    env: { BEACON_DATABASE_URL: url as string },
    expect: new RegExp(`^Cannot start: BEACON_DATABASE_URL.*${(expect as RegExp).source}`),
  })),
  {
    env: { BEACON_DATABASE_AUTH_TOKEN: "eyJhbGciOi.payload\n" },
    expect: /^Cannot start: BEACON_DATABASE_AUTH_TOKEN must be printable ASCII .*not shown$/,
    secret: "eyJhbGciOi",
  },
  // Spaces are refused, never trimmed, as in every other variable (U+00A0 included).
  ...[" 10/1m", "10/1m\u00a0"].map((limit): Case => ({
    env: { BEACON_RATE_LIMIT: limit },
    expect: /^Cannot start: BEACON_RATE_LIMIT must be "off" or a count of at least 1 per/,
  })),
  {
    env: { BEACON_PUBLIC_URL: "https://beacon.exam\tple.com" },
    expect: /^Cannot start: BEACON_PUBLIC_URL must not contain a space, tab, newline/,
  },
  // A token with a newline or a space would never match what a scraper sends; a short one can
  // be guessed. Refused, never trimmed, and never shown.
  ...["metrics-token-0123456789\n", " metrics-token-0123456789", "short"].map((token): Case => ({
    env: { BEACON_METRICS_TOKEN: token },
    expect:
      /^Cannot start: BEACON_METRICS_TOKEN must be 16 to 512 characters of .*the value is not shown$/,
    secret: token.trim(),
  })),
];

for (const entry of ENTRIES) {
  Deno.test(`${entry.name}: every start-up refusal is one line on stderr and exit code 2`, async () => {
    for (const { env, expect, secret } of CASES) {
      const { code, lines } = await refusal(entry, env);
      assertStrictEquals(code, 2, `${JSON.stringify(env)}: ${lines.join("\n")}`);
      assertStrictEquals(lines.length, 1, `one line: ${lines.join("\n")}`);
      assertMatch(lines[0], expect);
      if (secret !== undefined) assert(!lines[0].includes(secret), "the URL is not echoed");
    }
  });

  Deno.test(`${entry.name}: a busy port is refused in one line naming the address`, async () => {
    const busy = Deno.listen({ hostname: "127.0.0.1", port: 0 });
    try {
      const port = String(busy.addr.port);
      const directory = await Deno.makeTempDir({ prefix: "beacon-startup-" });
      try {
        const { code, lines } = await refusal(entry, {
          PORT: port,
          BEACON_DATABASE_URL: `file:${directory}/beacon.db`,
        });
        assertStrictEquals(code, 2, lines.join("\n"));
        assertStrictEquals(lines.length, 1, lines.join("\n"));
        assertStrictEquals(
          lines[0],
          `Cannot start: the address 127.0.0.1:${port} is already in use; set PORT (or ` +
            "BEACON_HOSTNAME) to a free one",
        );
      } finally {
        await Deno.remove(directory, { recursive: true }).catch(() => {});
      }
    } finally {
      busy.close();
    }
  });
}

Deno.test("HOSTNAME is ignored: BEACON_HOSTNAME is the bind address", async () => {
  const directory = await Deno.makeTempDir({ prefix: "beacon-startup-" });
  const [command, ...args] = await ENTRIES[2].command();
  // What Docker does: HOSTNAME is the container id. The server listens on BEACON_HOSTNAME.
  const server = await startServerProcess(command, args, {
    PORT: "0",
    HOSTNAME: "0123456789ab",
    BEACON_HOSTNAME: "127.0.0.1",
    BEACON_LOG: "off",
    BEACON_DATABASE_URL: `file:${directory}/beacon.db`,
  });
  try {
    const listening = server.lines.find((line) => line.event === "listening");
    assertStrictEquals(listening?.hostname, "127.0.0.1");
    const response = await fetch(`${server.url}/.well-known/autonomous-agent`);
    assertStrictEquals(response.status, 200);
    await response.body?.cancel();
  } finally {
    await server.stop();
    await Deno.remove(directory, { recursive: true }).catch(() => {});
  }
});

Deno.test("variables that do nothing with a remote database are named once, after listening", async () => {
  const [command, ...args] = await ENTRIES[1].command();
  const closed = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = closed.addr.port;
  closed.close(); // nothing listens there: the database is down, which never stops a start
  const server = await startServerProcess(command, args, {
    PORT: "0",
    BEACON_HOSTNAME: "127.0.0.1",
    BEACON_LOG: "off",
    BEACON_DATABASE_URL: `http://127.0.0.1:${port}`,
    BEACON_WAL_LIMIT: "4MiB",
    BEACON_WRITER_THREAD: "on",
  });
  try {
    // Printed right after the listening line; read it once it arrived (bounded: 10 s).
    for (let i = 0; i < 100 && !server.lines.some((line) => line.event === "warning"); i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const events = server.lines.map((line) => line.event);
    assertStrictEquals(events[0], "listening", "nothing comes before the listening line");
    const warnings = server.lines.filter((line) => line.event === "warning");
    assertStrictEquals(warnings.length, 1);
    assertStrictEquals(
      JSON.stringify(warnings[0].ignored),
      JSON.stringify(["BEACON_WAL_LIMIT", "BEACON_WRITER_THREAD"]),
    );
  } finally {
    await server.stop();
  }
});

Deno.test("deno: a database file the permissions deny names the permission, not a special path", async () => {
  const directory = await Deno.makeTempDir({ prefix: "beacon-startup-" });
  try {
    const output = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "--allow-read",
        "--allow-env",
        "--allow-net=127.0.0.1",
        "--deny-write",
        "--deny-ffi",
        `${ROOT}/src/adapter/deno/server.ts`,
      ],
      cwd: ROOT,
      clearEnv: true,
      env: {
        ...childEnvironment(),
        PORT: "0",
        BEACON_HOSTNAME: "127.0.0.1",
        BEACON_DATABASE_URL: `file:${directory}/beacon.db`,
      },
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).output();
    const lines = new TextDecoder().decode(output.stderr).split("\n").filter((line) => line !== "");
    assertStrictEquals(output.code, 2, lines.join("\n"));
    assertStrictEquals(lines.length, 1, lines.join("\n"));
    assertStrictEquals(
      lines[0],
      `Cannot start: the database file "${directory}/beacon.db" (BEACON_DATABASE_URL) cannot be ` +
        "opened or created: not permitted by the server's Deno permissions (write access is " +
        "not granted: --allow-write)",
    );
  } finally {
    await Deno.remove(directory, { recursive: true });
  }
});

for (const entry of ENTRIES) {
  Deno.test(`${entry.name}: BEACON_HOSTNAME takes IPv6 loopback bare and in brackets`, async () => {
    for (const hostname of ["::1", "[::1]"]) {
      const directory = await Deno.makeTempDir({ prefix: "beacon-startup-ipv6-" });
      const [command, ...args] = await entry.command();
      const server = await startServerProcess(command, args, {
        PORT: "0",
        BEACON_HOSTNAME: hostname,
        BEACON_LOG: "off",
        BEACON_DATABASE_URL: `file:${directory}/beacon.db`,
      });
      try {
        const listening = server.lines.find((line) => line.event === "listening");
        assertStrictEquals(listening?.hostname, "::1", hostname);
        assertMatch(server.url, /^http:\/\/\[::1\]:\d+$/);
        const response = await fetch(`${server.url}/healthz`);
        assertStrictEquals(response.status, 200, hostname);
        await response.body?.cancel();
      } finally {
        await server.stop();
        await Deno.remove(directory, { recursive: true }).catch(() => {});
      }
    }
  });
}
