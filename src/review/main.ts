/**
 * The reviewer's command line tool: `deno task review <command> [options]`.
 *
 * ```text
 * list                 newest submissions, one line each
 * show <id>            one submission in full, rendered safely
 * export               NDJSON of submissions, to stdout or --out FILE
 * mark <id> --status S append a review event (reviewed, dismissed, escalated)
 * stats                counts by day, surface, kind, signature, status; top sources
 * verify               check digests and checkpoints, append a signed checkpoint
 * ```
 *
 * It works on the server's database (`BEACON_DATABASE_URL`, `BEACON_DATABASE_AUTH_TOKEN`,
 * default `file:data/beacon.db`, or `--database URL`). Only `mark` and `verify` write, and
 * only by appending. Exit status: 0 success, 1 failure or problems found, 2 usage error.
 * docs/review.md is the reviewer's guide.
 *
 * @module
 */
import type { ParseArgsConfig } from "node:util";
import { EXPORT_OPTIONS, exportCommand } from "./export.ts";
import { CliError, type Context, textOutput } from "./io.ts";
import { LIST_OPTIONS, listCommand } from "./list.ts";
import { MARK_OPTIONS, markCommand } from "./mark.ts";
import { type OptionValues, parseCommand } from "./options.ts";
import { SHOW_OPTIONS, showCommand } from "./show.ts";
import { STATS_OPTIONS, statsCommand } from "./stats.ts";
import { VERIFY_OPTIONS, verifyCommand } from "./verify.ts";

const COMMON_HELP = `
Common options:
  --database URL   libSQL URL (default: BEACON_DATABASE_URL, else file:data/beacon.db);
                   the token comes from BEACON_DATABASE_AUTH_TOKEN
  --width N        output width (default: the terminal's, else 100)
  -h, --help       this help`;

const FILTER_HELP = `
Filters:
  --since WHEN     received at or after WHEN: 2025-06-01, 2025-06-01T08:30Z, 24h, 7d
  --kind K         structured | unstructured
  --surface S      native | a2a
  --key PREFIX     signer key fingerprint prefix (hex, with or without sha256:)
  --unreviewed     only submissions without any review event
  --status S       only submissions whose latest status is S (reviewed|dismissed|escalated)`;

interface Command {
  readonly usage: string;
  readonly options: NonNullable<ParseArgsConfig["options"]>;
  readonly positionals: number;
  readonly run: (context: Context, values: OptionValues, positionals: string[]) => Promise<number>;
}

const COMMANDS: Record<string, Command> = {
  list: {
    usage: `review list [filters] [--limit N] [--json]
  Newest submissions first, one line each. --limit defaults to 50.${FILTER_HELP}`,
    options: LIST_OPTIONS,
    positionals: 0,
    run: listCommand,
  },
  show: {
    usage: `review show <receipt id>
  One submission: receipt fields, signature result, review history, content.`,
    options: SHOW_OPTIONS,
    positionals: 1,
    run: (context, values, [id]) => showCommand(context, values, id),
  },
  export: {
    usage: `review export [filters] [--out FILE]
  NDJSON, oldest first; FILE must not exist yet.${FILTER_HELP}`,
    options: EXPORT_OPTIONS,
    positionals: 0,
    run: exportCommand,
  },
  mark: {
    usage: `review mark <receipt id> --status reviewed|dismissed|escalated [--note TEXT]
                [--reviewer NAME]
  Appends a review event. NAME defaults to BEACON_REVIEWER.`,
    options: MARK_OPTIONS,
    positionals: 1,
    run: (context, values, [id]) => markCommand(context, values, id),
  },
  stats: {
    usage: `review stats [filters] [--top N] [--json]
  Counts by day, surface, kind, signature and status; the N busiest sources (default 10).${FILTER_HELP}`,
    options: STATS_OPTIONS,
    positionals: 0,
    run: statsCommand,
  },
  verify: {
    usage: `review verify [--no-checkpoint] [--trust PUBLIC_KEY]... [--root SIZE:HEX]...
  Recomputes every digest, rebuilds the Merkle tree, checks every checkpoint (and every root
  kept elsewhere, given with --root), and appends a signed checkpoint when nothing is wrong.
  Exit status 1 when anything is wrong.`,
    options: VERIFY_OPTIONS,
    positionals: 0,
    run: verifyCommand,
  },
};

const USAGE = `Usage: deno task review <command> [options]

Commands:
  list        newest submissions, one line each
  show <id>   one submission in full, rendered safely
  export      NDJSON of submissions to stdout or --out FILE
  mark <id>   append a review event: --status reviewed|dismissed|escalated [--note TEXT]
  stats       counts by day, surface, kind, signature, status; busiest sources
  verify      check digests and checkpoints; append a signed checkpoint
${COMMON_HELP}

"deno task review <command> --help" describes a command. Guide: docs/review.md`;

/**
 * Runs the tool with `args` (without the program name).
 *
 * @param args The command line.
 * @param context Outputs, environment, clock.
 * @returns The exit status.
 *
 * @example
 * ```ts ignore
 * import { denoContext, main } from "./main.ts";
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
    await context.stderr.line(USAGE);
    return 2;
  }
  if (name === "help" || name === "--help" || name === "-h") {
    await context.stdout.line(USAGE);
    return 0;
  }
  const command = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
  try {
    if (command === undefined) throw new CliError(`Cannot run: unknown command ${name}`, 2);
    const { values, positionals } = parseCommand(rest, command.options, command.positionals);
    if (values.help === true) {
      await context.stdout.line(`Usage: deno task ${command.usage}\n${COMMON_HELP}`);
      return 0;
    }
    if (positionals.length < command.positionals) {
      throw new CliError(`Cannot run ${name}: a receipt id is required`, 2);
    }
    return await command.run(context, values, positionals);
  } catch (error) {
    if (error instanceof Deno.errors.BrokenPipe) return 0; // the reader went away (| head)
    if (error instanceof CliError) {
      await context.stderr.line(`error: ${error.message}`);
      if (error.exitCode === 2) {
        await context.stderr.line(
          `Try: deno task review ${command === undefined ? "--help" : name + " --help"}`,
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

/**
 * The context of a real run: Deno's stdout and stderr, the process environment and clock.
 *
 * @returns The context.
 */
export function denoContext(): Context {
  return {
    stdout: textOutput(Deno.stdout),
    stderr: textOutput(Deno.stderr),
    progress: Deno.stderr.isTerminal() ? Deno.stderr : undefined,
    terminalColumns: Deno.stdout.isTerminal() ? Deno.consoleSize().columns : undefined,
    env: (name) => Deno.env.get(name),
    now: Date.now,
  };
}

if (import.meta.main) {
  Deno.exit(await main(Deno.args, denoContext()));
}
