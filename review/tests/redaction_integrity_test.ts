/**
 * A database writer without the signing key cannot redact and keep `verify` green. Plain SQL, the way `sqlite3` would: an unsigned record (backdated to 2020), a record
 * with a copied signature, one signed by an untrusted key, one signed but dated before the row,
 * and emptied content without any record. `review verify --trust <published key>` fails and
 * names each; the one redaction the key holder made with `review redact` passes.
 */
import { createClient, type InValue } from "@libsql/client";
import {
  encodeSeed,
  generateSeed,
  parseSigningKey,
  signingKeyFromSeed,
} from "../../src/signing/key.ts";
import { signRedaction } from "../../src/signing/redaction.ts";
import { assertMatch, assertStrictEquals } from "../../tests/support/assert.ts";
import { fill, review, tempDatabase, text } from "./support.ts";

const SEED = encodeSeed(generateSeed());
const SIGNED = { BEACON_SIGNING_KEY: SEED };

Deno.test("verify fails on unsigned, forged, untrusted and backdated redactions, and on emptied content", async () => {
  const database = await tempDatabase();
  const client = createClient({ url: database.url });
  const raw = (sql: string, ...args: InValue[]) => client.execute({ sql, args });
  try {
    const receipts = await fill(
      database,
      ["one", "two", "three", "four", "five", "six"].map((word) => text(`message ${word}`)),
      { signingKey: SEED },
    );
    const ids = receipts.map((receipt) => String(receipt.id));
    const publicKey = (await signingKeyFromSeed(parseSigningKey(SEED))).publicKey;
    const trust = ["--trust", publicKey];
    const checkpoint = await review(database, ["verify"], SIGNED);
    assertStrictEquals(checkpoint.code, 0, checkpoint.stdout);

    // The key holder's redaction of row 1 verifies.
    const redacted = await review(database, [
      "redact",
      ids[0],
      "--reason",
      "court order 1",
      "--reviewer",
      "ops",
    ], SIGNED);
    assertStrictEquals(redacted.code, 0, redacted.stderr);
    assertMatch(redacted.stdout, new RegExp(`record signed by key ${publicKey}`));
    const clean = await review(database, ["verify", "--no-checkpoint", ...trust]);
    assertStrictEquals(clean.code, 0, clean.stdout);
    assertMatch(clean.stdout, /1 redacted/);

    const insert = (id: string, createdAt: string, signature: unknown, key: unknown) =>
      raw(
        "INSERT INTO redactions (submission_id, reason, redacted_by, created_at, signature, " +
          "public_key) VALUES (?, 'invented', 'mallory', ?, ?, ?)",
        id,
        createdAt,
        signature as InValue,
        key as InValue,
      );
    const empty = (id: string) => raw("UPDATE submissions SET content = X'' WHERE id = ?", id);
    const genuine = (await raw("SELECT signature FROM redactions")).rows[0].signature;
    // Row 2: unsigned and backdated, as in the issue.
    await insert(ids[1], "2020-01-01T00:00:00.000Z", null, null);
    await empty(ids[1]);
    // Row 3: the genuine record's signature copied onto another row.
    await insert(ids[2], new Date().toISOString(), genuine, publicKey);
    await empty(ids[2]);
    // Row 4: properly signed, by a key nobody trusts.
    const other = await signingKeyFromSeed(generateSeed());
    const row4 = (await raw("SELECT digest FROM submissions WHERE id = ?", ids[3])).rows[0];
    const late = new Date().toISOString();
    const fields = { id: ids[3], digest: String(row4.digest), reason: "invented", by: "mallory" };
    await insert(
      ids[3],
      late,
      await signRedaction(other, { ...fields, createdAt: late }),
      other.publicKey,
    );
    await empty(ids[3]);
    // Row 5: signed by the real key (a key holder with a wrong clock), dated before the row.
    const key = await signingKeyFromSeed(parseSigningKey(SEED));
    const row5 = (await raw("SELECT digest FROM submissions WHERE id = ?", ids[4])).rows[0];
    const early = "2020-01-01T00:00:00.000Z";
    const fields5 = { id: ids[4], digest: String(row5.digest), reason: "invented", by: "mallory" };
    await insert(
      ids[4],
      early,
      await signRedaction(key, { ...fields5, createdAt: early }),
      publicKey,
    );
    await empty(ids[4]);
    // Row 6: content emptied with no record at all (the writer drops the trigger first).
    await raw("DROP TRIGGER submissions_only_redaction");
    await empty(ids[5]);

    const run = await review(database, ["verify", "--no-checkpoint", ...trust]);
    assertStrictEquals(run.code, 1, run.stdout);
    const problem = (seq: number, what: RegExp) =>
      assertMatch(
        run.stdout,
        new RegExp(`^PROBLEM: row ${seq} \\(receipt ${ids[seq - 1]}\\): ${what.source}`, "m"),
      );
    problem(2, /redaction record is not signed/);
    problem(3, /redaction record has a signature that does not verify/);
    problem(4, new RegExp(`redaction record is signed by ${other.publicKey}, not a trusted key`));
    problem(
      5,
      /redaction record is dated 2020-01-01T00:00:00.000Z, before the submission was received/,
    );
    problem(6, /stored digest \S+ but the content hashes to/);
    assertStrictEquals(run.stdout.match(/^PROBLEM: row 1 /m), null, run.stdout);
  } finally {
    client.close();
    await Deno.remove(database.directory, { recursive: true });
  }
});
