import { assertEquals } from "../support/assert.ts";
import { embeddedFilePath, isEmbedded } from "../../src/store/client.ts";

Deno.test("embeddedFilePath() reads file: URLs as the libSQL client does", () => {
  assertEquals(embeddedFilePath("file:data/beacon.db"), "data/beacon.db");
  assertEquals(embeddedFilePath("file:/srv/beacon.db?mode=rwc"), "/srv/beacon.db");
  assertEquals(embeddedFilePath("file:///srv/my%20beacon.db"), "/srv/my beacon.db");
});

Deno.test("isEmbedded() tells embedded URLs from remote ones", () => {
  assertEquals(isEmbedded("file:data/beacon.db"), true);
  assertEquals(isEmbedded(":memory:"), true);
  assertEquals(isEmbedded("libsql://beacon.turso.io"), false);
  assertEquals(isEmbedded("https://127.0.0.1:8080"), false);
});
