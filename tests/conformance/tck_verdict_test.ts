/**
 * `deno task conformance` (scripts/conformance.ts) judges the official suite's JUnit report: only
 * the documented failures are allowed, and each is named in docs/a2a.md with its reason. The run
 * itself needs Python and the suite, and is CI's (`.ci/run`); here the verdict is checked on
 * reports shaped as pytest writes them.
 */
import { assert, assertEquals } from "../support/assert.ts";
import { EXPECTED_FAILURES, junitCases, verdict } from "../../scripts/conformance.ts";
import { ROOT } from "../../scripts/tools.ts";

const REPORT = `<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest">
<testcase classname="tests.compatibility.core_operations.test_artifacts.TestTextArtifact" name="test_task_has_text_artifact[jsonrpc]" time="0.1"><failure message="no artifacts">AssertionError</failure></testcase>
<testcase classname="tests.compatibility.core_operations.test_requirements" name="test_must_requirement[CORE-SEND-001-jsonrpc]" time="0.1" />
<testcase classname="tests.compatibility.core_operations.test_requirements" name="test_must_requirement[CORE-MULTI-002a-jsonrpc]" time="0.1"><failure message="x &amp; y">E</failure></testcase>
<testcase classname="tests.compatibility.jsonrpc.test_x" name="test_streaming[jsonrpc]" time="0"><skipped message="not declared" /></testcase>
<testcase classname="tests.compatibility.jsonrpc.test_y" name="test_new[jsonrpc]" time="0"><error message="boom">E</error></testcase>
</testsuite></testsuites>`;

Deno.test("the verdict: expected failures pass the run, any other failure is new", () => {
  const cases = junitCases(REPORT);
  assertEquals(cases.length, 5);
  const result = verdict(cases);
  assertEquals(result.passed, 1);
  assertEquals(result.skipped, 1);
  assertEquals(result.expected, [
    "test_artifacts.TestTextArtifact::test_task_has_text_artifact[jsonrpc]",
    "test_requirements::test_must_requirement[CORE-MULTI-002a-jsonrpc]",
  ]);
  assertEquals(result.unexpected, ["test_y::test_new[jsonrpc]"]);
  assertEquals(result.nowPassing, []);
});

Deno.test("docs/a2a.md names every expected failure of the suite", async () => {
  const docs = await Deno.readTextFile(`${ROOT}/docs/a2a.md`);
  assertEquals(EXPECTED_FAILURES.length, 7);
  for (const id of EXPECTED_FAILURES) {
    const [module, test] = id.replace(/\[.*$/, "").split("::");
    const requirement = /\[(CORE-[A-Z]+-\d+[a-z]?)-jsonrpc\]/.exec(id)?.[1];
    const named = requirement !== undefined
      ? `test_requirements.py::test_must_requirement[${requirement}]`
      : `${module.replace(".", ".py::")}::${test}`;
    assert(docs.includes(named), `docs/a2a.md names ${named}`);
  }
});
