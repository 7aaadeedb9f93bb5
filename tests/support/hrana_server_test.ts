/**
 * Tests of the Hrana-over-HTTP test server (test scaffolding, see `hrana_server.ts`). Everything
 * the Beacon relies on is driven through the real `@libsql/client/web` client; only what that
 * client cannot express (stale batons, `describe`, Hrana 3 requests, cursors) uses raw `fetch`.
 */

import { type Client, type Config, createClient, LibsqlError } from "@libsql/client/web";
import { assert, assertEquals, assertMatch, assertStrictEquals } from "./assert.ts";
import { type HranaServer, type HranaServerOptions, startHranaServer } from "./hrana_server.ts";

interface Harness {
  server: HranaServer;
  /** A client of the server; closed when the test ends. */
  connect(config?: Partial<Config>): Client;
}

async function withServer(
  fn: (h: Harness) => Promise<void>,
  options: Partial<HranaServerOptions> = {},
): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "beacon_hrana_" });
  const server = await startHranaServer({ path: `${dir}/beacon.db`, ...options });
  const clients: Client[] = [];
  try {
    await fn({
      server,
      connect(config = {}) {
        const client = createClient({ url: server.url, ...config });
        clients.push(client);
        return client;
      },
    });
  } finally {
    for (const client of clients) client.close();
    await server.close();
    await Deno.remove(dir, { recursive: true });
  }
}

/** Awaits a promise that must reject, and returns the error. */
async function failure(promise: Promise<unknown>): Promise<LibsqlError> {
  try {
    await promise;
  } catch (e) {
    assert(e instanceof LibsqlError, `expected a LibsqlError, got ${e}`);
    return e;
  }
  throw new Error("expected the promise to reject");
}

interface RawResponse {
  status: number;
  contentType: string | null;
  // deno-lint-ignore no-explicit-any
  body: any;
}

