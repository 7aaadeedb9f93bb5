/**
 * Ending with the command the reviewer started. The tool runs under a chain of processes:
 * `npm run review -- serve` is npm, then `sh -c`, then the launcher, then the tool; `bun run
 * review serve` is Bun, then `sh -c`, then the tool; `deno task review serve` is the task
 * runner, then the launcher, then the tool. A SIGTERM or SIGINT to the top of that chain need
 * not reach the bottom: npm and Bun pass it to `sh`, which dies of it without passing it on, and
 * the launcher and the tool are left running as orphans, holding the console's port.
 *
 * No JavaScript runtime offers a parent-death signal (Linux's `PR_SET_PDEATHSIG`), so each
 * long-running process checks that its parent is still the one it started under: when a parent
 * exits, the system re-parents its children (to PID 1 or a subreaper), and `process.ppid`
 * changes. The check reads one number four times a second and keeps no runtime alive.
 *
 * @module
 */
import process from "node:process";

/** How often the parent is checked, in milliseconds. */
const PERIOD_MS = 250;

/**
 * Calls `gone` once when the process that started this one has exited.
 *
 * @param gone What to do then: stop the console, or pass SIGTERM on to a child.
 * @returns Stops watching.
 */
export function whenParentExits(gone: () => void): () => void {
  const parent = process.ppid;
  const timer = setInterval(() => {
    if (process.ppid === parent) return;
    clearInterval(timer);
    gone();
  }, PERIOD_MS);
  // Deno's, Node's and Bun's timers all have `unref`: the check alone never keeps a process up.
  (timer as unknown as { unref?: () => void }).unref?.();
  return () => clearInterval(timer);
}
