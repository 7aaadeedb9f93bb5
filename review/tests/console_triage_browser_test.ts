/**
 * A whole triage in the web console, in real Chromium (playwright-core), on a store larger than
 * one page of the queue: every status set from the page by key and by button, the
 * counts refreshed after each action, the history numbered once with only a corrected note
 * struck through, bulk marking of a selection, export of the current filter as NDJSON and CSV
 * (the same bytes as `review export`, a formula neutralised in CSV), the key legend shown and
 * matching the buttons' `aria-keyshortcuts`, paging that never lists a submission twice under
 * fast key presses, and the layout at 390, 800, 1400 and 1920 px wide (no horizontal overflow;
 * "Load more" and the item not covered by the footer).
 *
 * Skipped, with a message, only where `/usr/bin/chromium` does not exist. Screenshots go to a
 * temporary folder, and to docs/images/ when BEACON_SCREENSHOTS=1.
 */
import { type Browser, chromium, type Page } from "playwright-core";
import { assert, assertEquals, assertStrictEquals } from "../../tests/support/assert.ts";
import {
  fill,
  message,
  RECORD_CSP_VIOLATIONS,
  review,
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

/** The console's queue page size (review/console/api.ts). */
const PAGE = 50;
/** More than two pages. */
const STORE = 111;
const FORMULA = '=HYPERLINK("http://127.0.0.2:9/x","click me")';

/** The little of the page's globals the checks read (those functions run in the browser). */
interface InPage {
  readonly document: {
    querySelector(selector: string): InElement | null;
    querySelectorAll(selector: string): ArrayLike<InElement>;
    readonly documentElement: { scrollWidth: number; clientWidth: number };
  };
  getComputedStyle(element: InElement): { textDecorationLine: string; listStyleType: string };
}
interface InElement {
  readonly textContent: string | null;
  getAttribute(name: string): string | null;
  click(): void;
}

function samples() {
  const all = [
    message({
      subject: "Disk quota alert on build runner 7",
      body: "The runner's scratch volume is at 97%.\nTrace id: " + "f3a9".repeat(60) +
        "\nSee https://127.0.0.2:9/runbooks/disk for the procedure.",
      intent: "report",
      sender: { name: "ci-watchdog" },
    }),
    text(FORMULA),
    text("+SUM(1,2) and -2+3 and @cmd", "192.0.2.2"),
  ];
  for (let n = all.length; n < STORE; n++) {
    all.push(
      n % 3 === 0
        ? message({ subject: `Status report ${n}`, body: `All checks green, run ${n}.` })
        : text(`Plain submission number ${n} from an agent`, `192.0.2.${n % 50}`),
    );
  }
  return all;
}

/** Where screenshots go: docs/images/ with BEACON_SCREENSHOTS=1, else a temporary folder. */
async function shotsFolder(): Promise<string> {
  return Deno.env.get("BEACON_SCREENSHOTS") === "1"
    ? new URL("../../docs/images/", import.meta.url).pathname
    : await Deno.makeTempDir({ prefix: "beacon-console-shots-" });
}

async function openConsole(browser: Browser, console: RunningConsole, width: number, height = 900) {
  const context = await browser.newContext({ viewport: { width, height }, acceptDownloads: true });
  const page = await context.newPage();
  const errors: string[] = [];
  page.on("pageerror", (error) => errors.push(String(error)));
  await page.addInitScript(RECORD_CSP_VIOLATIONS);
  await page.goto(console.url);
  await page.locator("#item h2").waitFor();
  await page.locator("#count-new").waitFor();
  return {
    page,
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
const newCount = (page: Page, count: number) =>
  page.locator("#count-new", { hasText: new RegExp(`^${count}$`) }).waitFor();

async function statuses(database: string): Promise<Map<string, string | null>> {
  const listed = JSON.parse((await review(database, ["list", "--json", "--limit", "500"])).stdout);
  return new Map(
    listed.map((item: { id: string; status: string | null }) => [item.id, item.status]),
  );
}

async function downloaded(page: Page, name: string): Promise<string> {
  const [download] = await Promise.all([
    page.waitForEvent("download"),
    page.getByRole("button", { name }).click(),
  ]);
  const path = await download.path();
  assert(path !== null, "the download was saved");
  return await Deno.readTextFile(path);
}

Deno.test({
  name: "the console triages in Chromium: statuses, counts, history, bulk, export, paging",
  ignore: !hasChromium,
  sanitizeResources: false,
  async fn() {
    const database = await tempDatabase();
    const ids = (await fill(database, samples())).map((receipt) => String(receipt.id));
    // An event with a status and a note, that a note from the page will then correct.
    const marked = await review(database, [
      "mark",
      ids[5],
      "--status",
      "follow-up",
      "--note",
      "check with the sender",
    ]);
    assertStrictEquals(marked.code, 0, marked.stderr);
    const console = await startConsole(database.url);
    const browser = await chromium.launch({ executablePath: CHROMIUM, args: LAUNCH_FLAGS });
    try {
      const { page, close } = await openConsole(browser, console, 1400);
      let pending = STORE - 1;
      await newCount(page, pending);
      await showing(page, ids[0]);

      // Every status on the first item, by key, the count of new ones following each action.
      const back = async () => {
        await showing(page, ids[1]);
        await page.keyboard.press("k");
        await showing(page, ids[0]);
      };
      await page.keyboard.press("r");
      await newCount(page, --pending);
      await back();
      for (const key of ["f", "d", "e"]) {
        await page.keyboard.press(key);
        await back();
      }
      await page.keyboard.press("u");
      await newCount(page, ++pending);
      await page.locator("#item .history li").nth(4).waitFor();
      // Numbered once, by the submission's own history.
      assertEquals(await page.locator("#item .history .event-number").allTextContents(), [
        "#1",
        "#2",
        "#3",
        "#4",
        "#5",
      ]);
      assertEquals(
        await page.locator("#item .history .chip").allTextContents(),
        ["reviewed", "follow-up", "dismissed", "escalated", "new"],
      );
      assertStrictEquals(
        await page.evaluate(() =>
          (globalThis as unknown as InPage).getComputedStyle(
            (globalThis as unknown as InPage).document.querySelector("#item .history")!,
          )
            .listStyleType
        ),
        "none",
      );

      // And by button, on the second item.
      await page.keyboard.press("j");
      await showing(page, ids[1]);
      const buttons = [
        ["Mark dismissed", "dismissed"],
        ["Mark escalated", "escalated"],
        ["Mark for follow-up", "follow-up"],
        ["Mark reviewed", "reviewed"],
      ];
      for (const [name] of buttons) {
        await page.getByRole("button", { name, exact: true }).click();
        await showing(page, ids[2]);
        await page.locator("#queue li").nth(1).click();
        await showing(page, ids[1]);
      }
      await newCount(page, --pending);
      await page.getByRole("button", { name: "Back to new", exact: true }).click();
      await newCount(page, ++pending);
      // The count and the item's history are redrawn by separate answers: wait for the event.
      await page.locator("#item .history .chip").nth(buttons.length).waitFor();
      assertEquals(
        await page.locator("#item .history .chip").allTextContents(),
        [...buttons.map(([, status]) => status), "new"],
      );

      // Correcting a note: only the old note's text is struck through, not its event's status.
      await page.locator('select[name="status"]').selectOption("follow-up");
      await page.getByRole("button", { name: "Apply filters" }).click();
      await showing(page, ids[5]);
      await page.getByRole("button", { name: "Correct note #1" }).click();
      await page.keyboard.type("the sender answered: a test run");
      await page.keyboard.press("Control+Enter");
      await page.locator("#item .history .corrects", { hasText: "corrects #1" }).waitFor();
      const first = page.locator('#item .history li[data-number="1"]');
      assertStrictEquals(
        await first.locator("del.old-note").textContent(),
        "check with the sender",
      );
      const decoration = (selector: string) =>
        page.evaluate(
          (wanted) =>
            (globalThis as unknown as InPage).getComputedStyle(
              (globalThis as unknown as InPage).document.querySelector(wanted)!,
            )
              .textDecorationLine,
          selector,
        );
      assertStrictEquals(
        await decoration('#item .history li[data-number="1"] del'),
        "line-through",
      );
      assertStrictEquals(
        await decoration('#item .history li[data-number="1"] .event-head'),
        "none",
      );
      assertStrictEquals(
        await decoration('#item .history li[data-number="1"] .chip'),
        "none",
      );
      assertStrictEquals(
        await first.locator(".chip").textContent(),
        "follow-up",
        "the corrected event's status stays shown",
      );
      const shots = await shotsFolder();
      await page.locator("#item .history").screenshot({ path: `${shots}/console-history.png` });

      // Bulk: three selected (x twice, one check box), one status key marks all of them.
      await page.locator('select[name="status"]').selectOption("");
      await page.getByRole("button", { name: "Apply filters" }).click();
      await showing(page, ids[0]);
      const entry = (i: number) => page.locator(`#queue li[data-id="${ids[i]}"]`);
      await entry(10).click();
      await showing(page, ids[10]);
      await page.keyboard.press("x");
      await page.keyboard.press("j");
      await showing(page, ids[11]);
      await page.keyboard.press("x");
      await entry(12).locator("input.choose").check();
      await page.locator("#bulk", { hasText: "3 selected" }).waitFor();
      await page.locator("nav").screenshot({ path: `${shots}/console-bulk.png` });
      await page.keyboard.press("d");
      await page.locator("#status", { hasText: "3 submissions marked dismissed" }).waitFor();
      pending -= 3;
      await newCount(page, pending);
      assert(await page.locator("#bulk").isHidden());
      // And with the bulk bar's button.
      await entry(13).locator("input.choose").check();
      await entry(14).locator("input.choose").check();
      await page.getByRole("button", { name: "Mark escalated: all 2 selected" }).click();
      await page.locator("#status", { hasText: "2 submissions marked escalated" }).waitFor();
      pending -= 2;
      await newCount(page, pending);

      const stored = await statuses(database.url);
      assertStrictEquals(stored.get(ids[0]), null);
      assertStrictEquals(stored.get(ids[1]), null);
      for (const i of [10, 11, 12]) assertStrictEquals(stored.get(ids[i]), "dismissed");
      for (const i of [13, 14]) assertStrictEquals(stored.get(ids[i]), "escalated");
      assertStrictEquals([...stored.values()].filter((status) => status === null).length, pending);
      // One event per item, each through the API with the reviewer's name.
      const shown = await review(database.url, ["show", ids[11], "--width", "200"]);
      assert(shown.stdout.includes("dismissed by browser reviewer"), shown.stdout);

      // Export of the current filter: the same bytes as `review export` with the same filter.
      await page.locator('select[name="status"]').selectOption("dismissed");
      await page.getByRole("button", { name: "Apply filters" }).click();
      await page.locator("#shown", { hasText: "3 of 3 shown" }).waitFor();
      const csv = await downloaded(page, "Export CSV");
      const cliCsv = await review(database.url, [
        "export",
        "--status",
        "dismissed",
        "--format",
        "csv",
      ]);
      assertStrictEquals(csv, cliCsv.stdout);
      assertStrictEquals(csv.trimEnd().split("\n").length, 4);
      const ndjson = await downloaded(page, "Export NDJSON");
      const cliNdjson = await review(database.url, ["export", "--status", "dismissed"]);
      assertStrictEquals(ndjson, cliNdjson.stdout);
      assertEquals(
        ndjson.trimEnd().split("\n").map((line) => JSON.parse(line).id),
        [ids[10], ids[11], ids[12]],
      );
      // The formula bait, found by search: exact in NDJSON, neutralised in CSV.
      await page.locator('select[name="status"]').selectOption("");
      await page.locator('input[name="q"]').fill("HYPERLINK");
      await page.getByRole("button", { name: "Apply filters" }).click();
      await page.locator("#shown", { hasText: "1 of 1 shown" }).waitFor();
      const bait = (await downloaded(page, "Export NDJSON")).trimEnd().split("\n");
      assertStrictEquals(bait.length, 1);
      assertStrictEquals(JSON.parse(bait[0]).content, FORMULA);
      const baitCsv = await downloaded(page, "Export CSV");
      // One record after the header (cells may hold line feeds: the history, one event a line).
      assertStrictEquals(baitCsv.match(/^"\d+","/gm)?.length, 1, baitCsv);
      assert(
        baitCsv.endsWith(`,"'=HYPERLINK(""http[:]//127.0.0.2:9/x"",""click me"")"\n`),
        baitCsv,
      );
      assert(!/(^|,)"=/m.test(baitCsv), "no cell starts with a formula");
      await close();
    } finally {
      await browser.close();
      await console.stop();
    }
  },
});

Deno.test({
  name: "the console's queue never lists a submission twice, however fast j is pressed",
  ignore: !hasChromium,
  sanitizeResources: false,
  async fn() {
    const database = await tempDatabase();
    const ids = (await fill(database, samples())).map((receipt) => String(receipt.id));
    const console = await startConsole(database.url);
    const browser = await chromium.launch({ executablePath: CHROMIUM, args: LAUNCH_FLAGS });
    try {
      const { page, close } = await openConsole(browser, console, 1400);
      const queueRequests: string[] = [];
      page.on("request", (request) => {
        if (new URL(request.url()).pathname === "/api/queue") queueRequests.push(request.url());
      });
      await showing(page, ids[0]);
      assertStrictEquals(await page.locator("#queue li").count(), PAGE);
      // Many clicks on "Load more" at once start one load, not many.
      await page.evaluate(() => {
        const more = (globalThis as unknown as InPage).document.querySelector("#more")!;
        for (let i = 0; i < 20; i++) more.click();
      });
      await page.locator("#queue li").nth(2 * PAGE - 1).waitFor();
      await page.locator("#shown", { hasText: `${2 * PAGE} of ${STORE} shown` }).waitFor();
      assertStrictEquals(queueRequests.length, 1, queueRequests.join("\n"));

      // Hold `r` down: each item is marked once, in turn. The marked ones move from the new
      // part of the queue to the part already dealt with, which a later page brings back; they
      // must not be listed again.
      await page.keyboard.down("r");
      for (let i = 0; i < 40; i++) await page.keyboard.down("r");
      await page.keyboard.up("r");
      // Settled: no mark in flight (the page sets aria-busy while it records one).
      await page.locator("#status", { hasText: "marked reviewed" }).waitFor();
      await page.locator('body:not([aria-busy="true"])').waitFor();
      const held = await page.locator("#queue .chip.status-reviewed").count();
      assert(held >= 1, "holding r marked something");
      await newCount(page, STORE - held);
      const exported = (await review(database.url, ["export"])).stdout.trimEnd().split("\n")
        .map((line) => JSON.parse(line));
      assertStrictEquals(exported.filter((record) => record.status === "reviewed").length, held);
      assert(
        exported.every((record) => record.history.length <= 1),
        "a held key marked an item more than once",
      );
      await page.locator("#queue li").first().click();
      await showing(page, ids[0]);
      // Fast presses, never waiting for the page: past the end of what is loaded, twice.
      for (let i = 0; i < 150; i++) await page.keyboard.press("j");
      // The marked one stays where it was shown, and the walk ends at the last one.
      await page.locator("#item h2", { hasText: ids[STORE - 1] }).waitFor();
      await page.locator("#more").waitFor({ state: "hidden" });
      const listed = await page.evaluate(() =>
        Array.from((globalThis as unknown as InPage).document.querySelectorAll("#queue li")).map((
          li,
        ) => li.getAttribute("data-id"))
      );
      assertStrictEquals(listed.length, STORE);
      assertStrictEquals(new Set(listed).size, STORE);
      assertEquals([...listed].sort(), [...ids].sort());
      // And held down: key repeats until the top.
      await page.keyboard.down("k");
      for (let i = 0; i < 60; i++) await page.keyboard.down("k");
      await page.keyboard.up("k");
      await page.locator("#item h2", { hasText: listed[STORE - 1 - 61]! }).waitFor();
      assertStrictEquals(await page.locator("#queue li").count(), STORE);
      await close();
    } finally {
      await browser.close();
      await console.stop();
    }
  },
});

interface Box {
  x: number;
  y: number;
  width: number;
  height: number;
}
const overlaps = (a: Box, b: Box) =>
  a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;

Deno.test({
  name: "the console's layout works from 390 to 1920 px, with a visible key legend",
  ignore: !hasChromium,
  sanitizeResources: false,
  async fn() {
    const database = await tempDatabase();
    await fill(database, samples());
    const console = await startConsole(database.url);
    const browser = await chromium.launch({ executablePath: CHROMIUM, args: LAUNCH_FLAGS });
    try {
      for (const [width, height] of [[390, 844], [800, 900], [1400, 900], [1920, 1080]]) {
        const where = `${width}x${height}`;
        // A link opens the console once: each width gets a console of its own.
        const served = width === 390 ? console : await startConsole(database.url);
        const { page, close } = await openConsole(browser, served, width, height);
        await page.locator("#verify-result", { hasText: "verify" }).waitFor();
        // No horizontal overflow, whatever the content (a long unbroken trace id is first).
        const { scrollWidth, clientWidth } = await page.evaluate(() => ({
          scrollWidth: (globalThis as unknown as InPage).document.documentElement.scrollWidth,
          clientWidth: (globalThis as unknown as InPage).document.documentElement.clientWidth,
        }));
        assert(scrollWidth <= clientWidth, `${where}: ${scrollWidth} > ${clientWidth}`);

        // The legend is shown, and each key in it is a control's shortcut, and the other way round.
        const legend = page.locator("#legend");
        assert(await legend.isVisible(), `${where}: legend hidden`);
        const legendKeys = await legend.locator("kbd").allTextContents();
        assertEquals(legendKeys, ["j", "k", "r", "f", "d", "e", "u", "x", "n", "/", "?"]);
        for (const key of legendKeys) {
          const count = await page.locator(`[aria-keyshortcuts="${key}"]`).count();
          assert(count >= 1, `${where}: no control has shortcut ${key}`);
        }
        // And no control names a key the legend does not show.
        const named = await page.evaluate(() =>
          Array.from(
            (globalThis as unknown as InPage).document.querySelectorAll("[aria-keyshortcuts]"),
          ).map((node) => node.getAttribute("aria-keyshortcuts"))
        );
        for (const key of named) assert(legendKeys.includes(key!), `${where}: ${key} not shown`);
        const legendBox = (await legend.boundingBox())!;
        assert(legendBox.x >= 0 && legendBox.x + legendBox.width <= width, where);

        // The item pane: within the window's width, and not under the footer.
        const footer = page.locator("footer");
        const item = (await page.locator("#item").boundingBox())!;
        assert(item.x >= 0 && item.x + item.width <= width + 0.5, `${where}: item cut off`);
        assert(!overlaps(item, (await footer.boundingBox())!), `${where}: footer covers the item`);
        const content = (await page.locator("#item .content").boundingBox())!;
        assert(content.x + content.width <= width + 0.5, `${where}: content cut off`);

        // "Load more", scrolled to, is not covered by the footer once the page has settled: on a
        // loaded machine the console can still be laying out what it loaded when first measured
        // (seen in CI runs, never alone), so the boxes are read again, scrolled to again, for up
        // to 5 s until they are apart. A layout that puts the footer over it fails all the same.
        const more = page.locator("#more");
        let moreBox = { x: 0, y: 0, width: 0, height: 0 };
        let footerBox = moreBox;
        for (const settled = Date.now() + 5_000; Date.now() < settled;) {
          await more.scrollIntoViewIfNeeded();
          moreBox = (await more.boundingBox())!;
          footerBox = (await footer.boundingBox())!;
          if (!overlaps(moreBox, footerBox)) break;
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
        assert(
          !overlaps(moreBox, footerBox),
          `${where}: footer covers Load more: ${
            JSON.stringify({ moreBox, footerBox })
          } footer says ${JSON.stringify(await footer.textContent())}`,
        );
        assert(moreBox.y + moreBox.height <= height, `${where}: Load more outside the window`);
        if (width >= 760) {
          // One screen high: the footer ends where the window does.
          assert(
            Math.abs(footerBox.y + footerBox.height - height) < 1,
            `${where}: the footer ends at ${footerBox.y + footerBox.height}`,
          );
        }
        await more.click(); // and it is clickable (no other element takes the click)
        await page.locator("#queue li").nth(PAGE).waitFor();

        // The help lists the same keys.
        await page.keyboard.press("?");
        const help = page.locator("#help");
        await help.waitFor();
        assert(await help.isVisible());
        assertStrictEquals(await help.locator("tr").count(), legendKeys.length);
        await page.keyboard.press("?");
        await help.waitFor({ state: "hidden" });
        await close();
        if (served !== console) await served.stop();
      }
    } finally {
      await browser.close();
      await console.stop();
    }
  },
});
