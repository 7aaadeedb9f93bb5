/**
 * The reviewer's command line tool, the same on every runtime: `deno task review`, `npm run
 * review --`, `npx beacon-review` or `bun run review`, then `<command> [options]`.
 *
 * ```text
 * next                 the oldest new submission, shown
 * triage               the new submissions one by one, each marked with one key
 * list                 newest submissions, one line each, in pages
 * show <id>            one submission in full, rendered safely
 * mark <id>...         append a review event (status, note, or both)
 * export               NDJSON or CSV of submissions with their history
 * stats                counts by day, surface, kind, signature, status; top sources
 * verify               check digests and checkpoints; sign one with BEACON_SIGNING_KEY
 * monitor <url>        watch a transparency log's checkpoints from outside its database
 * redact <id>          remove one submission's content, with a recorded reason
 * key <action>         the signing key: generate, show, export, move-out (docs/keys.md)
 * serve                the web console on 127.0.0.1
 * ```
 *
 * It works on the server's database (`BEACON_DATABASE_URL`, `BEACON_DATABASE_AUTH_TOKEN`,
 * default `file:data/beacon.db`, or `--database URL`). Ids may be any unique prefix. Only
 * `mark`, `triage`, `redact`, `serve` and `verify` with a key write, and only by appending (and, for
 * `redact`, emptying one row's content, which the database allows only then). Exit status: 0
 * success, 1 failure or problems found, 2 usage error. docs/review.md is the reviewer's guide.
 *
 * This module touches no runtime API: each runtime's entry (`runtime/deno.ts`, `runtime/node.ts`
 * for Node and Bun) hands it a {@linkcode Context}, and each launcher (`runtime/launch_deno.ts`,
 * `runtime/launch_node.ts`) starts that entry with the narrowest permissions its runtime can
 * enforce (`runtime/permissions.ts`). Each command is a file of `commands/` (`serve` is
 * `console/serve.ts`).
 *
 * @module
 */
import type { ParseArgsConfig } from "node:util";
import { EXPORT_OPTIONS, exportCommand } from "./commands/export.ts";
import { KEY_OPTIONS, keyCommand } from "./commands/key.ts";
import { CliError, type Context } from "./io.ts";
import { LIST_OPTIONS, listCommand } from "./commands/list.ts";
import { MARK_OPTIONS, markCommand } from "./commands/mark.ts";
import { MONITOR_OPTIONS, monitorCommand } from "./commands/monitor.ts";
import { type OptionValues, parseCommand } from "./commands/options.ts";
import { REDACT_OPTIONS, redactCommand } from "./commands/redact.ts";
import { SERVE_OPTIONS, serveCommand } from "./console/serve.ts";
import { NEXT_OPTIONS, nextCommand, SHOW_OPTIONS, showCommand } from "./commands/show.ts";
import { STATS_OPTIONS, statsCommand } from "./commands/stats.ts";
import { TRIAGE_LEGEND, TRIAGE_OPTIONS, triageCommand } from "./commands/triage.ts";
import { VERIFY_OPTIONS, verifyCommand } from "./commands/verify.ts";

const COMMON_HELP = `
Common options:
  --database URL   libSQL URL (default: BEACON_DATABASE_URL, else file:data/beacon.db);
                   the token comes from BEACON_DATABASE_AUTH_TOKEN
  --width N        output width (default: the terminal's; else 100, and 80 for list)
  -h, --help       this help`;

const FILTER_HELP = `
Filters:
  --since WHEN     received at or after WHEN: 2025-06-01, 2025-06-01T08:30Z, 24h, 7d
  --until WHEN     received before WHEN (same forms)
  --kind K         structured | unstructured
  --surface S      native | a2a
  --key PREFIX     signer key fingerprint prefix (hex, with or without sha256:)
  --signed, --unsigned
  --intent TEXT    messages with exactly this intent
  --sender TEXT    messages whose sender name contains TEXT
  --source HASH    submissions from this salted source hash
  --unreviewed     only new submissions (same as --status new)
  --status S       latest status S: new|reviewed|follow-up|dismissed|escalated`;

interface Command {
  readonly usage: string;
  readonly options: NonNullable<ParseArgsConfig["options"]>;
  readonly positionals: number;
  readonly run: (context: Context, values: OptionValues, positionals: string[]) => Promise<number>;
}

