/**
 * `review serve`: the web console, a small server of its own on `127.0.0.1` (app.ts is its
 * HTTP core, api.ts its views and actions, static/ its script and style). It prints one line
 * with the URL to open, holding a one-time code, says on stderr at which address the console
 * answers, prints the next link each time a link is used (the page keeps its session only in
 * memory, so a reload needs one), and runs until SIGINT or SIGTERM.
 *
 * `--trust PUBLIC_KEY` (repeatable) is passed to the page's `verify`, as for `review verify`, and
 * the first one is the key receipts are checked against.
 *
 * Another bind address is refused unless `--allow-non-loopback` says so, with a warning: the
 * console shows every submission to whoever opens its link first, over plain HTTP.
 *
 * @module
 */
import { readFile } from "node:fs/promises";
import { databaseConfig, openForAppending, type ReviewDatabase } from "../data/database.ts";
import { CliError, type Context } from "../io.ts";
import { integerOption, type OptionValues } from "../commands/options.ts";
import { prepareSearch } from "../search/search.ts";
import { configuredKey, storedPublicKey } from "../data/keys.ts";
import { verifyCommand } from "../commands/verify.ts";
import { ConsoleApi } from "./api.ts";
import { consoleHandler, randomToken, STATIC_FILES, type StaticFiles } from "./app.ts";

/** The options of `serve`. */
export const SERVE_OPTIONS = {
  port: { type: "string" },
  hostname: { type: "string" },
  "allow-non-loopback": { type: "boolean" },
  reviewer: { type: "string" },
  trust: { type: "string", multiple: true },
} as const;

const LOOPBACK = /^(127\.\d{1,3}\.\d{1,3}\.\d{1,3}|::1|\[::1\])$/;

/**
 * The stylesheet and the page's modules, read at start. In the npm package's build they sit in
 * `dist/static/` beside the bundled module (tsdown.config.ts copies them), the same place
 * relative to this code as in the sources.
 */
async function readFiles(): Promise<StaticFiles> {
  const read = (name: string) => readFile(new URL(`./static/${name}`, import.meta.url), "utf8");
  const texts = await Promise.all(STATIC_FILES.map(read));
  return Object.fromEntries(STATIC_FILES.map((name, i) => [name, texts[i]])) as StaticFiles;
}

/** A context whose stdout collects lines, for running `verify` from the page. */
function capture(context: Context): { context: Context; lines: string[] } {
  const lines: string[] = [];
  const output = {
    write: (text: string) => {
      lines.push(...text.replace(/\n$/, "").split("\n"));
      return Promise.resolve();
    },
    line: (text = "") => {
      lines.push(...text.split("\n"));
      return Promise.resolve();
    },
  };
  return {
    context: { ...context, stdout: output, stderr: output, progress: undefined },
    lines,
  };
}

/**
 * The console's API over the open database: the key given on purpose (it signs nothing but
 * redactions), the key receipts are checked against (the first `--trust`, else that key, else the
 * stored one), the search, and `verify` run read-only with the page's `--trust` keys.
 */
async function consoleApi(
  context: Context,
  values: OptionValues,
  database: ReviewDatabase,
  reviewer: string,
): Promise<ConsoleApi> {
  const key = await configuredKey(context);
  const trusted = (values.trust as string[] | undefined) ?? [];
  const publicKey = trusted[0] ?? key?.publicKey ?? await storedPublicKey(database);
  const search = await prepareSearch(database.client);
  return new ConsoleApi({
    database,
    search,
    reviewer,
    key,
    publicKey,
    now: context.now,
    verify: async () => {
      const run = capture(context);
      const code = await verifyCommand(run.context, {
        database: values.database,
        "no-checkpoint": true,
        trust: trusted.length === 0 ? undefined : trusted,
        width: "200",
      });
      return { code, lines: run.lines };
    },
  });
}

/**
 * Runs `serve`.
 *
 * @param context Outputs, environment, clock.
 * @param values Parsed options.
 * @returns The exit status, once stopped.
 */
export async function serveCommand(context: Context, values: OptionValues): Promise<number> {
  const hostname = (values.hostname as string | undefined) ?? "127.0.0.1";
  if (!LOOPBACK.test(hostname)) {
    if (values["allow-non-loopback"] !== true) {
      throw new CliError(
        `Cannot serve on ${hostname}: the console binds to 127.0.0.1 only, unless ` +
          "--allow-non-loopback says otherwise",
        2,
      );
    }
    await context.stderr.line(
      `warning: serving on ${hostname}: anyone who can reach it and opens the link first sees every ` +
        "submission, over plain HTTP",
    );
  }
  const port = values.port === undefined ? 0 : integerOption(values, "port", 0, 65535);
  const reviewer = (values.reviewer as string | undefined) ?? context.env("BEACON_REVIEWER") ??
    "console";
  const serve = context.serve;
  if (serve === undefined) throw new CliError("Cannot serve: this runtime has no HTTP server", 1);
  const config = databaseConfig(values.database as string, context.env);
  const files = await readFiles();
  const database = await openForAppending(config, context.now);
  try {
    const api = await consoleApi(context, values, database, reviewer);
    const code = randomToken();
    // The handler needs the port the system chose; until the line below sets it (before the
    // URL is printed, so before anyone can know where to connect), every request gets a 503.
    let handler: (request: Request) => Promise<Response> = () =>
      Promise.resolve(new Response(null, { status: 503 }));
    const server = await serve({ hostname, port }, (request) => handler(request));
    const host = hostname.includes(":") && !hostname.startsWith("[") ? `[${hostname}]` : hostname;
    const authority = `${host}:${server.port}`;
    // Each link works once: the page spends its code at once and keeps the session only in its
    // memory (app.ts), so a reload or another tab needs the next link, printed as each is used.
    const nextCode = (next: string) =>
      context.stdout.line(
        `Beacon review console, next link (for a reload or another tab; opening it ends the ` +
          `session of the page open now): http://${authority}/#code=${next}`,
      );
    handler = consoleHandler({ authority, code, api, files, nextCode });
    await context.stdout.line(`Beacon review console: http://${authority}/#code=${code}`);
    await context.stderr.line(
      `Open the link above in one tab, at exactly http://${authority}/ (another name such as ` +
        "localhost is refused). Each link works once; after it is used, the next one is " +
        "printed here for a reload or another tab.",
    );
    await server.finished;
    return 0;
  } finally {
    await database.close();
  }
}
