/**
 * The reviewer's desk under a reviewer's hands, in real Chromium (playwright-core): every key
 * press counts, in order, on the entry it was pressed on (200 status keys as fast as the
 * browser sends them give 200 review events, checked in the database); a key after a bulk mark
 * lands on the entry shown; a key that cannot apply says why; the printed link's code is spent
 * by the page and worthless after, and a reload opens with the next link the console printed
 * (the session lives in page memory only); and the queue uses the
 * screen (at least 22 entries in view at 1400×900), from 390 to 1920 px, with a look-alike
 * spelled out as what it reads as. Screenshots go to docs/images/ with BEACON_SCREENSHOTS=1.
 *
 * Skipped, with a message, only where `/usr/bin/chromium` does not exist.
 */
import { type Browser, chromium, type Page } from "playwright-core";
import { createClient } from "@libsql/client";
import { assert, assertEquals, assertStrictEquals } from "../../tests/support/assert.ts";
import {
  fill,
  message,
  RECORD_CSP_VIOLATIONS,
  type RunningConsole,
  startConsole,
  tempDatabase,
  text,
} from "./support.ts";

const CHROMIUM = "/usr/bin/chromium";
const hasChromium = await Deno.stat(CHROMIUM).then(() => true, () => false);
if (!hasChromium) {
  console.log(`SKIPPED browser tests: ${CHROMIUM} is not installed (apt-get install chromium)`);
}
const LAUNCH_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run"];

interface Box {
  getBoundingClientRect(): { top: number; bottom: number; height: number };
}
interface InPage {
  getComputedStyle(node: unknown): { lineHeight: string };
  readonly document: {
    querySelectorAll(selector: string): ArrayLike<Box>;
    readonly documentElement: { scrollWidth: number; clientWidth: number };
  };
  readonly innerHeight: number;
}

function samples(count: number) {
  const all = [
    message({ subject: "Pay your p\u0430yp\u0430l invoice", body: "From p\u0430yp\u0430l." }),
  ];
  for (let n = all.length; n < count; n++) {
    all.push(
      n % 3 === 0
        ? message({ subject: `Status report ${n}`, body: `All checks green, run ${n}.` })
        : text(
          `Plain submission number ${n} from an agent, with a longer preview to fill a wide column`,
        ),
    );
  }
  return all;
}

async function open(browser: Browser, console: RunningConsole, width = 1400, height = 900) {
  const context = await browser.newContext({ viewport: { width, height } });
  const page = await context.newPage();
  const errors: string[] = [];
  page.on("pageerror", (error) => errors.push(String(error)));
  await page.addInitScript(RECORD_CSP_VIOLATIONS);
  await page.goto(console.url);
  await page.locator("#item h2").waitFor();
  await page.locator("#count-new").waitFor();
  return {
    page,
    context,
    async close() {
      assertEquals(errors, []);
      assertEquals(
        await page.evaluate(() => (globalThis as Record<string, unknown>).__violations),
        [],
      );
      await context.close();
    },
  };
}

const showing = (page: Page, id: string) => page.locator("#item h2", { hasText: id }).waitFor();
const settled = async (page: Page) => {
  await page.locator("#pending:empty").waitFor({ state: "attached" });
  await page.locator('body:not([aria-busy="true"])').waitFor();
};

/** Every review event in the database, in the order appended. */
async function events(url: string): Promise<{ id: string; status: string | null }[]> {
  const client = createClient({ url });
  try {
    const rows = (await client.execute(
      "SELECT submission_id, status FROM review_events ORDER BY seq",
    )).rows;
    return rows.map((row) => ({ id: String(row.submission_id), status: row.status as string }));
  } finally {
    client.close();
  }
}

