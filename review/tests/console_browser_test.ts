/**
 * The web console in a real browser: headless Chromium (Debian's `chromium`) driven by
 * `playwright-core`. A hostile corpus goes in through the real Beacon server; the console runs
 * as `review serve` with the narrow permissions of `deno task review`; the test walks the queue
 * with the keyboard and with buttons, and asserts that no script of a submission ran, no dialog
 * opened, no request left the console's origin, the page caused no CSP violation, and the marks
 * made in the page show in `review list`.
 *
 * Skipped, with a message, only where `/usr/bin/chromium` does not exist (.ci/run installs it).
 * Screenshots go to a temporary folder, and to docs/images/ when BEACON_SCREENSHOTS=1.
 */
import { chromium } from "playwright-core";
import {
  encodeSeed,
  generateSeed,
  parseSigningKey,
  signingKeyFromSeed,
} from "../../src/signing/key.ts";
import { assert, assertEquals, assertStrictEquals } from "../../tests/support/assert.ts";
import { serveBeacon } from "../../tests/support/in_process.ts";
import { RECORD_CSP_VIOLATIONS, review, startConsole } from "./support.ts";
import { sendMessageRequest } from "../../tests/support/requests.ts";

/**
 * The little of the page's globals the checks below read. Those functions run in the browser
 * (Playwright sends their source), so they name nothing from this module but this type.
 */
interface InPage {
  readonly document: {
    querySelector(selector: string): { textContent: string | null } | null;
    querySelectorAll(selector: string): { length: number };
  };
  readonly __pwned?: unknown;
  readonly __violations?: string[];
}

const CHROMIUM = "/usr/bin/chromium";
const KEY = encodeSeed(generateSeed());
const hasChromium = await Deno.stat(CHROMIUM).then(() => true, () => false);
if (!hasChromium) {
  console.log(`SKIPPED browser tests: ${CHROMIUM} is not installed (apt-get install chromium)`);
}

const LAUNCH_FLAGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

/** Every submission tries to run `pwn(n)`, load something, or style its way out. */
const HOSTILE_TEXTS = [
  "<script>window.__pwned = 1; alert(1)</script>",
  '<img src=x onerror="window.__pwned = 2; alert(2)">',
  '<svg xmlns="http://www.w3.org/2000/svg" onload="alert(3)"><script>alert(3)</script></svg>',
  '<a href="javascript:alert(4)">click me</a> javascript:alert(4)',
  'data:text/html;base64,PHNjcmlwdD5hbGVydCg1KTwvc2NyaXB0Pg== <iframe src="data:text/html,<script>alert(5)</script>"></iframe>',
  '</pre></div><style>body{background:url("http://127.0.0.2:9/css")}</style><link rel=stylesheet href="http://127.0.0.2:9/a.css">',
  '<div style="background-image:url(http://127.0.0.2:9/img)">x</div> @import url("//127.0.0.2:9/x.css");',
  "{{constructor.constructor('alert(6)')()}} ${alert(7)} <%= alert(8) %> #{alert(9)}",
  '<meta http-equiv="refresh" content="0;url=http://127.0.0.2:9/"><base href="http://127.0.0.2:9/">',
  "Trojan \u202Etxt.exe\u202C and \u2066isolate\u2069 and zero\u200Bwidth and tag\u{E0041}",
  "\x1b]8;;http://127.0.0.2:9/\x07terminal link\x1b]8;;\x07 \x1b[31mred\x1b[0m",
  "emoji 👩‍👩‍👧‍👦 🇫🇷 👍🏽 1️⃣ ❤️ and a lone joiner a\u200Db",
  '<object data="http://127.0.0.2:9/o"></object><embed src="http://127.0.0.2:9/e">',
  '<form action="http://127.0.0.2:9/f"><button>send</button></form>',
  "x".repeat(64 * 1024 - 200), // one 64 KiB line
];

