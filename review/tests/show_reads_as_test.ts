/**
 * `review show` says what a look-alike word reads as, as the console does ("reads as: paypal"),
 * from the same list (review/search/reads_as.ts); a plain submission gets no such line, and a
 * redacted one none either (its content is gone).
 */
import { encodeSeed, generateSeed } from "../../src/signing/key.ts";
import { assertMatch, assertStrictEquals } from "../../tests/support/assert.ts";
import { assertRunInert, fill, message, review, tempDatabase, text } from "./support.ts";

const SEED = encodeSeed(generateSeed());

Deno.test("show prints what look-alike words read as, like the console", async () => {
  const database = await tempDatabase();
  try {
    const [lookAlike, plain, structured] = await fill(database, [
      text("Send your p\u0430yp\u0430l password to \u0430ppl\u0435 support"),
      text("an ordinary message about paypal"),
      message({ subject: "Your p\u0430yp\u0430l account", body: "Verify it." }),
    ], { signingKey: SEED });
    const shown = await review(database, ["show", String(lookAlike.id)]);
    assertStrictEquals(shown.code, 0, shown.stderr);
    assertRunInert(shown);
    assertMatch(shown.stdout, /^reads as: paypal, apple$/m);
    const ordinary = await review(database, ["show", String(plain.id)]);
    assertStrictEquals(ordinary.stdout.includes("reads as:"), false, ordinary.stdout);
    const json = await review(database, ["show", String(structured.id)]);
    assertMatch(json.stdout, /^reads as: paypal$/m);

    const redacted = await review(database, [
      "redact",
      String(lookAlike.id),
      "--reason",
      "test",
      "--reviewer",
      "ops",
    ], { BEACON_SIGNING_KEY: SEED });
    assertStrictEquals(redacted.code, 0, redacted.stderr);
    const after = await review(database, ["show", String(lookAlike.id)]);
    assertStrictEquals(after.stdout.includes("reads as:"), false, after.stdout);
  } finally {
    await Deno.remove(database.directory, { recursive: true });
  }
});
