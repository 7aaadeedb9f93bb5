/**
 * Liveness and readiness answers for load balancers, orchestrators and supervisors
 * (docs/deploy.md, "Health and readiness"):
 *
 * - `GET /healthz`: the process serves. Always `200 ok`, whatever the database does: a
 *   supervisor that restarts on a failed liveness probe must not restart an instance for an
 *   outage a restart cannot fix.
 * - `GET /readyz`: this instance can accept a submission now: `200 ready`, or `503` with one
 *   word saying why not: `database` (not open, or it did not answer the probe within its
 *   deadline), `schema` (the database's schema is not the one this build migrates to: another
 *   release migrated it), `guard` (the database file changed under the running server), `closed`
 *   (shutting down).
 *
 * Both are plain text (a word and a newline) that `curl -f`, a systemd `ExecStartPost`, an HTTP
 * load balancer and a Kubernetes probe read alike. Neither spends a rate budget nor reads a body,
 * and neither touches submitted content: readiness reads the schema version, one row. Concurrent
 * probes share one database read ({@linkcode readinessProbe}), so polling every second from a
 * few balancers costs at most one small read at a time.
 *
 * @module
 */

/** Why this instance cannot accept a submission now (the one word of a `503` readiness answer). */
export type Unready = "database" | "schema" | "guard" | "closed";

/** How long readiness waits for the database at most (less where its own deadline is less). */
export const READINESS_DEADLINE_MS = 2_000;

/** A readiness check: undefined when ready. */
export type Readiness = () => Promise<Unready | undefined>;

/**
 * The answer of a probe: `200` with `word`, or `503` with the reason.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { probeResponse } from "./probe.ts";
 *
 * const unready = probeResponse("ready", "database");
 * assert.equal(unready.status, 503);
 * assert.equal(await unready.text(), "database\n");
 * assert.equal((await probeResponse("ok", undefined).text()), "ok\n");
 * ```
 */
export function probeResponse(word: "ok" | "ready", unready?: Unready): Response {
  return new Response(`${unready ?? word}\n`, {
    status: unready === undefined ? 200 : 503,
    headers: { "content-type": "text/plain; charset=utf-8" },
  });
}

/** What {@linkcode readinessProbe} looks at. */
export interface ReadinessOptions {
  /** Reads the database's schema version (one row), rejecting when it cannot. */
  readonly schemaVersion: () => Promise<number>;
  /** The version this build migrates to. */
  readonly expectedSchema: number;
  /** Whether the database file changed under the server (the file guard tripped). */
  readonly guardTripped: () => boolean;
  /** How long the database may take to answer before the instance counts as not ready. */
  readonly deadlineMs: number;
}

/**
 * The readiness check of an opened Beacon. One schema read at a time: probes that arrive while
 * one is under way share it, and each waits at most `deadlineMs` for it. A read that outlives
 * its probe's deadline is still shared by the next probes until it settles (the database call
 * has its own deadline), so a stalled database costs one pending read, not one per probe.
 */
export function readinessProbe(parts: ReadinessOptions): Readiness {
  let reading: Promise<Unready | undefined> | undefined;
  const read = () =>
    reading ??= parts.schemaVersion().then(
      (version) => version === parts.expectedSchema ? undefined : "schema" as const,
      () => "database" as const,
    ).finally(() => reading = undefined);
  return async () => {
    if (parts.guardTripped()) return "guard";
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<"database">((resolve) => {
      timer = setTimeout(() => resolve("database"), parts.deadlineMs);
    });
    try {
      return await Promise.race([read(), late]);
    } finally {
      clearTimeout(timer);
    }
  };
}
