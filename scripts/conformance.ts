/**
 * `deno task conformance`: runs the official A2A conformance suite (a2aproject/a2a-tck, branch
 * `1.0-dev`) over JSON-RPC at every level (MUST, SHOULD, MAY) against a Beacon started here on a
 * temporary embedded database and a free loopback port, with `BEACON_PUBLIC_URL` set to it.
 *
 * 1. The suite is read from `A2A_TCK_DIR` (default `../shared/a2a-tck`, beside the repository) and
 *    never written to: no bytecode, no pytest cache, the JUnit report goes to a temporary folder.
 * 2. Its Python dependencies go into a virtual environment kept under `A2A_TCK_VENV` (default
 *    `~/.cache/beacon/a2a-tck-venv`), built with `pip` once per requirement list. `pip` uses the
 *    machine's own configuration (index, wheel mirror, certificates).
 * 3. The run passes when the suite's only failures are {@linkcode EXPECTED_FAILURES}, each named
 *    with its reason in docs/a2a.md ("The official conformance suite"). Any other failure, or a
 *    suite that did not run, fails. An expected failure that now passes is reported, so the list
 *    can be shortened.
 *
 * Rate limits are off for the run: the suite sends dozens of messages from one address within
 * seconds, and a `429` would hide every verdict behind it.
 *
 * @module
 */
import { SERVE_CONFIG } from "../src/cli/permissions.ts";
import { freePort } from "./runtimes.ts";
import { ROOT } from "./tools.ts";

/** The suite's Python dependencies (its pyproject.toml, less the HTML report and Gherkin tools). */
export const TCK_REQUIREMENTS: readonly string[] = [
  "pytest>=8",
  "pytest-asyncio>=0.23",
  "httpx>=0.27",
  "grpcio>=1.60",
  "protobuf>=6.30,<7",
  "googleapis-common-protos>=1.62",
  "jsonschema>=4.21",
  "Jinja2>=3.1",
];

/**
 * The suite's failures the Beacon has by design or through a defect of the suite, as
 * `<module>::<test>`; docs/a2a.md gives each one's reason.
 */
export const EXPECTED_FAILURES: readonly string[] = [
  "test_artifacts.TestTextArtifact::test_task_has_text_artifact[jsonrpc]",
  "test_artifacts.TestFileArtifact::test_task_has_file_artifact[jsonrpc]",
  "test_artifacts.TestFileUrlArtifact::test_task_has_file_url_artifact[jsonrpc]",
  "test_artifacts.TestDataArtifact::test_task_has_data_artifact[jsonrpc]",
  "test_artifacts.TestMessageResponse::test_returns_message_with_text_part[jsonrpc]",
  "test_requirements::test_must_requirement[CORE-SEND-003-jsonrpc]",
  "test_requirements::test_must_requirement[CORE-MULTI-002a-jsonrpc]",
];

/** One test case of a JUnit report. */
export interface CaseResult {
  /** `<last part of the classname>::<name>`, as {@linkcode EXPECTED_FAILURES} spells it. */
  readonly id: string;
  readonly outcome: "passed" | "failed" | "skipped";
}

function unescapeXml(text: string): string {
  return text.replace(
    /&(quot|apos|lt|gt|amp);/g,
    (_, name: string) => ({ quot: '"', apos: "'", lt: "<", gt: ">", amp: "&" })[name]!,
  );
}

/**
 * The test cases of a pytest JUnit XML report. A case with a `<failure>` or `<error>` child
 * failed; with `<skipped>` it was skipped (pytest writes expected failures, `xfail`, so too).
 */
export function junitCases(xml: string): CaseResult[] {
  const cases: CaseResult[] = [];
  for (const match of xml.matchAll(/<testcase\b([^>]*?)(\/>|>([\s\S]*?)<\/testcase>)/g)) {
    const attribute = (name: string) =>
      unescapeXml(new RegExp(`\\b${name}="([^"]*)"`).exec(match[1])?.[1] ?? "");
    const module = attribute("classname").replace(/^tests\.compatibility\.[a-z_]+\./, "");
    const body = match[3] ?? "";
    const outcome = /<(failure|error)\b/.test(body)
      ? "failed"
      : /<skipped\b/.test(body)
      ? "skipped"
      : "passed";
    cases.push({ id: `${module}::${attribute("name")}`, outcome });
  }
  return cases;
}

/** The verdict on a run: which failures are new, which expected ones now pass. */
export function verdict(cases: readonly CaseResult[]): {
  passed: number;
  skipped: number;
  expected: string[];
  unexpected: string[];
  nowPassing: string[];
} {
  const failed = cases.filter((c) => c.outcome === "failed").map((c) => c.id);
  return {
    passed: cases.filter((c) => c.outcome === "passed").length,
    skipped: cases.filter((c) => c.outcome === "skipped").length,
    expected: failed.filter((id) => EXPECTED_FAILURES.includes(id)),
    unexpected: failed.filter((id) => !EXPECTED_FAILURES.includes(id)),
    nowPassing: EXPECTED_FAILURES.filter((id) =>
      cases.some((c) => c.id === id && c.outcome === "passed")
    ),
  };
}

