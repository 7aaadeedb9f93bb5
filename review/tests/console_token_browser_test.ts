/**
 * The console's credentials never reach another server on loopback, in
 * real Chromium (playwright-core): a one-time code arrives in the URL fragment and is spent for a
 * session credential the page keeps in memory and sends as a header to its own origin only. No cookie is set for
 * 127.0.0.1, and a neighbour listening on another 127.0.0.1 port, visited in the same browser
 * (its page and its favicon), receives no request that carries the token anywhere.
 *
 * Skipped, with a message, only where `/usr/bin/chromium` does not exist.
 */
import { chromium } from "playwright-core";
import { assert, assertEquals, assertStrictEquals } from "../../tests/support/assert.ts";
import { serveBeacon } from "../../tests/support/in_process.ts";
import { startConsole } from "./support.ts";

const CHROMIUM = "/usr/bin/chromium";
const hasChromium = await Deno.stat(CHROMIUM).then(() => true, () => false);
if (!hasChromium) {
  console.log(`SKIPPED browser tests: ${CHROMIUM} is not installed (apt-get install chromium)`);
}

Deno.test({
  name: "the console sets no cookie and a neighbour on another loopback port never sees the token",
  ignore: !hasChromium,
  async fn() {
    const served = await serveBeacon();
    await (await fetch(`${served.url}/beacon/0.1/submissions`, {
      method: "POST",
      headers: { "content-type": "text/plain; charset=utf-8" },
      body: "a message for the queue",
    })).body?.cancel();
    // The neighbour: a real server on another 127.0.0.1 port that records what it is sent.
    const seen: string[] = [];
    const neighbour = Deno.serve(
      { hostname: "127.0.0.1", port: 0, onListen: () => {} },
      (request) => {
        seen.push([request.url, ...request.headers].join("\n"));
        return new Response("<!doctype html><title>neighbour</title><p>hello</p>", {
          headers: { "content-type": "text/html" },
        });
      },
    );
    const neighbourUrl = `http://127.0.0.1:${neighbour.addr.port}/`;
    const console = await startConsole(served.databaseUrl);
    const browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run"],
    });
    try {
      const context = await browser.newContext();
      const page = await context.newPage();
      const consoleRequests: { url: string; headers: Record<string, string> }[] = [];
      page.on("request", (request) => {
        if (request.url().startsWith(console.origin)) {
          consoleRequests.push({ url: request.url(), headers: request.headers() });
        }
      });
      await page.goto(console.url);
      await page.locator("#queue li").first().waitFor();
      // The fragment is gone from the address bar; the code never was in a request line.
      assertStrictEquals(new URL(page.url()).hash, "");
      assert(consoleRequests.every((request) => !request.url.includes(console.code)));
      // The session credential went out as a header, to the console's own API only.
      const api = consoleRequests.filter((request) =>
        new URL(request.url).pathname.startsWith("/api/") &&
        new URL(request.url).pathname !== "/api/session"
      );
      assert(api.length > 0);
      const token = api[0].headers.authorization.slice("Bearer ".length);
      assert(/^[A-Za-z0-9_-]{43}$/.test(token), "a session credential");
      for (const request of api) {
        assertStrictEquals(request.headers.authorization, `Bearer ${token}`);
      }
      // Nothing of it in the page's storage: it lives in the script's memory only.
      assertEquals(
        await page.evaluate(() => {
          const inPage = globalThis as unknown as {
            sessionStorage: Storage;
            localStorage: Storage;
          };
          return [inPage.sessionStorage.length, inPage.localStorage.length];
        }),
        [0, 0],
      );
      // A reload has no session; the next link the console printed opens it again.
      await page.reload();
      await page.locator("#no-session", { hasText: "next link" }).waitFor();
      await page.goto(await console.nextLink());
      await page.locator("#queue li").first().waitFor();
      assertEquals(await context.cookies(), [], "no cookie for any host");

      // Visit the neighbour in the same browser (a new tab, then the same tab).
      const other = await context.newPage();
      await other.goto(neighbourUrl);
      await other.goto(neighbourUrl + "favicon.ico");
      await page.goto(neighbourUrl + "again");
      assert(seen.length >= 3, `the neighbour was reached: ${seen.length}`);
      for (const request of seen) {
        assert(!request.includes(token), `the neighbour saw the session:\n${request}`);
        assert(!request.includes(console.code), `the neighbour saw the code:\n${request}`);
        assert(
          !/^cookie\n/im.test(request.replaceAll(",", "\n")),
          `a cookie was sent:\n${request}`,
        );
      }
      assertEquals(await context.cookies(), []);
      await context.close();
    } finally {
      await browser.close();
      await console.stop();
      await neighbour.shutdown();
      await served.close();
    }
  },
});
