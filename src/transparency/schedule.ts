/**
 * When the log is signed on a long-running server: once the database is open (the start), then
 * every `intervalMs` (`BEACON_CHECKPOINT_INTERVAL`, default 2 s) while it grows, and at graceful
 * shutdown. Platforms without a process that outlives a request sign from their own scheduler
 * instead: a Cron Trigger on Workers (src/adapter/workers/workers.ts), `Deno.cron` on Deno Deploy
 * (docs/deploy.md), each calling `Beacon.signLog()` once per run.
 *
 * @module
 */
import { unref } from "../timers.ts";
import { type LogSigner, TreeHeadRefused } from "./signer.ts";

/** A running schedule of heads. */
export interface TreeHeadSchedule {
  /**
   * Stops the timer, waits for a signing in progress, then signs a final head when `finalHead`
   * (a graceful shutdown on a database still trusted). Never rejects: failures go to `onError`.
   */
  stop(finalHead: boolean): Promise<void>;
}

/**
 * Signs now (the start), then every `intervalMs`, on an unref'd timer (it never keeps a process
 * alive); failures are reported through `onError` (a refusal once) and never stop the Beacon.
 *
 * @param signer The signer.
 * @param intervalMs Time between signings.
 * @param onError Receives storage errors and the refusal.
 * @returns The schedule.
 */
export function scheduleTreeHeads(
  signer: Pick<LogSigner, "sign">,
  intervalMs: number,
  onError: ((error: unknown) => void) | undefined,
): TreeHeadSchedule {
  let reported = false;
  const attempt = async () => {
    if (reported) return; // refused: nothing more to sign in this process
    try {
      await signer.sign();
    } catch (error) {
      reported = error instanceof TreeHeadRefused;
      onError?.(error);
    }
  };
  let busy = true;
  const run = () => {
    busy = true;
    return attempt().finally(() => busy = false);
  };
  let current = run();
  // A tick while a signing runs (a slow first read) is skipped, never queued behind it.
  const timer = setInterval(() => {
    if (!busy) current = run();
  }, intervalMs);
  unref(timer);
  return {
    async stop(finalHead) {
      clearInterval(timer);
      await current;
      if (finalHead) await attempt();
    },
  };
}
