/**
 * Esc in the console's search box clears the search, not only the box, in real Chromium
 * (playwright-core): after a search for a look-alike spelling the list shows its one match;
 * Esc empties the box and the list shows every submission again.
 *
 * Skipped, with a message, only where `/usr/bin/chromium` does not exist.
 */
import { chromium } from "playwright-core";
import { assertStrictEquals } from "../../tests/support/assert.ts";
import { fill, startConsole, tempDatabase, text } from "./support.ts";

const CHROMIUM = "/usr/bin/chromium";
const hasChromium = await Deno.stat(CHROMIUM).then(() => true, () => false);
if (!hasChromium) {
  console.log(`SKIPPED browser tests: ${CHROMIUM} is not installed (apt-get install chromium)`);
}
const LAUNCH_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run"];

Deno.test({
  name: "Esc in the search box clears the search and shows the whole queue again",
  ignore: !hasChromium,
  sanitizeResources: false,
  async fn() {
    const database = await tempDatabase();
    await fill(database, [
      text("Send your p\u0430ypal password here"),
      text("an ordinary message"),
      text("another ordinary message"),
    ]);
    const console = await startConsole(database.url);
    const browser = await chromium.launch({ executablePath: CHROMIUM, args: LAUNCH_FLAGS });
    try {
      const page = await (await browser.newContext()).newPage();
      await page.goto(console.url);
      await page.locator("#shown", { hasText: "3 of 3 shown" }).waitFor();
      await page.keyboard.press("/");
      await page.keyboard.type("paypal");
      await page.keyboard.press("Enter");
      await page.locator("#shown", { hasText: "1 of 1 shown" }).waitFor();
      await page.keyboard.press("Escape");
      await page.locator("#shown", { hasText: "3 of 3 shown" }).waitFor();
      assertStrictEquals(await page.locator('input[name="q"]').inputValue(), "");
      assertStrictEquals(await page.locator("#queue li").count(), 3);
    } finally {
      await browser.close();
      await console.stop();
      await Deno.remove(database.directory, { recursive: true });
    }
  },
});