/** One raw `POST /v{version}/pipeline` (or any path) with a JSON body. */
async function post(server: HranaServer, path: string, body: unknown): Promise<RawResponse> {
  const response = await fetch(`${server.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  const contentType = response.headers.get("content-type");
  const raw = await response.text();
  return {
    status: response.status,
    contentType,
    body: contentType === "application/json" ? JSON.parse(raw) : raw,
  };
}

const exec = (sql: string, args: unknown[] = []) => ({
  type: "execute",
  stmt: { sql, args, want_rows: true },
});

Deno.test("hrana server: listens on 127.0.0.1, probes v2/v3, refuses protobuf", async () => {
  await withServer(async ({ server }) => {
    assertMatch(server.url, /^http:\/\/127\.0\.0\.1:[0-9]+$/);
    for (const [path, status] of [["/v2", 200], ["/v3", 200], ["/v3-protobuf", 404]] as const) {
      const response = await fetch(`${server.url}${path}`);
      await response.body?.cancel();
      assertStrictEquals(response.status, status, path);
    }
    const proto = await post(server, "/v3-protobuf/pipeline", {});
    assertStrictEquals(proto.status, 404);
    assertEquals(server.stats(), { pipelines: 0, streamsOpen: 0 });
  });
});

Deno.test("hrana server: execute with positional args round-trips every value type", async () => {
  await withServer(async ({ connect, server }) => {
    const client = connect({ intMode: "bigint" });
    await client.execute(
      "CREATE TABLE v (id INTEGER PRIMARY KEY, n, i INTEGER, f REAL, t TEXT, b BLOB)",
    );
    const blob = new Uint8Array([0, 1, 2, 250, 255]);
    const big = 2n ** 62n + 12345n; // > 2^53: only exact as a bigint
    const text = "héllo, 世界 — 🚀 end";
    const inserted = await client.execute({
      sql: "INSERT INTO v (n, i, f, t, b) VALUES (?, ?, ?, ?, ?)",
      args: [null, big, 1.5, text, blob],
    });
    assertStrictEquals(inserted.rowsAffected, 1);
    assertStrictEquals(inserted.lastInsertRowid, 1n);
    await client.execute({
      sql: "INSERT INTO v (n, i, f, t, b) VALUES (?, ?, ?, ?, ?)",
      args: [null, -(2n ** 63n), -0.25, "", new Uint8Array()],
    });
    const rs = await client.execute(
      "SELECT n, i, f, t, b, typeof(i) AS ti, typeof(f) AS tf, 2 + 3 AS five FROM v ORDER BY id",
    );
    assertEquals(rs.columns, ["n", "i", "f", "t", "b", "ti", "tf", "five"]);
    assertEquals(rs.columnTypes, ["", "INTEGER", "REAL", "TEXT", "BLOB", "", "", ""]);
    assertStrictEquals(rs.rows.length, 2);
    const [first, second] = rs.rows;
    assertStrictEquals(first.n, null);
    assertStrictEquals(first.i, big);
    assertStrictEquals(first.f, 1.5);
    assertStrictEquals(first.t, text);
    assertEquals(new Uint8Array(first.b as ArrayBuffer), blob);
    assertStrictEquals(first.ti, "integer");
    assertStrictEquals(first.tf, "real");
    assertStrictEquals(first.five, 5n);
    assertStrictEquals(second.i, -(2n ** 63n));
    assertStrictEquals(second.f, -0.25);
    assertStrictEquals(second.t, "");
    assertEquals(new Uint8Array(second.b as ArrayBuffer), new Uint8Array());
    // A JS number is sent as a float (Hrana `float`), a bigint as an integer.
    const types = await client.execute({ sql: "SELECT typeof(?), typeof(?)", args: [3, 3n] });
    assertEquals(Array.from(types.rows[0]), ["real", "integer"]);
    // With the default intMode, integers arrive as numbers.
    const plain = connect();
    const small = await plain.execute("SELECT 42 AS x, 0.5 AS y");
    assertStrictEquals(small.rows[0].x, 42);
    assertStrictEquals(small.rows[0].y, 0.5);
    assert(server.stats().pipelines >= 6);
  });
});

Deno.test("hrana server: named args with and without their prefix", async () => {
  await withServer(async ({ connect }) => {
    const client = connect();
    await client.execute("CREATE TABLE n (a TEXT, b TEXT, c TEXT)");
    await client.execute({
      sql: "INSERT INTO n VALUES (:a, @b, $c)",
      args: { a: "colon", b: "at", c: "dollar" },
    });
    await client.execute({
      sql: "INSERT INTO n VALUES (:a, @b, $c)",
      args: { ":a": "x", "@b": "y", "$c": "z" },
    });
    const rs = await client.execute({
      sql: "SELECT * FROM n WHERE a = :a OR a = :a",
      args: { a: "colon" },
    });
    assertEquals(rs.rows.map((r) => Array.from(r)), [["colon", "at", "dollar"]]);
    const all = await client.execute("SELECT count(*) AS k FROM n WHERE c IN ('dollar', 'z')");
    assertStrictEquals(all.rows[0].k, 2);
    const unknown = await failure(
      client.execute({ sql: "SELECT :a", args: { a: 1, zzz: 2 } }),
    );
    assertStrictEquals(unknown.code, "ARGS_INVALID");
    const missing = await failure(client.execute({ sql: "SELECT ?, ?", args: [1] }));
    assertStrictEquals(missing.code, "ARGS_INVALID");
  });
});

Deno.test("hrana server: batch('write') commits every statement", async () => {
  await withServer(async ({ connect }) => {
    const client = connect();
    await client.execute("CREATE TABLE b (id INTEGER PRIMARY KEY, v TEXT UNIQUE)");
    const results = await client.batch([
      { sql: "INSERT INTO b (v) VALUES (?)", args: ["one"] },
      { sql: "INSERT INTO b (v) VALUES (?)", args: ["two"] },
      "SELECT v FROM b ORDER BY id",
    ], "write");
    assertStrictEquals(results.length, 3);
    assertStrictEquals(results[0].rowsAffected, 1);
    assertStrictEquals(results[1].lastInsertRowid, 2n);
    assertEquals(results[2].rows.map((r) => r.v), ["one", "two"]);
    const other = connect();
    const rs = await other.execute("SELECT count(*) AS k FROM b");
    assertStrictEquals(rs.rows[0].k, 2);
  });
});

Deno.test("hrana server: a failing statement rolls back the whole batch", async () => {
  await withServer(async ({ connect, server }) => {
    const client = connect();
    await client.execute("CREATE TABLE b (id INTEGER PRIMARY KEY, v TEXT UNIQUE)");
    await client.execute("INSERT INTO b (v) VALUES ('taken')");
    const error = await failure(client.batch([
      "INSERT INTO b (v) VALUES ('fresh')",
      "INSERT INTO b (v) VALUES ('taken')",
      "INSERT INTO b (v) VALUES ('never')",
    ], "write"));
    assertStrictEquals(error.code, "SQLITE_CONSTRAINT");
    assertMatch(error.message, /UNIQUE constraint failed: b\.v/);
    const rs = await client.execute("SELECT v FROM b ORDER BY id");
    assertEquals(rs.rows.map((r) => r.v), ["taken"]);
    assertStrictEquals(server.stats().streamsOpen, 0);
  });
});

Deno.test("hrana server: interactive transaction commits across round trips", async () => {
  await withServer(async ({ connect, server }) => {
    const client = connect();
    const observer = connect();
    await client.execute("CREATE TABLE t (v INTEGER)");
    const tx = await client.transaction("write");
    await tx.execute({ sql: "INSERT INTO t VALUES (?)", args: [1] });
    await tx.execute({ sql: "INSERT INTO t VALUES (?)", args: [2] });
    const inside = await tx.execute("SELECT sum(v) AS s FROM t");
    assertStrictEquals(inside.rows[0].s, 3);
    assertStrictEquals(server.stats().streamsOpen, 1);
    // Another stream does not see uncommitted rows (WAL readers see the last commit).
    const outside = await observer.execute("SELECT count(*) AS k FROM t");
    assertStrictEquals(outside.rows[0].k, 0);
    await tx.commit();
    assert(tx.closed);
    const after = await observer.execute("SELECT sum(v) AS s FROM t");
    assertStrictEquals(after.rows[0].s, 3);
    assertStrictEquals(server.stats().streamsOpen, 0);
  });
});

Deno.test("hrana server: interactive transaction rolls back", async () => {
  await withServer(async ({ connect, server }) => {
    const client = connect();
    await client.execute("CREATE TABLE t (v INTEGER)");
    const tx = await client.transaction("write");
    await tx.batch(["INSERT INTO t VALUES (1)", "INSERT INTO t VALUES (2)"]);
    const inside = await tx.execute("SELECT count(*) AS k FROM t");
    assertStrictEquals(inside.rows[0].k, 2);
    await tx.rollback();
    const after = await client.execute("SELECT count(*) AS k FROM t");
    assertStrictEquals(after.rows[0].k, 0);
    assertStrictEquals(server.stats().streamsOpen, 0);
  });
});

Deno.test("hrana server: a writer waits for another stream's write transaction", async () => {
  await withServer(async ({ connect }) => {
    const a = connect();
    const b = connect();
    await a.execute("CREATE TABLE t (who TEXT)");
    const tx = await a.transaction("write"); // BEGIN IMMEDIATE: holds the write lock
    await tx.execute("INSERT INTO t VALUES ('tx')");
    let waiting = true;
    const blocked = b.execute("INSERT INTO t VALUES ('b')").finally(() => waiting = false);
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert(waiting, "the second writer should wait for the commit");
    await tx.commit();
    await blocked;
    const rs = await a.execute("SELECT who FROM t ORDER BY rowid");
    assertEquals(rs.rows.map((r) => r.who), ["tx", "b"]);
  });
});

Deno.test("hrana server: executeMultiple runs a sequence, triggers and all", async () => {
  await withServer(async ({ connect }) => {
    const client = connect();
    await client.executeMultiple(`
      -- schema; a ';' inside the trigger body must not split it
      CREATE TABLE log (id INTEGER PRIMARY KEY, kind TEXT, note TEXT DEFAULT 'a;b');
      CREATE TABLE counts (kind TEXT PRIMARY KEY, n INTEGER);
      /* comment; with semicolons; */
      CREATE TRIGGER log_count AFTER INSERT ON log BEGIN
        INSERT INTO counts VALUES (NEW.kind, 1)
          ON CONFLICT (kind) DO UPDATE SET n = n + CASE WHEN NEW.kind = 'x' THEN 10 ELSE 1 END;
        SELECT 'still; inside';
      END;
      INSERT INTO log (kind) VALUES ('x'), ('x'), ('y');
    `);
    const counts = await client.execute("SELECT kind, n FROM counts ORDER BY kind");
    assertEquals(counts.rows.map((r) => [r.kind, r.n]), [["x", 11], ["y", 1]]);
    // The first failing statement ends the sequence; the ones before it stay applied.
    const error = await failure(client.executeMultiple(
      "INSERT INTO log (kind) VALUES ('z'); INSERT INTO nowhere VALUES (1); INSERT INTO log (kind) VALUES ('w');",
    ));
    assertStrictEquals(error.code, "SQLITE_ERROR");
    assertMatch(error.message, /no such table: nowhere/);
    const kinds = await client.execute("SELECT group_concat(kind, '') AS k FROM log");
    assertStrictEquals(kinds.rows[0].k, "xxyz");
    // One Stmt holds one statement (HRANA_3_SPEC §"Statements").
    const many = await failure(client.execute("SELECT 1; SELECT 2"));
    assertStrictEquals(many.code, "SQL_MANY_STATEMENTS");
    const none = await failure(client.execute("  -- nothing\n"));
    assertStrictEquals(none.code, "SQL_NO_STATEMENT");
    const trailing = await client.execute("SELECT 1 AS one; -- fine");
    assertStrictEquals(trailing.rows[0].one, 1);
  });
});

const APPEND_ONLY = `
  CREATE TABLE entries (id INTEGER PRIMARY KEY, body TEXT NOT NULL);
  CREATE TRIGGER entries_no_update BEFORE UPDATE ON entries
    BEGIN SELECT RAISE(ABORT, 'entries are append-only'); END;
  CREATE TRIGGER entries_no_delete BEFORE DELETE ON entries
    BEGIN SELECT RAISE(ABORT, 'entries are append-only'); END;
`;

Deno.test("hrana server: a trigger's RAISE(ABORT) reaches the client as an error", async () => {
  await withServer(async ({ connect, server }) => {
    const client = connect();
    await client.executeMultiple(APPEND_ONLY);
    await client.execute({ sql: "INSERT INTO entries (body) VALUES (?)", args: ["first"] });
    const update = await failure(client.execute("UPDATE entries SET body = 'changed'"));
    assertStrictEquals(update.code, "SQLITE_CONSTRAINT");
    assertMatch(update.message, /entries are append-only/);
    const del = await failure(client.batch(["DELETE FROM entries"], "write"));
    assertStrictEquals(del.code, "SQLITE_CONSTRAINT");
    const tx = await client.transaction("write");
    const inTx = await failure(tx.execute("DELETE FROM entries"));
    assertMatch(inTx.message, /append-only/);
    // The statement failed, the transaction did not: it can still write and commit.
    await tx.execute("INSERT INTO entries (body) VALUES ('second')");
    await tx.commit();
    const rs = await client.execute("SELECT body FROM entries ORDER BY id");
    assertEquals(rs.rows.map((r) => r.body), ["first", "second"]);
    assertStrictEquals(server.stats().streamsOpen, 0);
  });
});

Deno.test("hrana server: extendedErrorCodes sends SQLITE_CONSTRAINT_TRIGGER", async () => {
  await withServer(async ({ connect }) => {
    const client = connect();
    await client.executeMultiple(APPEND_ONLY);
    await client.execute("INSERT INTO entries (body) VALUES ('x')");
    const error = await failure(client.execute("DELETE FROM entries"));
    assertStrictEquals(error.code, "SQLITE_CONSTRAINT_TRIGGER");
  }, { extendedErrorCodes: true });
});

Deno.test("hrana server: bearer token is required when configured", async () => {
  await withServer(async ({ connect, server }) => {
    const good = connect({ authToken: "s3cret-token" });
    const rs = await good.execute("SELECT 1 AS one");
    assertStrictEquals(rs.rows[0].one, 1);
    for (const authToken of ["wrong-token", undefined]) {
      const error = await failure(connect({ authToken }).execute("SELECT 1"));
      assertStrictEquals(error.code, "SERVER_ERROR");
      assertMatch(error.message, /401/);
    }
    const raw = await post(server, "/v2/pipeline", { baton: null, requests: [] });
    assertStrictEquals(raw.status, 401);
    assertStrictEquals(server.stats().streamsOpen, 0);
    // Version probes stay open: the client sends them without credentials.
    const probe = await fetch(`${server.url}/v2`);
    await probe.body?.cancel();
    assertStrictEquals(probe.status, 200);
  }, { authToken: "s3cret-token" });
});

Deno.test("hrana server: two clients at once", async () => {
  await withServer(async ({ connect, server }) => {
    const a = connect();
    const b = connect();
    await a.execute("CREATE TABLE c (who TEXT, i INTEGER)");
    const writes = [];
    for (let i = 0; i < 20; i++) {
      writes.push(a.execute({ sql: "INSERT INTO c VALUES ('a', ?)", args: [i] }));
      writes.push(b.execute({ sql: "INSERT INTO c VALUES ('b', ?)", args: [i] }));
    }
    writes.push(a.batch(["INSERT INTO c VALUES ('a', 100)", "INSERT INTO c VALUES ('a', 101)"]));
    writes.push(b.batch(["INSERT INTO c VALUES ('b', 100)", "INSERT INTO c VALUES ('b', 101)"]));
    await Promise.all(writes);
    const rs = await b.execute("SELECT who, count(*) AS k FROM c GROUP BY who ORDER BY who");
    assertEquals(rs.rows.map((r) => [r.who, r.k]), [["a", 22], ["b", 22]]);
    assertStrictEquals(server.stats().streamsOpen, 0);
  });
});

Deno.test("hrana server: close stops serving and closes open streams", async () => {
  const dir = await Deno.makeTempDir({ prefix: "beacon_hrana_" });
  const server = await startHranaServer({ path: `${dir}/beacon.db` });
  const client = createClient({ url: server.url });
  try {
    await client.execute("CREATE TABLE t (v INTEGER)");
    const tx = await client.transaction("write");
    await tx.execute("INSERT INTO t VALUES (1)");
    assertStrictEquals(server.stats().streamsOpen, 1);
    await server.close();
    await server.close(); // idempotent
    assertStrictEquals(server.stats().streamsOpen, 0);
    // Nothing listens any more: the client's fetch itself fails.
    let refused = false;
    await client.execute("SELECT 1").catch(() => refused = true);
    assert(refused, "a closed server must not answer");
    tx.close();
  } finally {
    client.close();
  }
  // The open transaction was rolled back, not committed.
  const again = await startHranaServer({ path: `${dir}/beacon.db` });
  const reader = createClient({ url: again.url });
  try {
    const rs = await reader.execute("SELECT count(*) AS k FROM t");
    assertStrictEquals(rs.rows[0].k, 0);
  } finally {
    reader.close();
    await again.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("hrana server (raw): batons are single-use; unknown ones get 400", async () => {
  await withServer(async ({ server }) => {
    const opened = await post(server, "/v2/pipeline", {
      baton: null,
      requests: [exec("CREATE TABLE t (v)"), exec("BEGIN"), exec("INSERT INTO t VALUES (1)")],
    });
    assertStrictEquals(opened.status, 200);
    assertStrictEquals(opened.body.base_url, null);
    assertEquals(opened.body.results.map((r: { type: string }) => r.type), ["ok", "ok", "ok"]);
    const baton: string = opened.body.baton;
    assertMatch(baton, /^[A-Za-z0-9_-]{32,}$/);
    const next = await post(server, "/v2/pipeline", { baton, requests: [exec("SELECT 1")] });
    assertStrictEquals(next.status, 200);
    assert(next.body.baton !== baton, "a fresh baton for every response");
    // The baton just used is gone, and so is a made-up one.
    for (const stale of [baton, "made-up-baton"]) {
      const rejected = await post(server, "/v2/pipeline", { baton: stale, requests: [] });
      assertStrictEquals(rejected.status, 400);
      assertStrictEquals(rejected.contentType, "application/json");
      assertStrictEquals(rejected.body.code, "STREAM_EXPIRED");
    }
    // The stream itself is still usable with its current baton, then closes.
    const closed = await post(server, "/v2/pipeline", {
      baton: next.body.baton,
      requests: [exec("COMMIT"), { type: "close" }, exec("SELECT 1")],
    });
    assertStrictEquals(closed.body.baton, null);
    assertEquals(closed.body.results[1], { type: "ok", response: { type: "close" } });
    assertStrictEquals(closed.body.results[2].type, "error");
    assertStrictEquals(server.stats().streamsOpen, 0);
    // A malformed request is a protocol error.
    const bad = await post(server, "/v2/pipeline", { baton: null, requests: [{ type: "nope" }] });
    assertStrictEquals(bad.status, 400);
  });
});

Deno.test("hrana server (raw): describe", async () => {
  await withServer(async ({ server }) => {
    const res = await post(server, "/v2/pipeline", {
      baton: null,
      requests: [
        exec("CREATE TABLE d (id INTEGER PRIMARY KEY, name TEXT)"),
        { type: "describe", sql: "SELECT id, name AS n, 1 + 1 FROM d WHERE id = ? OR name = :nm" },
        { type: "describe", sql: "INSERT INTO d (name) VALUES (?3)" },
        { type: "describe", sql: "EXPLAIN SELECT * FROM d WHERE id = @x" },
        { type: "store_sql", sql_id: 7, sql: "BEGIN" },
        { type: "describe", sql: "BEGIN IMMEDIATE" },
        { type: "describe", sql_id: 7 },
        { type: "describe", sql: "SELECT * FROM missing" },
        { type: "close" },
      ],
    });
    assertStrictEquals(res.status, 200);
    const [, select, insert, explain, , immediate, begin, missing] = res.body.results;
    assertEquals(select.response.result, {
      params: [{ name: null }, { name: ":nm" }],
      cols: [
        { name: "id", decltype: "INTEGER" },
        { name: "n", decltype: "TEXT" },
        { name: "1 + 1", decltype: null },
      ],
      is_explain: false,
      is_readonly: true,
    });
    assertEquals(insert.response.result, {
      params: [{ name: null }, { name: null }, { name: "?3" }],
      cols: [],
      is_explain: false,
      is_readonly: false,
    });
    assertStrictEquals(explain.response.result.is_explain, true);
    assertEquals(explain.response.result.params, [{ name: "@x" }]);
    assertStrictEquals(explain.response.result.cols[1].name, "opcode");
    // sqlite3_stmt_readonly(): plain BEGIN is read-only, BEGIN IMMEDIATE takes the write lock.
    assertStrictEquals(begin.response.result.is_readonly, true);
    assertStrictEquals(immediate.response.result.is_readonly, false);
    assertStrictEquals(missing.type, "error");
    assertStrictEquals(missing.error.code, "SQLITE_ERROR");
    assertMatch(missing.error.message, /no such table: missing/);
  });
});

Deno.test("hrana server (raw): idle streams expire and roll back", async () => {
  await withServer(async ({ server }) => {
    const opened = await post(server, "/v3/pipeline", {
      baton: null,
      requests: [
        exec("CREATE TABLE t (v)"),
        exec("BEGIN"),
        exec("INSERT INTO t VALUES (1)"),
        { type: "get_autocommit" },
      ],
    });
    assertEquals(opened.body.results[3].response, { type: "get_autocommit", is_autocommit: false });
    assertStrictEquals(server.stats().streamsOpen, 1);
    await new Promise((resolve) => setTimeout(resolve, 300));
    assertStrictEquals(server.stats().streamsOpen, 0);
    const late = await post(server, "/v3/pipeline", { baton: opened.body.baton, requests: [] });
    assertStrictEquals(late.status, 400);
    const check = await post(server, "/v3/pipeline", {
      baton: null,
      requests: [exec("SELECT count(*) FROM t"), { type: "close" }],
    });
    assertEquals(check.body.results[0].response.result.rows, [[{ type: "integer", value: "0" }]]);
  }, { streamIdleTimeoutMs: 100 });
});

Deno.test("hrana server (raw): batch conditions, stored SQL, Hrana 3 only requests", async () => {
  await withServer(async ({ server }) => {
    const step = (sql: string, condition?: unknown) => ({
      condition,
      stmt: { sql, args: [], want_rows: true },
    });
    const res = await post(server, "/v3/pipeline", {
      baton: null,
      requests: [
        { type: "store_sql", sql_id: 1, sql: "INSERT INTO t VALUES (?)" },
        {
          type: "batch",
          batch: {
            steps: [
              step("CREATE TABLE t (v INTEGER UNIQUE)"),
              step("BEGIN", { type: "ok", step: 0 }),
              {
                condition: { type: "not", cond: { type: "is_autocommit" } },
                stmt: { sql_id: 1, args: [{ type: "integer", value: "5" }] },
              },
              {
                condition: { type: "ok", step: 2 },
                stmt: { sql_id: 1, args: [{ type: "integer", value: "5" }] },
              },
              step("COMMIT", { type: "and", conds: [{ type: "ok", step: 3 }] }),
              step("ROLLBACK", { type: "or", conds: [{ type: "error", step: 3 }] }),
              step("SELECT count(*) FROM t", { type: "is_autocommit" }),
            ],
          },
        },
        { type: "close_sql", sql_id: 1 },
        { type: "close_sql", sql_id: 99 },
        { type: "get_autocommit" },
        { type: "close" },
      ],
    });
    assertStrictEquals(res.status, 200);
    const batch = res.body.results[1].response.result;
    assertEquals(batch.step_results.map((r: unknown) => r !== null), [
      true,
      true,
      true,
      false,
      false,
      true,
      true,
    ]);
    assertEquals(batch.step_errors.map((e: { code: string } | null) => e?.code ?? null), [
      null,
      null,
      null,
      "SQLITE_CONSTRAINT",
      null,
      null,
      null,
    ]);
    assertEquals(batch.step_results[6].rows, [[{ type: "integer", value: "0" }]]);
    assertEquals(res.body.results[4].response, { type: "get_autocommit", is_autocommit: true });
    // Hrana 3 requests and conditions are protocol errors on /v2.
    const v2 = await post(server, "/v2/pipeline", {
      baton: null,
      requests: [{ type: "get_autocommit" }],
    });
    assertStrictEquals(v2.status, 400);
    // So are a step condition that looks forward and an SQL id stored twice.
    const forward = await post(server, "/v3/pipeline", {
      baton: null,
      requests: [{ type: "batch", batch: { steps: [step("SELECT 1", { type: "ok", step: 0 })] } }],
    });
    assertStrictEquals(forward.status, 400);
    const twice = await post(server, "/v3/pipeline", {
      baton: null,
      requests: [
        { type: "store_sql", sql_id: 1, sql: "SELECT 1" },
        { type: "store_sql", sql_id: 1, sql: "SELECT 2" },
      ],
    });
    assertStrictEquals(twice.status, 400);
    assertStrictEquals(server.stats().streamsOpen, 0);
    // Positional and named arguments together are refused, like sqld does.
    const both = await post(server, "/v3/pipeline", {
      baton: null,
      requests: [{
        type: "execute",
        stmt: {
          sql: "SELECT ?, :a",
          args: [{ type: "null" }],
          named_args: [{ name: "a", value: { type: "null" } }],
        },
      }, { type: "close" }],
    });
    assertStrictEquals(both.body.results[0].error.code, "ARGS_BOTH_POSITIONAL_AND_NAMED");
  });
});

Deno.test("hrana server (raw): v3 cursor streams entries line by line", async () => {
  await withServer(async ({ server }) => {
    const response = await fetch(`${server.url}/v3/cursor`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        baton: null,
        batch: {
          steps: [
            { stmt: { sql: "SELECT 1 AS a UNION ALL SELECT 2" } },
            { stmt: { sql: "SELECT * FROM missing" } },
            { condition: { type: "ok", step: 1 }, stmt: { sql: "SELECT 3" } },
          ],
        },
      }),
    });
    assertStrictEquals(response.status, 200);
    const lines = (await response.text()).trimEnd().split("\n").map((l) => JSON.parse(l));
    assertMatch(lines[0].baton, /^[A-Za-z0-9_-]+$/);
    assertEquals(lines.slice(1).map((e) => e.type), [
      "step_begin",
      "row",
      "row",
      "step_end",
      "step_error",
    ]);
    assertEquals(lines[2].row, [{ type: "integer", value: "1" }]);
    assertStrictEquals(lines[5].step, 1);
    const closed = await post(server, "/v3/pipeline", {
      baton: lines[0].baton,
      requests: [{ type: "close" }],
    });
    assertStrictEquals(closed.body.baton, null);
    assertStrictEquals(server.stats().streamsOpen, 0);
  });
});

Deno.test("hrana server (raw): a stream that gave up on the lock keeps working", async () => {
  await withServer(async ({ server, connect }) => {
    const holder = connect();
    await holder.execute("CREATE TABLE t (v TEXT)");
    const tx = await holder.transaction("write");
    await tx.execute("INSERT INTO t VALUES ('tx')");
    const blocked = await post(server, "/v2/pipeline", {
      baton: null,
      requests: [exec("INSERT INTO t VALUES ('lost')")],
    });
    assertStrictEquals(blocked.body.results[0].type, "error");
    assertStrictEquals(blocked.body.results[0].error.code, "SQLITE_BUSY");
    await tx.commit();
    // The same stream writes again; its write must be committed, not held back by the
    // statement that failed (see haltBusy).
    const again = await post(server, "/v2/pipeline", {
      baton: blocked.body.baton,
      requests: [exec("INSERT INTO t VALUES ('later')")],
    });
    assertStrictEquals(again.body.results[0].type, "ok");
    const rs = await holder.execute("SELECT v FROM t ORDER BY rowid");
    assertEquals(rs.rows.map((r) => r.v), ["tx", "later"]);
    await post(server, "/v2/pipeline", { baton: again.body.baton, requests: [{ type: "close" }] });
  }, { lockWaitMs: 50 });
});

Deno.test("hrana server: EXPLAIN of a write does not hold back the stream's commits", async () => {
  await withServer(async ({ server, connect }) => {
    const client = connect();
    await client.execute("CREATE TABLE t (v INTEGER)");
    const res = await post(server, "/v2/pipeline", {
      baton: null,
      requests: [
        exec("EXPLAIN INSERT INTO t VALUES (?)", [{ type: "integer", value: "1" }]),
        exec("EXPLAIN QUERY PLAN UPDATE t SET v = 2"),
        exec("INSERT INTO t VALUES (3)"),
      ],
    });
    assertEquals(res.body.results.map((r: { type: string }) => r.type), ["ok", "ok", "ok"]);
    assert(res.body.results[0].response.result.rows.length > 0);
    const rs = await client.execute("SELECT v FROM t");
    assertEquals(rs.rows.map((r) => r.v), [3]);
    await post(server, "/v2/pipeline", { baton: res.body.baton, requests: [{ type: "close" }] });
  });
});

Deno.test("hrana server: parameters are found and numbered as SQLite does", async () => {
  await withServer(async ({ connect }) => {
    const client = connect();
    // `?` and `:x` inside literals, identifiers and comments are not parameters.
    const quoted = await client.execute({
      sql: `SELECT '?:x' AS "a?", ? /* ?, :y */ AS b -- ?\n`,
      args: ["only"],
    });
    assertEquals([quoted.rows[0]["a?"], quoted.rows[0].b], ["?:x", "only"]);
    // `?2` reuses an index, a bare `?` after it takes the next one.
    const numbered = await client.execute({ sql: "SELECT ?2, ?1, ?2, ?", args: ["a", "b", "c"] });
    assertEquals(Array.from(numbered.rows[0]), ["b", "a", "b", "c"]);
    // A name used twice is one parameter.
    const named = await client.execute({
      sql: "SELECT :v || :v AS twice, @w AS w",
      args: { v: "ab", w: 1.25 },
    });
    assertEquals([named.rows[0].twice, named.rows[0].w], ["abab", 1.25]);
  });
});