Deno.test({
  name: "the desk: 200 fast status keys give 200 marks in order, and a key after a bulk mark",
  ignore: !hasChromium,
  sanitizeResources: false,
  async fn() {
    const database = await tempDatabase();
    const ids = (await fill(database, samples(230))).map((receipt) => String(receipt.id));
    const console = await startConsole(database.url);
    const browser = await chromium.launch({ executablePath: CHROMIUM, args: LAUNCH_FLAGS });
    try {
      const { page, close } = await open(browser, console);
      await showing(page, ids[0]);
      // 200 status keys, each sent as soon as the browser took the last one (past four pages
      // of 50, so some wait for the next page to load).
      const keys = ["r", "f", "d", "e"];
      const statusOf = { r: "reviewed", f: "follow-up", d: "dismissed", e: "escalated" } as Record<
        string,
        string
      >;
      const pressed = Array.from({ length: 200 }, (_, i) => keys[(i * 7 + (i >> 2)) % 4]);
      for (const key of pressed) await page.keyboard.press(key);
      await settled(page);
      await page.locator("#count-new", { hasText: /^30$/ }).waitFor();
      const recorded = await events(database.url);
      assertStrictEquals(recorded.length, 200, "one event per key");
      assertEquals(
        recorded,
        pressed.map((key, i) => ({ id: ids[i], status: statusOf[key] })),
        "each key's mark, in the order pressed, on the entry it was pressed on",
      );
      // The selection moved on with every key: the next entry is the one shown.
      await showing(page, ids[200]);

      // Bulk: select the one shown and the next (x, j, x), mark both dismissed with d; the
      // selection moves off them, and the next key marks the entry then shown.
      await page.keyboard.press("x");
      await page.keyboard.press("j");
      await showing(page, ids[201]);
      await page.keyboard.press("x");
      await page.locator("#bulk", { hasText: "2 selected" }).waitFor();
      await page.keyboard.press("d");
      await page.locator("#status", { hasText: "2 submissions marked dismissed" }).waitFor();
      await showing(page, ids[202]);
      await page.keyboard.press("r");
      await settled(page);
      await page.locator("#count-new", { hasText: /^27$/ }).waitFor();
      assertEquals((await events(database.url)).slice(200), [
        { id: ids[200], status: "dismissed" },
        { id: ids[201], status: "dismissed" },
        { id: ids[202], status: "reviewed" },
      ]);

      // A key that cannot apply says why: k on the first entry.
      await page.locator(`#queue li[data-id="${ids[0]}"]`).click();
      await showing(page, ids[0]);
      await page.keyboard.press("k");
      await page.locator("#status.refused", { hasText: "k: this is the first submission" })
        .waitFor();
      await close();
    } finally {
      await browser.close();
      await console.stop();
    }
  },
});

Deno.test({
  name: "the desk: the link's code is spent by the page, a reload opens with the next link",
  ignore: !hasChromium,
  sanitizeResources: false,
  async fn() {
    const database = await tempDatabase();
    await fill(database, samples(3));
    const console = await startConsole(database.url);
    const browser = await chromium.launch({ executablePath: CHROMIUM, args: LAUNCH_FLAGS });
    try {
      const { page, context, close } = await open(browser, console);
      const exchanges: string[] = [];
      page.on("request", (request) => {
        if (new URL(request.url()).pathname === "/api/session") exchanges.push(request.url());
      });
      assertStrictEquals(new URL(page.url()).hash, "", "the fragment is cleared");
      // The history holds the printed URL (the code) and nothing else that is secret.
      const history = await page.evaluate(() => globalThis.location.href);
      assert(!history.includes(console.code));
      // The code is spent: another tab opening the printed URL is refused, and says so.
      const other = await context.newPage();
      await other.goto(console.url);
      await other.locator("#no-session", { hasText: "spent" }).waitFor();
      await other.close();
      // A reload has no session (it lived in the page's memory) and says where the next is.
      await page.reload();
      await page.locator("#no-session", { hasText: "next link" }).waitFor();
      assertEquals(exchanges, [], "the reload exchanged nothing");
      // The next link the console printed opens the same desk, with one exchange.
      await page.goto(await console.nextLink());
      await page.locator("#queue li").nth(2).waitFor();
      await page.locator("#count-new", { hasText: /^3$/ }).waitFor();
      assertStrictEquals(exchanges.length, 1);
      assertEquals(await context.cookies(), [], "no cookie");
      await close();
    } finally {
      await browser.close();
      await console.stop();
    }
  },
});

