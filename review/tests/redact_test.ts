/**
 * Accountable redaction through the real server and the real CLI: `review redact`, only with
 * the signing key, appends a signed redaction record and removes only the content; the database refuses every other change;
 * `verify` still passes and lists the item; the receipt still verifies; the server's answers
 * about the id do not change.
 */
import type { InValue } from "@libsql/client";
import { verifyReceipt } from "../../src/signing/receipt.ts";
import { encodeSeed, generateSeed } from "../../src/signing/key.ts";
import {
  assert,
  assertEquals,
  assertMatch,
  assertRejects,
  assertStrictEquals,
} from "../../tests/support/assert.ts";
import { serveBeacon } from "../../tests/support/in_process.ts";
import { assertRunInert, rawSql as raw, review } from "./support.ts";

const KEY = encodeSeed(generateSeed());
const SIGNED = { BEACON_SIGNING_KEY: KEY };
const ILLEGAL = "content a court ordered erased \u202E with a bidi control";

/** What the server says about an id on every surface that can be asked. */
async function serverAnswers(url: string, id: string): Promise<unknown[]> {
  const status = await fetch(`${url}/beacon/0.1/submissions/${id}`);
  const task = await fetch(`${url}/a2a/v1`, {
    method: "POST",
    headers: { "content-type": "application/json", "a2a-version": "1.0" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "GetTask", params: { id } }),
  });
  return [status.status, await status.text(), task.status, await task.text()];
}

Deno.test("redact removes only the content, with a record; verify and the receipt still hold", async () => {
  const served = await serveBeacon({ signingKey: KEY });
  try {
    const submit = async (text: string) => {
      const response = await fetch(`${served.url}/beacon/0.1/submissions`, {
        method: "POST",
        headers: { "content-type": "text/plain; charset=utf-8" },
        body: text,
      });
      assertStrictEquals(response.status, 202);
      return (await response.json()).receipt as Record<string, unknown>;
    };
    const kept = await submit("an ordinary message");
    const receipt = await submit(ILLEGAL);
    const id = String(receipt.id);
    const first = await review(served.databaseUrl, ["verify"], SIGNED);
    assertStrictEquals(first.code, 0, first.stdout);
    const before = await serverAnswers(served.url, id);
    const row = async () => (await served.query("SELECT * FROM submissions WHERE id = ?", [id]))[0];
    const original = await row();

    // Refused without a reason or without a name; nothing changes.
    for (
      const [args, env] of [
        [["redact", id], { BEACON_REVIEWER: "ops", ...SIGNED }],
        [["redact", id, "--reason", "court order 123"], SIGNED],
      ] as const
    ) {
      const run = await review(served.databaseUrl, [...args], env);
      assertStrictEquals(run.code, 2, run.stderr);
    }
    // Refused without the signing key, in one line; nothing changes.
    const unkeyed = await review(served.databaseUrl, [
      "redact",
      id,
      "--reason",
      "court order 123",
      "--reviewer",
      "ops",
    ]);
    assertStrictEquals(unkeyed.code, 1);
    assertEquals(unkeyed.stderr.trim().split("\n").length, 1, unkeyed.stderr);
    assertMatch(unkeyed.stderr, /BEACON_SIGNING_KEY is not set/);
    assertEquals(await row(), original);

    const redacted = await review(
      served.databaseUrl,
      ["redact", id.slice(0, 12), "--reason", "court order 123 \u202E", "--reviewer", "ops"],
      SIGNED,
    );
    assertStrictEquals(redacted.code, 0, redacted.stderr);
    assertRunInert(redacted);
    assertMatch(redacted.stdout, new RegExp(`^${id} redacted \\S+Z by ops: content removed`, "m"));
    const after = await row();
    assertStrictEquals((after.content as ArrayBuffer).byteLength, 0);
    for (const column of Object.keys(original).filter((name) => name !== "content")) {
      assertStrictEquals(after[column], original[column], column);
    }
    const records = await served.query("SELECT submission_id, reason, redacted_by FROM redactions");
    assertEquals(records.map((record) => ({ ...record })), [
      { submission_id: id, reason: "court order 123 \u202E", redacted_by: "ops" },
    ]);
    const again = await review(served.databaseUrl, ["redact", id, "--reason", "x"], {
      BEACON_REVIEWER: "ops",
      ...SIGNED,
    });
    assertStrictEquals(again.code, 1);
    assertMatch(again.stderr, /already redacted/);

    // The server's answers about the id are exactly what they were.
    assertEquals(await serverAnswers(served.url, id), before);

    // verify passes, matches the earlier checkpoint, and reports the item as redacted.
    const verify = await review(served.databaseUrl, ["verify"], SIGNED);
    assertStrictEquals(verify.code, 0, verify.stdout);
    assertMatch(
      verify.stdout,
      /\(0 digest mismatches, 1 redacted\) and (\d+) checkpoints? \(\1 roots? matched\)/,
    );
    assertMatch(
      verify.stdout,
      new RegExp(`^redacted: row 2 \\(receipt ${id}\\): content redacted`, "m"),
    );
    // The receipt the sender holds still verifies over the fields that stay.
    const discovery = await (await fetch(`${served.url}/.well-known/autonomous-agent`)).json();
    assert(
      await verifyReceipt(
        String(discovery.receiptSigning.publicKey),
        {
          id,
          receivedAt: String(after.received_at),
          digest: String(after.digest),
          size: Number(after.size),
          kind: String(after.kind),
        },
        String(receipt.signature),
      ),
    );

    // show, list and export say so, and hold none of the content.
    const show = await review(served.databaseUrl, ["show", id]);
    assertRunInert(show);
    assertMatch(show.stdout, /^REDACTED +\S+Z by ops, reason: court order 123 \\u202E$/m);
    assertMatch(show.stdout, /^\(content redacted: see REDACTED above\)$/m);
    assert(!show.stdout.includes("court ordered erased"));
    const exported = await review(served.databaseUrl, ["export"]);
    const lines = exported.stdout.trim().split("\n").map((line) => JSON.parse(line));
    assertStrictEquals(lines[1].contentEncoding, "redacted");
    assertStrictEquals(lines[1].content, null);
    assertStrictEquals(lines[1].redaction.by, "ops");
    assertStrictEquals(lines[0].content, "an ordinary message");
    assert(String(kept.id) !== id);
  } finally {
    await served.close();
  }
});