async function exists(path: string): Promise<boolean> {
  return await Deno.stat(path).then(() => true, () => false);
}

async function run(command: string, args: string[], options: Deno.CommandOptions = {}) {
  const status = await new Deno.Command(command, { args, ...options }).spawn().status;
  if (!status.success) throw new Error(`${command} ${args.join(" ")} exited with ${status.code}`);
}

/** Builds (once per requirement list) the virtual environment, and returns its `python`. */
async function ensureVenv(folder: string): Promise<string> {
  const python = `${folder}/bin/python`;
  const stamp = `${folder}/.beacon-requirements`;
  const wanted = TCK_REQUIREMENTS.join("\n") + "\n";
  if (await Deno.readTextFile(stamp).then((text) => text === wanted, () => false)) return python;
  console.error(`Building the suite's Python environment in ${folder} (pip)`);
  await Deno.remove(folder, { recursive: true }).catch(() => {});
  await Deno.mkdir(folder.replace(/\/[^/]*$/, "") || "/", { recursive: true });
  await run("python3", ["-m", "venv", folder]);
  await run(python, ["-m", "pip", "install", "--quiet", ...TCK_REQUIREMENTS]);
  await Deno.writeTextFile(stamp, wanted);
  return python;
}

/** Starts `deno task start` on `folder`'s database and waits for its "listening" line. */
async function startBeacon(folder: string, port: number) {
  const origin = `http://127.0.0.1:${port}`;
  const child = new Deno.Command(Deno.execPath(), {
    // What `deno task start` runs.
    args: [
      "run",
      `--config=${SERVE_CONFIG}`,
      "--allow-env",
      "--allow-read",
      "--allow-run",
      `${ROOT}/src/cli/launch.ts`,
    ],
    cwd: folder,
    env: {
      PORT: String(port),
      BEACON_HOSTNAME: "127.0.0.1",
      BEACON_PUBLIC_URL: origin,
      BEACON_DATABASE_URL: `file:${folder}/beacon.db`,
      BEACON_RATE_LIMIT: "off",
      BEACON_STATUS_RATE_LIMIT: "off",
      BEACON_LOG: "off",
    },
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const lines = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  while (!buffer.includes('"event":"listening"')) {
    const { value, done } = await lines.read();
    if (done) throw new Error("The Beacon stopped before it listened");
    buffer += value;
  }
  void (async () => {
    while (!(await lines.read()).done) { /* drain */ }
  })();
  return { origin, child };
}

async function main(): Promise<number> {
  const suite = Deno.env.get("A2A_TCK_DIR") ?? `${ROOT}/../shared/a2a-tck`;
  if (!(await exists(`${suite}/tests/compatibility`))) {
    console.error(`No A2A conformance suite at ${suite} (set A2A_TCK_DIR)`);
    return 2;
  }
  const home = Deno.env.get("HOME") ?? "/tmp";
  const python = await ensureVenv(
    Deno.env.get("A2A_TCK_VENV") ?? `${home}/.cache/beacon/a2a-tck-venv`,
  );
  const work = await Deno.makeTempDir({ prefix: "beacon-conformance-" });
  const started = Date.now();
  const beacon = await startBeacon(work, freePort());
  try {
    const report = `${work}/junit.xml`;
    const pytest = await new Deno.Command(python, {
      args: [
        "-m",
        "pytest",
        "tests/compatibility/",
        `--sut-host=${beacon.origin}`,
        "--transport=jsonrpc",
        "--tb=short",
        "-q",
        "-p",
        "no:cacheprovider",
        `--junitxml=${report}`,
      ],
      cwd: suite,
      env: { PYTHONDONTWRITEBYTECODE: "1" },
    }).spawn().status;
    const xml = await Deno.readTextFile(report).catch(() => "");
    const cases = junitCases(xml);
    const result = verdict(cases);
    const seconds = ((Date.now() - started) / 1000).toFixed(0);
    for (const id of result.nowPassing) {
      console.log(`Now passes (remove it from the expected failures and docs/a2a.md): ${id}`);
    }
    for (const id of result.unexpected) console.log(`New failure: ${id}`);
    console.log(
      `A2A conformance suite (JSON-RPC, all levels): ${result.passed} passed, ` +
        `${result.expected.length} expected failures, ${result.unexpected.length} new failures, ` +
        `${result.skipped} skipped or xfail (${seconds} s)`,
    );
    if (cases.length === 0) {
      console.log(`The suite ran no tests (pytest exit ${pytest.code})`);
      return 1;
    }
    return result.unexpected.length === 0 ? 0 : 1;
  } finally {
    beacon.child.kill("SIGTERM");
    await beacon.child.status;
    await Deno.remove(work, { recursive: true }).catch(() => {});
  }
}

if (import.meta.main) Deno.exit(await main());
