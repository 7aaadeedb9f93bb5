/**
 * The domain errors: what the intake, the store and the limiters throw, protocol-neutral. Each
 * protocol maps them to its own answer in one table (src/http/errors.ts for the native surface,
 * src/a2a/errors.ts for JSON-RPC), so this module imports nothing.
 *
 * @module
 */
/**
 * Turns stack capture off for the next `Error` construction and returns the limit to restore.
 * A refusal is an expected outcome, answered and logged without its stack; capturing one was the
 * largest single cost of the refusal paths in CPU profiles. (`Error.stackTraceLimit` is a V8 and
 * JavaScriptCore setting; elsewhere this sets an unused property.)
 */
export function stackless(): number {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  return limit;
}

/**
 * The intake's own refusal, protocol-neutral like {@linkcode StorageError} and
 * {@linkcode OutcomeUnknownError}: the sender reused an idempotency key with other content
 * (docs/protocol-0.1.md §4.5). The native surface answers `422 idempotency_key_reused`; the A2A
 * surface never meets it (its key already names the content, so a match always replays).
 */
export class IdempotencyKeyReusedError extends Error {
  /** An expected outcome: made without a stack, as every refusal is. */
  constructor() {
    const limit = stackless();
    super("The idempotency key was used with other content");
    Error.stackTraceLimit = limit;
    this.name = "IdempotencyKeyReusedError";
  }
}

/** The storage layer failed; callers answer `503 unavailable` and no receipt. */
export class StorageError extends Error {
  /** Wraps the underlying error as `cause`, which is logged by nobody and sent to nobody. */
  constructor(cause?: unknown) {
    super("Storage is unavailable", { cause });
    this.name = "StorageError";
  }
}

/**
 * A commit whose outcome is unknown: it was sent to the database and no answer came by
 * the deadline, or the connection broke after the request left. The row may be stored, now or
 * later; nothing says it was not. Answered `503 outcome_unknown` (A2A: -32603 `OUTCOME_UNKNOWN`)
 * with the receipt id the row has if it is stored and its status URL, so the sender can learn the
 * truth instead of guessing (docs/protocol-0.1.md §9).
 */
export class OutcomeUnknownError extends Error {
  /** The receipt id minted for the submission before the commit. */
  readonly receiptId: string;
  /** The status URL of that id, once a protocol handler knows the public origin. */
  readonly status: string | undefined;

  /** `cause` is logged by nobody and sent to nobody. */
  constructor(receiptId: string, options: { cause?: unknown; status?: string } = {}) {
    super("The commit's outcome is unknown", { cause: options.cause });
    this.name = "OutcomeUnknownError";
    this.receiptId = receiptId;
    this.status = options.status;
  }

  /** The same error with the status URL made by `statusOf` (the handler's origin and route). */
  at(statusOf: (id: string) => string): OutcomeUnknownError {
    return new OutcomeUnknownError(this.receiptId, {
      cause: this.cause,
      status: statusOf(this.receiptId),
    });
  }
}

/**
 * An idempotent retry matched a stored row that carries no receipt signature verifying under the
 * Beacon's key: a database writer inserted or changed it (threat model, the keyless writer). The
 * Beacon neither signs such a row's receipt nor hands it out as its own, so the retry is answered
 * as a fault (`500 internal`, A2A -32603) and reported to the operator under this name.
 */
export class UnacknowledgedRowError extends Error {
  constructor() {
    super("An idempotent retry matched a row the Beacon never acknowledged");
    this.name = "UnacknowledgedRowError";
  }
}
