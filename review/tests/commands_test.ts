/**
 * Every command of the review tool, run as a subprocess against a real temporary database
 * filled through the real handler.
 */
import { childEnvironment } from "../../scripts/runtimes.ts";
import { createClient } from "@libsql/client";
import { createBeacon } from "../../src/beacon.ts";
import { sendMessageRequest } from "../../tests/support/requests.ts";
import { sha256Digest } from "../../src/bytes.ts";
import { signMessage } from "../../src/message/identity.ts";
import { encodeSeed, generateSeed } from "../../src/signing/key.ts";
import { SubmissionStore } from "../../src/store/store.ts";
import { jwtAuth, startSqld } from "../../tests/support/sqld.ts";
import {
  assert,
  assertEquals,
  assertMatch,
  assertRejects,
  assertStrictEquals,
} from "../../tests/support/assert.ts";
import {
  assertRunInert,
  fill,
  message,
  review,
  type Sample,
  type TempDatabase,
  tempDatabase,
  text,
} from "./support.ts";

const JANUARY = Date.UTC(2025, 0, 1, 12, 0, 0);
const JUNE = Date.UTC(2025, 5, 1, 12, 0, 0);

/** A clock that starts at `start` and moves 1 s per call, so every receipt time differs. */
function clock(start: number): () => number {
  let now = start;
  return () => (now += 1000);
}

async function signedSample(): Promise<{ sample: Sample; keys: CryptoKeyPair }> {
  const keys = await crypto.subtle.generateKey("Ed25519", false, [
    "sign",
    "verify",
  ]) as CryptoKeyPair;
  const signed = await signMessage({
    beacon: "0.1",
    subject: "Signed hello",
    body: "I sign my messages.",
    intent: "introduction",
    sender: { name: "Signer" },
  }, keys);
  return { sample: { contentType: "application/json", body: JSON.stringify(signed) }, keys };
}

/** January: two texts from one source; June: a message, a signed message, a text. */
async function standardDatabase(): Promise<
  { database: TempDatabase; ids: string[]; times: string[] }
> {
  const database = await tempDatabase();
  const january = await fill(database, [
    text("January text one", "198.51.100.7"),
    text("January text two", "198.51.100.7"),
  ], { now: clock(JANUARY), signingKey: STORE_KEY });
  const { sample } = await signedSample();
  const june = await fill(database, [
    message({ subject: "June message" }),
    sample,
    text("June text"),
  ], { now: clock(JUNE), signingKey: STORE_KEY });
  const receipts = [...january, ...june];
  return {
    database,
    ids: receipts.map((receipt) => String(receipt.id)),
    times: receipts.map((receipt) => String(receipt.receivedAt)),
  };
}

/** The receipt ids listed, as `list` shows them: their first 12 characters. */
function listedIds(stdout: string): string[] {
  return stdout.split("\n").filter((line) => /^\S{12} \d\d-\d\d /.test(line)).map((line) =>
    line.slice(0, 12)
  );
}

/** The ids as `list` shows them. */
function short(ids: readonly string[]): string[] {
  return ids.map((id) => id.slice(0, 12));
}

/** A fresh signing key, as BEACON_SIGNING_KEY takes it. */
function signingKey(): string {
  return encodeSeed(generateSeed());
}

/**
 * The key the test stores' Beacon signs with, and so the key `verify` must be given: a head
 * vouches only for rows whose intake signatures verify under it.
 */
const STORE_KEY = signingKey();

Deno.test("list shows the newest first, one line each, with every column", async () => {
  const { database, ids } = await standardDatabase();
  const run = await review(database, ["list"]);
  assertStrictEquals(run.code, 0, run.stderr);
  assertRunInert(run);
  assertEquals(listedIds(run.stdout), short(ids).reverse());
  const lines = run.stdout.split("\n");
  assertMatch(lines[0], /^RECEIPT +RECEIVED UTC +TYPE +SIZE +SIG +STATUS +SUBJECT/);
  const signed = lines.find((line) => line.includes("Signed hello"))!;
  assertMatch(signed, / 06-01 12:00 +nat\/msg +\d+B +ok +new +Signed hello$/);
  assertMatch(lines.find((line) => line.includes("January text one"))!, / nat\/text +16B +- +new /);
  // Fits 80 columns when the output is not a terminal, and never wraps.
  for (const line of lines) assert(line.length <= 80, `too wide: ${line}`);
});