const COMMANDS: Record<string, Command> = {
  next: {
    usage: `next [filters] [--trust PUBLIC_KEY]
  The oldest new submission (matching the filters), shown in full; --trust as for show.${FILTER_HELP}`,
    options: NEXT_OPTIONS,
    positionals: 0,
    run: nextCommand,
  },
  triage: {
    usage: `triage [filters] [--reviewer NAME] [--trust PUBLIC_KEY]
  Works through the new submissions, oldest first: shows one in full, reads one answer, appends
  the review event to that submission, shows the next. Answers, one per line:
    ${TRIAGE_LEGEND}
  A note (n) asks for its text and leaves the item new. NAME defaults to BEACON_REVIEWER;
  --trust as for show.${FILTER_HELP}`,
    options: TRIAGE_OPTIONS,
    positionals: 0,
    run: triageCommand,
  },
  list: {
    usage: `list [filters] [--search TEXT] [--limit N] [--after ID] [--columns sender,intent]
                [--page N] [--json]
  Newest first, one line each, cut to the width (80 when not a terminal). --search TEXT keeps
  what the console's search finds for TEXT (look-alike spellings folded, a final * a prefix).
  --limit defaults to 50; --after ID continues after that id (keep the same filters); the
  header repeats every --page lines (20).${FILTER_HELP}`,
    options: LIST_OPTIONS,
    positionals: 0,
    run: listCommand,
  },
  show: {
    usage: `show <id>
  One submission: receipt fields, signature result, review history, content. Any unique
  prefix of the receipt id will do. The receipt signature stored at intake is checked against
  --trust KEY (the public key of the Beacon's discovery document), else the public half of
  BEACON_SIGNING_KEY, else the server's own (its key file beside an embedded database, or a key
  kept in the database); nothing is signed.`,
    options: SHOW_OPTIONS,
    positionals: 1,
    run: (context, values, [id]) => showCommand(context, values, id),
  },
  mark: {
    usage: `mark <id>... [--status new|reviewed|follow-up|dismissed|escalated]
                [--note TEXT] [--corrects N] [--reviewer NAME]
  Appends a review event to each id: a status, a note, or both. --status new sets items back;
  --corrects N (with one id and --note) supersedes note #N of that submission's history, as
  show numbers it. NAME defaults to BEACON_REVIEWER.`,
    options: MARK_OPTIONS,
    positionals: Infinity,
    run: markCommand,
  },
  export: {
    usage: `export [filters] [--format ndjson|csv] [--out FILE]
  Oldest first, with each item's review history; FILE must not exist yet. CSV neutralises
  spreadsheet formulas and shows text escaped as show does.${FILTER_HELP}`,
    options: EXPORT_OPTIONS,
    positionals: 0,
    run: exportCommand,
  },
  stats: {
    usage: `stats [filters] [--top N] [--json]
  Counts by day, surface, kind, signature and status; the N busiest sources (default 10).${FILTER_HELP}`,
    options: STATS_OPTIONS,
    positionals: 0,
    run: statsCommand,
  },
  verify: {
    usage: `verify [--no-checkpoint] [--trust PUBLIC_KEY]... [--root SIZE:HEX]...
  Recomputes every digest, rebuilds the Merkle tree, checks every checkpoint (and every root
  kept elsewhere, given with --root). With BEACON_SIGNING_KEY set, appends a signed checkpoint
  when nothing is wrong and the log grew. Exit status 1 when anything is wrong, or when no
  checkpoint or root covers the store.`,
    options: VERIFY_OPTIONS,
    positionals: 0,
    run: verifyCommand,
  },
  monitor: {
    usage: `monitor <URL> --state FILE [--trust KEY] [--interval SECONDS] [--once]
  Watches a transparency log from outside its database: a Beacon's (URL: the Beacon; its log is
  at URL/beacon/0.1/log) or any C2SP log's (URL: its prefix). Fetches the checkpoint, verifies it
  under the trusted key, and checks from the log's tiles that it extends the checkpoint kept in
  FILE (RFC 9162 §2.1.4), then keeps it. The first run needs --trust: a Beacon's
  receiptSigning.publicKey or log.verifierKey, or any log's note verifier key, compared out of
  band; FILE then keeps it. Checks every --interval seconds (60) until stopped, or once with
  --once. Exit status 1 on a shrink, a fork or a checkpoint that does not verify; 3 when the log
  could not be checked (--once). Opens no database.`,
    options: MONITOR_OPTIONS,
    positionals: 1,
    run: (context, values, [url]) => monitorCommand(context, values, url),
  },
  redact: {
    usage: `redact <id> --reason TEXT [--reviewer NAME]
  Removes the content of one submission under a legal duty: appends a redaction record (who,
  when, why) and empties only the content; digest, size and Merkle leaf stay. Irreversible.`,
    options: REDACT_OPTIONS,
    positionals: 1,
    run: (context, values, [id]) => redactCommand(context, values, id),
  },
  key: {
    usage: `key generate [--out FILE] | show | export | move-out  [--key-file FILE]
  The Beacon's signing key (docs/keys.md).
    generate    a new key: into FILE (mode 0600, never over an existing file), or printed as
                the one line BEACON_SIGNING_KEY takes
    show        its public key and fingerprint (never the private key)
    export      the private key as that one line, for a platform secret or a backup
    move-out    moves a key kept in the database to a key file (--key-file FILE, else the one
                beside an embedded database), deletes it there and erases its bytes
  show and export read --key-file FILE, else BEACON_SIGNING_KEY, else the key file beside an
  embedded database (data/beacon.db: data/beacon.key), else the database's secrets table.`,
    options: KEY_OPTIONS,
    positionals: 1,
    run: (context, values, [action]) => keyCommand(context, values, action),
  },
  serve: {
    usage: `serve [--port N] [--hostname 127.0.0.1] [--allow-non-loopback] [--reviewer NAME]
                [--trust PUBLIC_KEY]...
  The web console. Binds to 127.0.0.1 (any free port by default) and prints the URL to open,
  with its access token; --trust is used by its verify, as for review verify. Stop it with
  Ctrl-C.`,
    options: SERVE_OPTIONS,
    positionals: 0,
    run: serveCommand,
  },
};