Deno.test("the database allows emptying content only for a recorded redaction, nothing else", async () => {
  const served = await serveBeacon();
  try {
    const response = await fetch(`${served.url}/beacon/0.1/submissions`, {
      method: "POST",
      headers: { "content-type": "text/plain; charset=utf-8" },
      body: "to be redacted",
    });
    const id = String((await response.json()).receipt.id);
    const url = served.databaseUrl;
    const refused = (sql: string, ...args: InValue[]) =>
      assertRejects(() => raw(url, sql, ...args), /append-only/, sql);
    // No record yet: not even emptying the content.
    await refused("UPDATE submissions SET content = X'' WHERE id = ?", id);
    await raw(
      url,
      "INSERT INTO redactions (submission_id, reason, redacted_by, created_at) " +
        "VALUES (?, 'order', 'ops', '2025-01-01T00:00:00.000Z')",
      id,
    );
    // With a record: only content to zero bytes, every other column unchanged.
    await refused("UPDATE submissions SET content = X'00' WHERE id = ?", id);
    await refused("UPDATE submissions SET content = X'', digest = 'sha256:0' WHERE id = ?", id);
    await refused("UPDATE submissions SET content = X'', size = 0 WHERE id = ?", id);
    await refused("UPDATE submissions SET content = X'', seq = 99 WHERE id = ?", id);
    // Text is not bytes: the STRICT column or the trigger refuses it.
    await assertRejects(() => raw(url, "UPDATE submissions SET content = '' WHERE id = ?", id));
    await refused("DELETE FROM submissions WHERE id = ?", id);
    await raw(url, "UPDATE submissions SET content = X'' WHERE id = ?", id);
    // Redaction records are append-only, and one per submission.
    await refused("UPDATE redactions SET reason = 'other'");
    await refused("DELETE FROM redactions");
    await assertRejects(() =>
      raw(
        url,
        "INSERT INTO redactions (submission_id, reason, redacted_by, created_at) " +
          "VALUES (?, 'again', 'ops', 'x')",
        id,
      ), /UNIQUE/);
    await assertRejects(() =>
      raw(
        url,
        "INSERT INTO redactions (submission_id, reason, redacted_by, created_at) " +
          "VALUES (?, '', 'ops', 'x')",
        id,
      ), /CHECK/);
  } finally {
    await served.close();
  }
});
