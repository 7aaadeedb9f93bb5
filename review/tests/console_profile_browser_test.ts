/**
 * No usable credential in the browser's profile, in real Chromium (playwright-core) with a
 * profile folder of its own on disk: the reviewer opens the console, marks an entry, reloads
 * and opens the next link, then closes the browser. Every file Chromium left in the profile
 * (history, session restore, Session Storage, Local Storage, caches) is read back, and every
 * string in it that could be a code or a session credential (43 base64url characters, as
 * Latin-1 and as UTF-16, the form Chromium stores storage values in) is tried against the still
 * running console, as a session and as a code: none answers 200.
 *
 * Skipped, with a message, only where `/usr/bin/chromium` does not exist.
 */
import { chromium } from "playwright-core";
import { assert, assertStrictEquals } from "../../tests/support/assert.ts";
import { consoleCsrf, fill, startConsole, tempDatabase, text } from "./support.ts";

const CHROMIUM = "/usr/bin/chromium";
const hasChromium = await Deno.stat(CHROMIUM).then(() => true, () => false);
if (!hasChromium) {
  console.log(`SKIPPED browser tests: ${CHROMIUM} is not installed (apt-get install chromium)`);
}
const LAUNCH_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run"];

/** Every regular file under `folder`. */
async function* files(folder: string): AsyncGenerator<string> {
  for await (const entry of Deno.readDir(folder)) {
    const path = `${folder}/${entry.name}`;
    if (entry.isDirectory) yield* files(path);
    else if (entry.isFile) yield path;
  }
}

/** Each 43-character window of every run of base64url characters in `text`. */
function windows(text: string, into: Set<string>): void {
  for (const run of text.matchAll(/[A-Za-z0-9_-]{43,}/g)) {
    for (let start = 0; start + 43 <= run[0].length; start++) {
      into.add(run[0].slice(start, start + 43));
    }
  }
}

Deno.test({
  name: "a persisted Chromium profile holds no credential that opens the console",
  ignore: !hasChromium,
  sanitizeResources: false,
  async fn() {
    const database = await tempDatabase();
    await fill(database, [text("first for the queue"), text("second for the queue")]);
    const console = await startConsole(database.url);
    const profile = await Deno.makeTempDir({ prefix: "beacon-chromium-profile-" });
    try {
      const context = await chromium.launchPersistentContext(profile, {
        executablePath: CHROMIUM,
        args: LAUNCH_FLAGS,
      });
      try {
        const page = context.pages()[0] ?? await context.newPage();
        await page.goto(console.url);
        await page.locator("#queue li").nth(1).waitFor();
        await page.locator("#item h2").waitFor();
        await page.keyboard.press("r"); // a mark, so the session was used for a POST
        await page.locator("#status", { hasText: "marked reviewed" }).waitFor();
        await page.reload();
        await page.locator("#no-session").waitFor();
        await page.goto(await console.nextLink());
        await page.locator("#queue li").nth(1).waitFor();
      } finally {
        await context.close();
      }

      const candidates = new Set<string>();
      let read = 0;
      for await (const path of files(profile)) {
        let bytes: Uint8Array;
        try {
          bytes = await Deno.readFile(path);
        } catch (error) {
          if (error instanceof Deno.errors.NotFound) continue; // removed as it closed
          throw error;
        }
        read++;
        windows(new TextDecoder("latin1").decode(bytes), candidates);
        for (const offset of [0, 1]) {
          const even = bytes.subarray(offset, offset + ((bytes.length - offset) & ~1));
          windows(new TextDecoder("utf-16le").decode(even), candidates);
        }
      }
      assert(read > 0, "the profile has files");
      // The scan reads what the browser kept: the spent code of the printed link is there.
      assert(candidates.has(console.code), "the history's spent code is among the candidates");

      const pageCsrf = await consoleCsrf(console.origin);
      for (const candidate of candidates) {
        const asSession = await fetch(`${console.origin}/api/queue`, {
          headers: { authorization: `Bearer ${candidate}` },
        });
        await asSession.body?.cancel();
        assertStrictEquals(asSession.status, 401, `a live session in the profile: ${candidate}`);
        const asCode = await fetch(`${console.origin}/api/session`, {
          method: "POST",
          headers: {
            origin: console.origin,
            "x-csrf-token": pageCsrf,
            "content-type": "application/json",
          },
          body: JSON.stringify({ code: candidate }),
        });
        await asCode.body?.cancel();
        assertStrictEquals(asCode.status, 401, `a live code in the profile: ${candidate}`);
      }
    } finally {
      await console.stop();
      await Deno.remove(profile, { recursive: true });
      await Deno.remove(database.directory, { recursive: true });
    }
  },
});