Deno.test({
  name: "the desk uses the screen: 22 entries at 1400x900, 390 to 1920 px, reads-as",
  ignore: !hasChromium,
  sanitizeResources: false,
  async fn() {
    const database = await tempDatabase();
    // As a default install fills it: the Beacon signs its heads, so the page says verify passes.
    const ids = (await fill(database, samples(80), { treeHeads: true })).map((receipt) =>
      String(receipt.id)
    );
    const console = await startConsole(database.url);
    const browser = await chromium.launch({ executablePath: CHROMIUM, args: LAUNCH_FLAGS });
    const shots = Deno.env.get("BEACON_SCREENSHOTS") === "1"
      ? new URL("../../docs/images/", import.meta.url).pathname
      : await Deno.makeTempDir({ prefix: "beacon-desk-shots-" });
    try {
      for (const [width, height] of [[390, 844], [768, 1024], [1400, 900], [1920, 1080]]) {
        // Each width needs its own link: a code opens the console once.
        const served = width === 390 ? console : await startConsole(database.url);
        try {
          const { page, close } = await open(browser, served, width, height);
          await showing(page, ids[0]);
          await page.locator("#verify-result", { hasText: "verify" }).waitFor();
          // The look-alike says what it reads as, in the queue and in the item.
          await page.locator("#item .reads-as", { hasText: "reads as: paypal" }).waitFor();
          await page.locator(`#queue li[data-id="${ids[0]}"] .reads-as`, { hasText: "paypal" })
            .waitFor();
          const { scrollWidth, clientWidth } = await page.evaluate(() => ({
            scrollWidth: (globalThis as unknown as InPage).document.documentElement.scrollWidth,
            clientWidth: (globalThis as unknown as InPage).document.documentElement.clientWidth,
          }));
          assert(scrollWidth <= clientWidth, `${width}: ${scrollWidth} > ${clientWidth}`);
          // The verify line breaks between words, in at most two lines.
          const verify = (await page.locator("#verify-result").boundingBox())!;
          const lineHeight = await page.locator("#verify-result").evaluate((node) =>
            parseFloat((globalThis as unknown as InPage).getComputedStyle(node).lineHeight)
          );
          assert(verify.height <= 2 * lineHeight + 1, `${width}: verify takes ${verify.height}px`);
          if (width === 1400) {
            const visible = await page.evaluate(() => {
              const inPage = globalThis as unknown as InPage;
              const nav = inPage.document.querySelectorAll("nav")[0].getBoundingClientRect();
              return Array.from(inPage.document.querySelectorAll("#queue li")).filter((li) => {
                const box = li.getBoundingClientRect();
                return box.top >= nav.top && box.bottom <= Math.min(nav.bottom, inPage.innerHeight);
              }).length;
            });
            assert(visible >= 22, `only ${visible} entries in view at 1400x900`);
          }
          if (width >= 1200) {
            // One line per entry.
            const heights = await page.locator("#queue li").evaluateAll((nodes) =>
              nodes.slice(0, 10).map((node) =>
                (node as unknown as Box).getBoundingClientRect().height
              )
            );
            assert(Math.max(...heights) < 30, `${width}: entries ${heights.join(", ")}px high`);
          }
          await page.screenshot({ path: `${shots}/console-${width}.png` });
          await close();
        } finally {
          if (served !== console) await served.stop();
        }
      }
    } finally {
      await browser.close();
      await console.stop();
    }
  },
});
