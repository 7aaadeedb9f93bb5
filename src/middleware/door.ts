/**
 * The one door out of the Beacon. Every response leaves through it, whether the pipeline made it
 * or not (an unparsable target, an invalid `Host`, a closed Beacon, storage that cannot be opened,
 * an entry's deadline): it gets the hardening headers (`response_headers.ts`) and produces exactly
 * one request log line (`src/http/request_log.ts`).
 *
 * Refusals take one way too: `refuse` (src/http/errors.ts) inside the pipeline, and
 * {@linkcode Door.turnAway} for an entry or adapter that answers before (or instead of) the
 * pipeline. Both record the code in the request log and build the native error response; the door
 * hardens it. Nothing else in the Beacon sets the hardening headers.
 *
 * "Exactly one" holds when an entry answers a request itself while the pipeline is still working
 * on it (the Workers deadline): the first answer through the door is logged and the late one is
 * not, so the log describes what the client received.
 *
 * @module
 */
import type { Context, RequestLog } from "../http/context.ts";
import type { Middleware } from "./compose.ts";
import { type Departure, logEntry, type RequestLogEntry } from "../http/request_log.ts";
import { harden } from "./response_headers.ts";
import { type ErrorCode, errorResponse, type RefusalOptions } from "../http/errors.ts";

/** A request as the door knows it: a Fetch `Request`, or only the method of one Fetch refused. */
export interface Arrival {
  readonly method: string;
}

/** The door of one Beacon: its log hook and clock. */
export interface Door {
  /** The pipeline's outermost middleware: whatever the chain answers leaves through the door. */
  readonly middleware: Middleware;
  /** Sends `response` for a request that the pipeline did not (or not yet) answer. */
  leave(
    request: Arrival,
    startedAt: number,
    log: RequestLog,
    response: Response,
    bytes?: number,
  ): Response;
  /**
   * Refuses a request the pipeline did not (or not yet) answer, with the native error for `code`:
   * a bad request line, a database not yet open, a deadline.
   */
  turnAway(
    request: Arrival,
    startedAt: number,
    code: ErrorCode,
    options?: RefusalOptions,
  ): Response;
}

/**
 * Builds the door.
 *
 * @example A response made outside the pipeline still leaves hardened, with one log line
 * ```ts
 * import assert from "node:assert/strict";
 * import { createDoor } from "./door.ts";
 *
 * const lines: { status?: number; outcome?: string; code?: unknown }[] = [];
 * const door = createDoor((entry) => lines.push(entry), () => 5);
 * const request = new Request("http://127.0.0.1/");
 * const response = door.turnAway(request, 0, "unavailable");
 * assert.equal(response.headers.get("x-content-type-options"), "nosniff");
 * assert.equal(lines.length, 1);
 * const { status, outcome, code } = lines[0];
 * assert.deepEqual({ status, outcome, code }, { status: 503, outcome: "failed", code: "unavailable" });
 * ```
 */
export function createDoor(
  log: ((entry: RequestLogEntry) => void) | undefined,
  now: () => number,
): Door {
  // Requests already answered, so a late second answer for one of them is not logged again.
  const answered = new WeakSet<Arrival>();
  const pass = (departure: Departure, response: Response): Response => {
    if (log === undefined || answered.has(departure.request)) return response;
    answered.add(departure.request);
    try {
      log(logEntry(departure, response.status, now()));
    } catch {
      // Logging must never change an answer.
    }
    return response;
  };
  const leaveContext = (context: Context, response: Response): Response => {
    harden(response);
    // Without a log there is nothing to describe: no departure record is built.
    if (log === undefined) return response;
    return pass({
      request: context.request,
      startedAt: context.startedAt,
      log: context.log,
      bytes: context.body?.byteLength ?? 0,
    }, response);
  };
  const leave: Door["leave"] = (request, startedAt, requestLog, response, bytes = 0) =>
    pass({ request, startedAt, log: requestLog, bytes }, harden(response));
  return {
    middleware: (context, next) => next().then((response) => leaveContext(context, response)),
    leave,
    turnAway: (request, startedAt, code, options = {}) => {
      const log: RequestLog = { code };
      if (options.outcome !== undefined) log.outcome = options.outcome;
      return leave(request, startedAt, log, errorResponse(code, options));
    },
  };
}
