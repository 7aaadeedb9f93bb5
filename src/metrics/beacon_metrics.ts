/**
 * What the Beacon counts for its operator (docs/deploy.md, "Metrics"), on one registry:
 *
 * | series | type | fed by |
 * |---|---|---|
 * | `beacon_submissions_accepted_total{surface}` | counter | the door: answers whose outcome is `accepted` (`native`, `a2a`) |
 * | `beacon_requests_refused_total{route,code}` | counter | the door: answers with an error code (native code, or JSON-RPC number) |
 * | `beacon_commit_duration_seconds` | histogram | the store: each commit that stored its batch |
 * | `beacon_commit_rows` | histogram | the store: rows per commit |
 * | `beacon_outcome_unknown_total` | counter | the store: commits sent whose outcome is unknown |
 * | `beacon_database_errors_total{cause}` | counter | `onError`: database errors, by cause key (`databaseErrorKey`, the classification the error log's words come from) |
 * | `beacon_file_guard_state{state}` | gauge | the file guard (`guarding`, `unchecked`, `tripped`; none for a remote database) |
 * | `beacon_log_uncovered_seconds` | gauge | the log signer: seconds since the oldest submission this instance acknowledged that no checkpoint covers yet |
 *
 * Every label value is one of the Beacon's own names or codes, so the series stay few.
 *
 * @module
 */
import { databaseErrorKey } from "../database_error.ts";
import { type Counter, type Histogram, Registry } from "./registry.ts";

/** What the door tells the metrics of one answer (a `RequestLogEntry`, structurally). */
export interface AnsweredRequest {
  readonly route: string;
  readonly outcome: string;
  readonly code?: string | number;
}

/** The surface a route's accepted submissions count under. */
const SURFACES: Readonly<Record<string, string>> = { "native.submit": "native", a2a: "a2a" };

/** Commit durations: 1 ms (an embedded commit) to 10 s (the default database deadline). */
const COMMIT_SECONDS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** Rows per commit: the group committer gathers up to a few hundred. */
const COMMIT_ROWS = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512];

/** Error names that are database errors (their cause says which). */
const DATABASE_ERRORS = new Set(["StorageError", "OutcomeUnknownError", "DatabaseFileCheckFailed"]);

/** Guard states, each a series of the gauge (1 for the current one). */
const GUARD_STATES = ["guarding", "unchecked", "tripped"] as const;

/**
 * The Beacon's metrics. `guardState` reads the file guard's state (undefined: no guard);
 * `uncoveredSeconds` the log signer's lag (undefined: not open, or heads are off).
 */
export class BeaconMetrics {
  readonly registry = new Registry();
  readonly accepted: Counter = this.registry.counter(
    "beacon_submissions_accepted_total",
    "Submissions stored and acknowledged, by surface (native, a2a).",
    ["surface"],
  );
  readonly refused: Counter = this.registry.counter(
    "beacon_requests_refused_total",
    "Requests answered with an error, by route and code (native code or JSON-RPC number).",
    ["route", "code"],
  );
  readonly commitSeconds: Histogram = this.registry.histogram(
    "beacon_commit_duration_seconds",
    "Time from sending a batch's commit to its answer, for commits that stored their batch.",
    COMMIT_SECONDS,
  );
  readonly commitRows: Histogram = this.registry.histogram(
    "beacon_commit_rows",
    "Rows per commit.",
    COMMIT_ROWS,
  );
  readonly outcomeUnknown: Counter = this.registry.counter(
    "beacon_outcome_unknown_total",
    "Commits sent whose outcome is unknown (answered 503 outcome_unknown / OUTCOME_UNKNOWN).",
  );
  readonly databaseErrors: Counter = this.registry.counter(
    "beacon_database_errors_total",
    "Database errors reported to the operator, by cause (refused, timeout, reset, http_NNN, " +
      "sqlite_*, …).",
    ["cause"],
  );

  constructor(
    guardState: () => string | undefined,
    uncoveredSeconds: () => number | undefined = () => undefined,
  ) {
    this.registry.gauge(
      "beacon_log_uncovered_seconds",
      "Seconds since the oldest submission this instance acknowledged that no checkpoint covers " +
        "yet (0 when all are covered).",
      () => {
        const seconds = uncoveredSeconds();
        return seconds === undefined ? [] : [[{}, seconds] as const];
      },
    );
    this.registry.gauge(
      "beacon_file_guard_state",
      "The embedded database file guard: 1 for its current state (none for a remote database).",
      () => {
        const state = guardState();
        return state === undefined
          ? []
          : GUARD_STATES.map((name) => [{ state: name }, name === state ? 1 : 0] as const);
      },
    );
  }

  /** Counts one answer (the door calls it for every request). */
  answered(entry: AnsweredRequest): void {
    if (entry.outcome === "accepted") {
      this.accepted.inc({ surface: SURFACES[entry.route] ?? entry.route });
    } else if (entry.code !== undefined) {
      this.refused.inc({ route: entry.route, code: String(entry.code) });
    }
  }

  /** Counts an error reported to the operator, when it is a database error. */
  error(error: unknown): void {
    const name = (error as { name?: unknown })?.name;
    if (typeof name === "string" && DATABASE_ERRORS.has(name)) {
      this.databaseErrors.inc({
        cause: databaseErrorKey((error as { cause?: unknown }).cause ?? error),
      });
    }
  }

  /** Counts one commit that stored its batch. */
  committed(rows: number, seconds: number): void {
    this.commitRows.observe(rows);
    this.commitSeconds.observe(seconds);
  }
}