/** The usage text, naming the tool as this run was invoked (`deno task review`, …). */
const usage = (program: string) =>
  `Usage: ${program} <command> [options]

Commands:
  next          the oldest new submission, shown in full
  triage        work through the new submissions: one key marks each
  list          newest submissions, one line each, in pages
  show <id>     one submission in full, rendered safely
  mark <id>...  append a review event: --status S, --note TEXT, or both
  export        NDJSON or CSV of submissions with their history
  stats         counts by day, surface, kind, signature, status; busiest sources
  verify        check digests and checkpoints; sign one with BEACON_SIGNING_KEY
  monitor <url> watch a transparency log's checkpoints from outside its database
  redact <id>   remove one submission's content, with a recorded reason
  key <action>  the signing key: generate, show, export, move-out
  serve         the web console on 127.0.0.1
${COMMON_HELP}

"${program} <command> --help" describes a command. Guide: docs/review.md`;

/**
 * Runs the tool with `args` (without the program name).
 *
 * @param args The command line.
 * @param context Outputs, environment, clock.
 * @returns The exit status.
 *
 * @example
 * ```ts ignore
 * import { main } from "./main.ts";
 * import { denoContext } from "./runtime/deno.ts";
 *
 * const status = await main(["list", "--limit", "5"], denoContext());
 * if (status !== 0) throw new Error(`review list exited with ${status}`);
 * ```
 */
export async function main(args: string[], context: Context): Promise<number> {
  // Common options may come before the command too: `review --database URL list`.
  const leading: string[] = [];
  let at = 0;
  while (at < args.length && /^--(database|width)(=|$)/.test(args[at])) {
    leading.push(args[at]);
    if (!args[at].includes("=") && at + 1 < args.length) leading.push(args[++at]);
    at++;
  }
  const [name, ...afterName] = args.slice(at);
  const rest = [...afterName, ...leading];
  if (name === undefined) {
    await context.stderr.line(usage(context.program));
    return 2;
  }
  if (name === "help" || name === "--help" || name === "-h") {
    await context.stdout.line(usage(context.program));
    return 0;
  }
  const command = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
  try {
    if (command === undefined) throw new CliError(`Cannot run: unknown command ${name}`, 2);
    const { values, positionals } = parseCommand(rest, command.options, command.positionals);
    if (values.help === true) {
      await context.stdout.line(
        `Usage: ${context.program} ${command.usage}\n${COMMON_HELP}`,
      );
      return 0;
    }
    if (positionals.length < Math.min(1, command.positionals)) {
      throw new CliError(
        name === "monitor"
          ? "Cannot run monitor: the Beacon's URL or a log's prefix is required, such as https://beacon.example"
          : name === "key"
          ? "Cannot run key: say what to do: generate, show, export or move-out"
          : `Cannot run ${name}: a receipt id (or a unique prefix) is required`,
        2,
      );
    }
    return await command.run(context, values, positionals);
  } catch (error) {
    if (isBrokenPipe(error)) return 0; // the reader went away (| head)
    if (error instanceof CliError) {
      await context.stderr.line(`error: ${error.message}`);
      if (error.exitCode === 2) {
        await context.stderr.line(
          `Try: ${context.program} ${command === undefined ? "--help" : name + " --help"}`,
        );
      }
      return error.exitCode;
    }
    // Unexpected (a database error, say): its name and message, through the sanitising
    // output, never a stack trace of submitted data.
    await context.stderr.line(
      `error: ${(error as Error)?.name ?? "Error"}: ${(error as Error)?.message ?? String(error)}`,
    );
    return 1;
  }
}

/** A write to a pipe whose reader has gone: Deno's `BrokenPipe`, Node's and Bun's `EPIPE`. */
function isBrokenPipe(error: unknown): boolean {
  const { name, code } = (error ?? {}) as { name?: unknown; code?: unknown };
  return name === "BrokenPipe" || code === "EPIPE";
}
