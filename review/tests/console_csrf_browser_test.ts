/**
 * Another local page cannot break the reviewer's marks, in real Chromium (playwright-core): a
 * page on another 127.0.0.1 port fetches the console's page 70 times (`no-cors`, as any page may),
 * which once flushed the console's cache of page CSRF tokens and made the reviewer's next mark
 * fail with 403. The marks' token now comes with the session (review/console/app.ts), so the
 * reviewer's mark after those fetches succeeds.
 *
 * Skipped, with a message, only where `/usr/bin/chromium` does not exist.
 */
import { chromium } from "playwright-core";
import { assertStrictEquals } from "../../tests/support/assert.ts";
import { fill, review, startConsole, tempDatabase, text } from "./support.ts";

const CHROMIUM = "/usr/bin/chromium";
const hasChromium = await Deno.stat(CHROMIUM).then(() => true, () => false);
if (!hasChromium) {
  console.log(`SKIPPED browser tests: ${CHROMIUM} is not installed (apt-get install chromium)`);
}
const LAUNCH_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run"];

/** The other origin's page: fetches `target` 70 times, one after another, then says so. */
function flooding(target: string): string {
  return `<!doctype html><title>flooding</title><p id="done"></p><script>
    (async () => {
      let sent = 0;
      for (let i = 0; i < 70; i++) {
        // The console's Cross-Origin-Resource-Policy keeps the answer from this page (the
        // fetch rejects), but the request reaches the console, which serves the page.
        await fetch(${JSON.stringify(target)}, { mode: "no-cors", cache: "no-store" })
          .catch(() => {});
        sent++;
      }
      document.getElementById("done").textContent = "sent " + sent;
    })();
  </script>`;
}

Deno.test({
  name: "70 fetches of the console's page from another loopback origin leave a mark working",
  ignore: !hasChromium,
  sanitizeResources: false,
  async fn() {
    const database = await tempDatabase();
    const [receipt] = await fill(database, [text("the one to mark")]);
    const console = await startConsole(database.url);
    const neighbour = Deno.serve(
      { hostname: "127.0.0.1", port: 0, onListen: () => {} },
      () =>
        new Response(flooding(`${console.origin}/`), {
          headers: { "content-type": "text/html; charset=utf-8" },
        }),
    );
    const browser = await chromium.launch({ executablePath: CHROMIUM, args: LAUNCH_FLAGS });
    try {
      const context = await browser.newContext();
      const page = await context.newPage();
      await page.goto(console.url);
      await page.locator("#item h2").waitFor();
      const other = await context.newPage();
      await other.goto(`http://127.0.0.1:${neighbour.addr.port}/`);
      await other.locator("#done", { hasText: "sent 70" }).waitFor();
      await page.bringToFront();
      await page.keyboard.press("r");
      await page.locator("#status", { hasText: "marked reviewed" }).waitFor();
      await context.close();
    } finally {
      await browser.close();
      await console.stop();
      await neighbour.shutdown();
    }
    const shown = await review(database, ["show", String(receipt.id)]);
    assertStrictEquals(/status\s+reviewed/.test(shown.stdout), true, shown.stdout);
    await Deno.remove(database.directory, { recursive: true });
  },
});