Deno.test("list filters by time, kind, surface, key, status, and limits", async () => {
  const { database, ids, times } = await standardDatabase();
  const ids_of = async (args: string[]) => {
    const run = await review(database, ["list", ...args]);
    assertStrictEquals(run.code, 0, run.stderr);
    const shown = listedIds(run.stdout);
    return shown.map((prefix) => ids.find((id) => id.startsWith(prefix))!);
  };
  assertEquals(await ids_of(["--since", "2025-03-01"]), [ids[4], ids[3], ids[2]]);
  assertEquals(await ids_of(["--since", times[3]]), [ids[4], ids[3]]);
  const local = new Date(Date.parse(times[3]) + 2 * 3600_000).toISOString().replace("Z", "+02:00");
  assertEquals(await ids_of(["--since", local]), [ids[4], ids[3]]);
  assertEquals(await ids_of(["--kind", "structured"]), [ids[3], ids[2]]);
  assertEquals(await ids_of(["--kind", "unstructured", "--limit", "2"]), [ids[4], ids[1]]);
  assertEquals(await ids_of(["--surface", "a2a"]), []);
  assertEquals(await ids_of(["--surface", "native", "--limit", "1"]), [ids[4]]);
  const json = JSON.parse(
    (await review(database, ["list", "--json", "--kind", "structured"])).stdout,
  );
  const fingerprint: string = json[0].signer.fingerprint;
  assertStrictEquals(json[0].signer.verified, true);
  assertEquals(await ids_of(["--key", fingerprint.slice(7, 13)]), [ids[3]]);
  assertEquals(await ids_of(["--key", fingerprint.slice(0, 12).toUpperCase()]), [ids[3]]);
  assertEquals(await ids_of(["--unreviewed"]), [...ids].reverse());
  await review(database, ["mark", ids[0], "--status", "dismissed"]);
  await review(database, ["mark", ids[2], "--status", "escalated"]);
  assertEquals(await ids_of(["--unreviewed"]), [ids[4], ids[3], ids[1]]);
  assertEquals(await ids_of(["--status", "escalated"]), [ids[2]]);
  assertEquals(await ids_of(["--status", "dismissed", "--since", "2025-01-01"]), [ids[0]]);
  const limited = await review(database, ["list", "--limit", "2"]);
  assertMatch(
    limited.stdout,
    new RegExp(`^more: deno task review list --after ${ids[3].slice(0, 12)}$`, "m"),
  );
  assertEquals(await ids_of(["--limit", "2", "--after", ids[3].slice(0, 12)]), [ids[2], ids[1]]);
  assertEquals(await ids_of(["--status", "new"]), [ids[4], ids[3], ids[1]]);
  await review(database, ["mark", ids[2], "--status", "new"]);
  assertEquals(await ids_of(["--unreviewed"]), [ids[4], ids[3], ids[2], ids[1]]);
  assertEquals(await ids_of(["--signed"]), [ids[3]]);
  assertEquals(await ids_of(["--unsigned", "--kind", "structured"]), [ids[2]]);
  assertEquals(await ids_of(["--intent", "introduction"]), [ids[3]]);
  assertEquals(await ids_of(["--sender", "SIGN"]), [ids[3]]);
  assertEquals(await ids_of(["--until", "2025-03-01"]), [ids[1], ids[0]]);
  const sourceOf = JSON.parse((await review(database, ["list", "--json"])).stdout)[4].sourceHash;
  assertEquals(await ids_of(["--source", sourceOf]), [ids[1], ids[0]]);
});

Deno.test("list refuses bad filters with exit status 2", async () => {
  const { database } = await standardDatabase();
  for (
    const args of [
      ["--since", "2025-02-30"],
      ["--since", "yesterday"],
      ["--kind", "other"],
      ["--surface", "email"],
      ["--key", "not-hex"],
      ["--limit", "0"],
      ["--status", "done"],
      ["--unreviewed", "--status", "reviewed"],
      ["--signed", "--unsigned"],
      ["--columns", "colour"],
      ["--after", "!!"],
      ["--frobnicate"],
      ["extra"],
    ]
  ) {
    const run = await review(database, ["list", ...args]);
    assertStrictEquals(run.code, 2, `${args.join(" ")}: ${run.stdout}`);
    assertMatch(run.stderr, /^error: Cannot /);
  }
});