function hostileMessage(n: number): Record<string, unknown> {
  return {
    beacon: "0.1",
    subject: `<img src=x onerror=alert(${n})> subject ${n} \u202Eevil`,
    body: `<script>alert(${n})</script>\nhttps://127.0.0.2:9/phish\n<svg onload=alert(${n})>`,
    intent: "report",
    sender: { name: `<b onmouseover=alert(${n})>agent ${n}</b>` },
  };
}

Deno.test({
  name: "the console in Chromium: a hostile queue walked by keyboard, nothing runs or leaves",
  ignore: !hasChromium,
  async fn() {
    const served = await serveBeacon({ signingKey: KEY });
    const send = async (contentType: string, body: string) => {
      const response = await fetch(`${served.url}/beacon/0.1/submissions`, {
        method: "POST",
        headers: { "content-type": contentType },
        body,
      });
      assertStrictEquals(response.status, 202, await response.clone().text());
      return String((await response.json()).receipt.id);
    };
    const ids: string[] = [];
    for (const text of HOSTILE_TEXTS) ids.push(await send("text/plain; charset=utf-8", text));
    for (let n = 20; n < 25; n++) {
      ids.push(await send("application/json", JSON.stringify(hostileMessage(n))));
    }
    // And one over A2A.
    const a2a = await fetch(
      sendMessageRequest(served.url, { parts: [{ text: "<script>alert(30)</script> over A2A" }] }),
    );
    ids.push(String((await a2a.json()).result.task.id));

    // The holder of the key signs a checkpoint over the corpus, so the page can show verify
    // passing.
    const signed = await review(served.databaseUrl, ["verify"], { BEACON_SIGNING_KEY: KEY });
    assertStrictEquals(signed.code, 0, signed.stdout);
    const publicKey = (await signingKeyFromSeed(parseSigningKey(KEY))).publicKey;
    const console = await startConsole(served.databaseUrl, {}, ["--trust", publicKey]);
    const browser = await chromium.launch({ executablePath: CHROMIUM, args: LAUNCH_FLAGS });
    const shots = Deno.env.get("BEACON_SCREENSHOTS") === "1"
      ? new URL("../../docs/images/", import.meta.url).pathname
      : await Deno.makeTempDir({ prefix: "beacon-console-shots-" });
    try {
      const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
      const foreign: string[] = [];
      const requested: string[] = [];
      // Anything not for the console's origin is recorded and never sent.
      await context.route("**/*", (route) => {
        const url = route.request().url();
        requested.push(url);
        if (new URL(url).origin !== console.origin) {
          foreign.push(url);
          return route.abort();
        }
        return route.continue();
      });
      const page = await context.newPage();
      const dialogs: string[] = [];
      page.on("dialog", (dialog) => {
        dialogs.push(dialog.message());
        dialog.dismiss().catch(() => {});
      });
      const errors: string[] = [];
      page.on("pageerror", (error) => errors.push(String(error)));
      await page.addInitScript(RECORD_CSP_VIOLATIONS);

      /** Waits until the item in view is `id`. */
      const showing = (id: string) =>
        page.waitForFunction(
          (wanted) =>
            (globalThis as unknown as InPage).document.querySelector("#item h2")?.textContent
              ?.includes(wanted),
          id,
        );
      const response = await page.goto(console.url);
      assert(response !== null);
      assertStrictEquals(new URL(page.url()).search, "", "the token left the address bar");
      assertStrictEquals(
        (await response.allHeaders())["content-security-policy"]?.startsWith("default-src 'none'"),
        true,
      );
      await page.locator("#queue li").first().waitFor();
      await page.locator("#item h2").waitFor();
      // Unreviewed first, oldest first: the queue starts with the first submission.
      assertStrictEquals(await page.locator("#queue li").count(), ids.length);
      assert((await page.locator("#item h2").textContent())!.includes(ids[0]));
      assert((await page.locator("#item .content").textContent())!.includes("<script>"));
      await page.screenshot({ path: `${shots}/console-queue.png` });

      // Walk the queue with the keyboard: reviewed, follow-up, back to new, a note.
      await page.keyboard.press("r"); // item 0 reviewed, moves to item 1
      await showing(ids[1]);
      await page.keyboard.press("f"); // item 1 for follow-up, moves to item 2
      await showing(ids[2]);
      await page.keyboard.press("j"); // to item 3 without a mark
      await showing(ids[3]);
      await page.keyboard.press("k"); // back to item 2
      await showing(ids[2]);
      await page.keyboard.press("r"); // item 2 reviewed, moves to 3
      await showing(ids[3]);
      await page.keyboard.press("k"); // back to item 2
      await showing(ids[2]);
      await page.keyboard.press("u"); // item 2 back to new (stays)
      await page.locator("#status", { hasText: "marked new" }).waitFor();
      await page.keyboard.press("n");
      await page.keyboard.type("needs a second look");
      await page.keyboard.press("Control+Enter");
      await page.locator("#item .history .note", { hasText: "needs a second look" }).waitFor();
      // Buttons with accessible names do the same.
      await page.getByRole("button", { name: "Next", exact: true }).click();
      await showing(ids[3]);
      await page.getByRole("button", { name: "Mark reviewed" }).click();
      await showing(ids[4]);
      // Walk over every other item, so each one has been rendered once.
      for (let i = 5; i < ids.length; i++) {
        await page.keyboard.press("j");
        await showing(ids[i]);
        if (i === 9) await page.screenshot({ path: `${shots}/console-hostile.png` });
      }

      // Search, and the integrity check from the page.
      await page.locator('input[name="q"]').fill("A2A");
      await page.getByRole("button", { name: "Apply filters" }).click();
      await page.locator("#search-mode", { hasText: "search:" }).waitFor();
      await page.waitForFunction(() =>
        (globalThis as unknown as InPage).document.querySelectorAll("#queue li").length === 1
      );
      await page.getByRole("button", { name: "Run verify" }).click();
      await page.locator("#verify-result", { hasText: "verify passes" }).waitFor();
      await page.screenshot({ path: `${shots}/console-search.png` });

      // Nothing a submission wrote became markup, ran, opened or loaded.
      const markup = await page.evaluate(() =>
        (globalThis as unknown as InPage).document.querySelectorAll(
          "#item script, #item img, #item svg, #item iframe, #item a, #item style, #item link, " +
            "#item object, #item embed, #item form, #item meta, #item base, #queue img, #queue a",
        ).length
      );
      assertStrictEquals(markup, 0);
      assertStrictEquals(
        await page.evaluate(() => (globalThis as unknown as InPage).__pwned),
        undefined,
      );
      assertEquals(dialogs, []);
      assertEquals(foreign, []);
      assertEquals(errors, []);
      assertEquals(
        await page.evaluate(() => (globalThis as unknown as InPage).__violations),
        [],
      );
      assert(requested.every((url) => url.startsWith(console.origin + "/")), requested.join(" "));
      await context.close();
    } finally {
      await browser.close();
      await console.stop();
    }

    // The marks made in the page are review events the CLI shows.
    const listed = JSON.parse(
      (await review(served.databaseUrl, ["list", "--json", "--limit", "100"])).stdout,
    );
    const status = (id: string) => listed.find((item: { id: string }) => item.id === id).status;
    assertStrictEquals(status(ids[0]), "reviewed");
    assertStrictEquals(status(ids[1]), "follow-up");
    assertStrictEquals(status(ids[2]), null);
    assertStrictEquals(status(ids[3]), "reviewed");
    const shown = await review(served.databaseUrl, ["show", ids[2], "--width", "200"]);
    assert(shown.stdout.includes("note by browser reviewer: needs a second look"), shown.stdout);
    await served.close();
  },
});