Deno.test("list on an empty or missing database", async () => {
  const database = await tempDatabase();
  const missing = await review(database, ["list"]);
  assertStrictEquals(missing.code, 1);
  assertMatch(missing.stderr, /Cannot open the database: .* does not exist/);
  // A read must not create the file.
  await assertRejects(() => Deno.stat(database.path));
  await fill(database, []);
  const empty = await review(database, ["list"]);
  assertStrictEquals(empty.code, 0, empty.stderr);
  assertMatch(empty.stdout, /no submissions match/);
});

Deno.test("show prints receipt fields, signature result, history and content", async () => {
  const { database, ids, times } = await standardDatabase();
  const signed = await review(database, ["show", ids[3]]);
  assertStrictEquals(signed.code, 0, signed.stderr);
  assertRunInert(signed);
  assertMatch(signed.stdout, new RegExp(`^receipt +${ids[3]}$`, "m"));
  assertMatch(signed.stdout, new RegExp(`^received +${times[3].replaceAll(".", "\\.")}$`, "m"));
  assertMatch(signed.stdout, /^kind +structured \(application\/json\)$/m);
  assertMatch(signed.stdout, /^digest +sha256:[0-9a-f]{64} \(matches the/m);
  assertMatch(signed.stdout, /^signature +verified at intake: the holder of this key sent it/m);
  assertMatch(signed.stdout, /^signer key +sha256:[0-9a-f]{64}$/m);
  assertMatch(signed.stdout, /^re-checked now +verified$/m);
  assertMatch(signed.stdout, /^subject +Signed hello$/m);
  assertMatch(signed.stdout, /^identity +Ed25519 public key [A-Za-z0-9_-]{43}$/m);
  assertMatch(signed.stdout, /^ {2}\| I sign my messages\.$/m);
  assert(!signed.stdout.includes("warning:"), "nothing to warn about");

  await review(database, ["mark", ids[0], "--status", "escalated", "--note", "check the source"]);
  await review(database, ["mark", ids[0], "--status", "reviewed", "--reviewer", "ana"]);
  const plain = await review(database, ["show", ids[0]]);
  assertMatch(plain.stdout, /^signature +unsigned$/m);
  assertMatch(plain.stdout, /^status +reviewed$/m);
  assertMatch(
    plain.stdout,
    /^history +#1 \S+Z escalated: check the source\n +#2 \S+Z reviewed by ana$/m,
  );
  // A unique prefix does as well as the whole id.
  const byPrefix = await review(database, ["show", ids[0].slice(0, 12)]);
  assertStrictEquals(byPrefix.stdout, plain.stdout);
  assertMatch(plain.stdout, /^text\n {2}\| January text one$/m);

  const unknown = await review(database, ["show", "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"]);
  assertStrictEquals(unknown.code, 1);
  assertMatch(
    unknown.stderr,
    /Cannot show: no submission has receipt id AAAAAAAAAAAAAAAAAAAAAAAAAAAAAA/,
  );
  const missing = await review(database, ["show"]);
  assertStrictEquals(missing.code, 2);
});

Deno.test("show renders A2A submissions: text parts and data-part messages", async () => {
  const database = await tempDatabase();
  const beacon = createBeacon({ database: { url: database.url }, rateLimit: "off" });
  const send = async (parts: unknown[]) => {
    const response = await beacon.fetch(sendMessageRequest("http://127.0.0.1", { parts }), {
      remoteAddress: "192.0.2.9",
    });
    const body = await response.json();
    assert(body.result?.task?.id, JSON.stringify(body));
    return String(body.result.task.id);
  };
  const textId = await send([{ text: "Hello over A2A \u202E" }, { text: "second part" }]);
  const dataId = await send([{
    data: {
      beacon: "0.1",
      subject: "A2A structured",
      body: "Body via data part",
      intent: "report",
      sender: { name: "A2A agent" },
    },
  }]);
  await beacon.close();
  const textRun = await review(database, ["show", textId]);
  assertStrictEquals(textRun.code, 0, textRun.stderr);
  assertRunInert(textRun);
  assertMatch(textRun.stdout, /^surface +a2a$/m);
  assertMatch(textRun.stdout, /^role +ROLE_USER$/m);
  assertMatch(textRun.stdout, /^part 1 \(text\)\n {2}\| Hello over A2A \\u202E$/m);
  assertMatch(textRun.stdout, /^part 2 \(text\)\n {2}\| second part$/m);
  const dataRun = await review(database, ["show", dataId]);
  assertMatch(dataRun.stdout, /^subject +A2A structured$/m);
  const list = await review(database, ["list", "--surface", "a2a", "--width", "120"]);
  assertMatch(list.stdout, /a2a\/text .* ! Hello over A2A \\u202E/);
  assertMatch(list.stdout, /a2a\/msg .* A2A structured/);
});

Deno.test("export writes NDJSON oldest first, exact content, to stdout or a new file", async () => {
  const { database, ids } = await standardDatabase();
  const run = await review(database, ["export"]);
  assertStrictEquals(run.code, 0, run.stderr);
  assertMatch(run.stderr, /exported 5 submissions/);
  const records = run.stdout.trim().split("\n").map((line) => JSON.parse(line));
  assertEquals(records.map((record) => record.id), ids);
  assertEquals(Object.keys(records[0]), [
    "seq",
    "id",
    "contextId",
    "receivedAt",
    "surface",
    "kind",
    "contentType",
    "size",
    "digest",
    "sourceHash",
    "identity",
    "idempotencyKey",
    "status",
    "redaction",
    "history",
    "contentEncoding",
    "content",
  ]);
  assertStrictEquals(records[0].content, "January text one");
  assertStrictEquals(records[0].contentEncoding, "utf-8");
  assertStrictEquals(records[0].identity, null);
  assertStrictEquals(records[3].identity.verified, true);
  for (const record of records) {
    const bytes = new TextEncoder().encode(record.content);
    assertStrictEquals(await sha256Digest(bytes), record.digest);
  }
  const filtered = await review(database, ["export", "--kind", "structured"]);
  assertStrictEquals(filtered.stdout.trim().split("\n").length, 2);

  const out = `${database.directory}/export.ndjson`;
  const toFile = await review(database, ["export", "--out", out, "--since", "2025-06-01"]);
  assertStrictEquals(toFile.code, 0, toFile.stderr);
  assertStrictEquals(toFile.stdout, "");
  assertStrictEquals((await Deno.readTextFile(out)).trim().split("\n").length, 3);
  const again = await review(database, ["export", "--out", out]);
  assertStrictEquals(again.code, 1);
  assertMatch(again.stderr, /Cannot export: .* already exists/);
});

Deno.test("export pages through more than two keyset pages and base64-encodes non-UTF-8", async () => {
  const database = await tempDatabase();
  const store = await SubmissionStore.open({ url: database.url });
  const rows = 1203;
  const appends = [];
  for (let i = 0; i < rows; i++) {
    const content = i === 700
      ? new Uint8Array([0xff, 0xfe, 0x00, 0x41])
      : new TextEncoder().encode(`row ${i}`);
    appends.push(store.append({
      id: `id-${String(i).padStart(5, "0")}`,
      contextId: `context-${i}`,
      receivedAt: new Date(JANUARY + i).toISOString(),
      surface: "native",
      kind: "unstructured",
      contentType: "text/plain; charset=utf-8",
      content,
      digest: await sha256Digest(content),
      sourceHash: "00",
    }));
  }
  await Promise.all(appends);
  await store.close();
  const run = await review(database, ["export"]);
  assertStrictEquals(run.code, 0, run.stderr);
  const records = run.stdout.trim().split("\n").map((line) => JSON.parse(line));
  assertStrictEquals(records.length, rows);
  assertEquals(records.map((record) => record.seq), Array.from({ length: rows }, (_, i) => i + 1));
  const binary = records.find((record) => record.contentEncoding === "base64");
  assertStrictEquals(binary.content, "//4AQQ==");
  const show = await review(database, ["show", binary.id]);
  assertMatch(show.stdout, /4 bytes that are not UTF-8/);
});

Deno.test("mark appends review events; unknown ids and bad statuses are refused", async () => {
  const { database, ids } = await standardDatabase();
  const first = await review(database, ["mark", ids[1], "--status", "escalated", "--note", "hm"]);
  assertStrictEquals(first.code, 0, first.stderr);
  assertMatch(
    first.stdout,
    new RegExp(`^${ids[1]} marked escalated \\(event #1 of its history\\)$`, "m"),
  );
  const second = await review(database, ["mark", ids[1], "--status", "reviewed"], {
    BEACON_REVIEWER: "env reviewer",
  });
  assertMatch(second.stdout, /\(event #2 of its history\)/);
  const unknown = await review(database, ["mark", "nope", "--status", "reviewed"]);
  assertStrictEquals(unknown.code, 1);
  assertMatch(unknown.stderr, /Cannot mark: no submission has a receipt id starting nope/);
  for (const args of [["--status", "done"], [], ["--corrects", "1", "--status", "reviewed"]]) {
    const run = await review(database, ["mark", ids[1], ...args]);
    assertStrictEquals(run.code, 2, args.join(" "));
  }
  const client = createClient({ url: database.url, intMode: "number" });
  try {
    const events = (await client.execute(
      "SELECT submission_id, status, note, reviewer FROM review_events ORDER BY seq",
    )).rows.map((row) => ({ ...row }));
    assertEquals(events, [
      { submission_id: ids[1], status: "escalated", note: "hm", reviewer: null },
      { submission_id: ids[1], status: "reviewed", note: null, reviewer: "env reviewer" },
    ]);
  } finally {
    client.close();
  }
  const list = await review(database, ["list"]);
  assertMatch(list.stdout, new RegExp(`^${ids[1].slice(0, 12)} .* reviewed `, "m"));
});

Deno.test("review_events and checkpoints refuse UPDATE and DELETE (triggers)", async () => {
  const { database, ids } = await standardDatabase();
  await review(database, ["mark", ids[0], "--status", "reviewed"]);
  const verified = await review(database, ["verify"], { BEACON_SIGNING_KEY: STORE_KEY });
  assertStrictEquals(verified.code, 0, verified.stdout);
  const client = createClient({ url: database.url, intMode: "number" });
  try {
    for (
      const sql of [
        "UPDATE review_events SET status = 'dismissed'",
        "DELETE FROM review_events",
        "UPDATE checkpoints SET tree_size = 0",
        "DELETE FROM checkpoints",
        // Without a redaction record, not even the content may be emptied.
        "UPDATE submissions SET content = X''",
        "DELETE FROM submissions",
      ]
    ) {
      await assertRejects(() => client.execute(sql), /append-only/, sql);
    }
    await assertRejects(
      () =>
        client.execute({
          sql:
            "INSERT INTO review_events (submission_id, status, created_at) VALUES (?, 'done', 'x')",
          args: [ids[0]],
        }),
      /CHECK/,
    );
    assertStrictEquals(
      Number((await client.execute("SELECT count(*) AS n FROM review_events")).rows[0].n),
      1,
    );
  } finally {
    client.close();
  }
});

Deno.test("stats counts by day, surface, kind, signature and status, and the top sources", async () => {
  const { database, ids } = await standardDatabase();
  await review(database, ["mark", ids[0], "--status", "dismissed"]);
  const run = await review(database, ["stats", "--json", "--top", "2"]);
  assertStrictEquals(run.code, 0, run.stderr);
  const stats = JSON.parse(run.stdout);
  assertStrictEquals(stats.total, 5);
  assertEquals(stats.byDay, { "2025-01-01": 2, "2025-06-01": 3 });
  assertEquals(stats.bySurface, { native: 5 });
  assertEquals(stats.byKind, { structured: 2, unstructured: 3 });
  assertEquals(stats.bySignature, { unsigned: 4, verified: 1 });
  assertEquals(stats.byStatus, { dismissed: 1, new: 4 });
  assertStrictEquals(stats.topSources.length, 2);
  assertEquals(stats.topSources.map((source: { count: number }) => source.count), [3, 2]);
  const text = await review(database, ["stats", "--since", "2025-06-01"]);
  assertStrictEquals(text.code, 0, text.stderr);
  assertMatch(text.stdout, /^submissions +3 \(/m);
  assertMatch(text.stdout, /^by day \(UTC\)\n {2}2025-06-01 +3$/m);
  assertMatch(text.stdout, /^top 10 sources/m);
});

Deno.test("the tool works on a remote database (a real sqld), with the auth token", async () => {
  const { database, ids } = await standardDatabase();
  const auth = await jwtAuth();
  const server = await startSqld({ seedDatabase: database.path, jwtPublicKey: auth.publicKey });
  try {
    const env = { BEACON_DATABASE_AUTH_TOKEN: await auth.token() };
    const hostPort = new URL(server.url).host;
    const run = async (args: string[], extraEnv: Record<string, string> = env) => {
      // The runtime\'s own variables (DENO_DIR, certificates, proxies), none of the BEACON_* set.
      const inherited = childEnvironment();
      const output = await new Deno.Command(Deno.execPath(), {
        args: [
          "run",
          "--allow-read",
          "--allow-env",
          `--allow-net=${hostPort}`,
          new URL("../runtime/deno.ts", import.meta.url).pathname,
          ...args,
        ],
        cwd: new URL("../../", import.meta.url).pathname,
        env: { ...inherited, BEACON_DATABASE_URL: server.url, ...extraEnv },
        clearEnv: true,
      }).output();
      return {
        code: output.code,
        stdout: new TextDecoder().decode(output.stdout),
        stderr: new TextDecoder().decode(output.stderr),
      };
    };
    const list = await run(["list"]);
    assertStrictEquals(list.code, 0, list.stderr);
    assertEquals(listedIds(list.stdout), short(ids).reverse());
    const mark = await run(["mark", ids[2], "--status", "reviewed"]);
    assertStrictEquals(mark.code, 0, mark.stderr);
    const verify = await run(["verify"], { ...env, BEACON_SIGNING_KEY: STORE_KEY });
    assertStrictEquals(verify.code, 0, verify.stdout + verify.stderr);
    const refused = await run(["list"], {});
    assertStrictEquals(refused.code, 1);
  } finally {
    await server.close();
  }
});

Deno.test("show and mark accept receipt ids that start with a dash", async () => {
  const database = await tempDatabase();
  const store = await SubmissionStore.open({ url: database.url });
  const content = new TextEncoder().encode("dash");
  await store.append({
    id: "-dashFirst_0123456789a",
    contextId: "c",
    receivedAt: new Date(JUNE).toISOString(),
    surface: "native",
    kind: "unstructured",
    contentType: "text/plain; charset=utf-8",
    content,
    digest: await sha256Digest(content),
    sourceHash: "00",
  });
  await store.close();
  const show = await review(database, ["show", "-dashFirst_0123456789a"]);
  assertStrictEquals(show.code, 0, show.stderr);
  assertMatch(show.stdout, /^receipt +-dashFirst_0123456789a$/m);
  const mark = await review(database, [
    "mark",
    "--status",
    "reviewed",
    "-dashFirst_0123456789a",
    "--note",
    "-1 odd",
  ]);
  assertStrictEquals(mark.code, 0, mark.stderr);
  const again = await review(database, ["show", "-dashFirst_0123456789a"]);
  assertMatch(again.stdout, /^history +#1 \S+ reviewed: -1 odd$/m);
});

Deno.test("next shows the oldest new submission; prefixes work and ambiguous ones are refused", async () => {
  const { database, ids } = await standardDatabase();
  const first = await review(database, ["next"]);
  assertStrictEquals(first.code, 0, first.stderr);
  assertMatch(first.stdout, new RegExp(`^receipt +${ids[0]}$`, "m"));
  assertMatch(
    first.stdout,
    new RegExp(`^next: deno task review mark ${ids[0].slice(0, 12)} `, "m"),
  );
  // Several ids at once, by prefix.
  const marked = await review(database, [
    "mark",
    ids[0].slice(0, 12),
    ids[1].slice(0, 12),
    "--status",
    "reviewed",
  ]);
  assertStrictEquals(marked.code, 0, marked.stderr);
  assertStrictEquals(
    marked.stdout.split("\n").filter((line) => /marked reviewed/.test(line)).length,
    2,
  );
  const second = await review(database, ["next", "--kind", "unstructured"]);
  assertMatch(second.stdout, new RegExp(`^receipt +${ids[4]}$`, "m"));
  await review(database, ["mark", ids[2], ids[3], ids[4], "--status", "dismissed"]);
  const empty = await review(database, ["next"]);
  assertStrictEquals(empty.code, 0);
  assertMatch(empty.stdout, /the queue is empty/);
  // The June ids start with the same time, so their common start names several.
  let shared = ids[2];
  while (!ids.slice(2).every((id) => id.startsWith(shared))) shared = shared.slice(0, -1);
  assert(shared.length >= 4, shared);
  const ambiguous = await review(database, ["show", shared]);
  assertStrictEquals(ambiguous.code, 1);
  assertMatch(
    ambiguous.stderr,
    new RegExp(
      `Cannot show: ${shared} is ambiguous; it starts ${ids.slice(2).sort().join(", ")}$`,
      "m",
    ),
  );
  const tooShort = await review(database, ["show", ids[0].slice(0, 3)]);
  assertStrictEquals(tooShort.code, 2);
  // Nothing was appended for a refused id among good ones.
  const before = (await review(database, ["show", ids[0], "--width", "200"])).stdout;
  const refused = await review(database, ["mark", ids[0], "nope", "--status", "escalated"]);
  assertStrictEquals(refused.code, 1);
  assertStrictEquals((await review(database, ["show", ids[0], "--width", "200"])).stdout, before);
});
