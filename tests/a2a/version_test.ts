/** Version negotiation (A2A §3.6): header, then query; Major.Minor 1.0; patch ignored. */
import { assert, assertEquals, assertStrictEquals, assertThrows } from "../support/assert.ts";
import {
  A2A_VERSION,
  checkVersion,
  isSupportedVersion,
  requestedVersion,
} from "../../src/a2a/version.ts";
import { A2AFailure } from "../../src/a2a/errors.ts";

function request(query = "", headers: Record<string, string> = {}) {
  const url = new URL(`http://127.0.0.1/a2a/v1${query}`);
  return [new Request(url, { method: "POST", headers }), url] as const;
}

function refusal(query: string, headers: Record<string, string> = {}): A2AFailure {
  try {
    checkVersion(...request(query, headers));
  } catch (error) {
    assert(error instanceof A2AFailure);
    return error;
  }
  throw new Error("expected a refusal");
}

Deno.test("isSupportedVersion() accepts 1.0 with any patch and nothing else", () => {
  assertStrictEquals(A2A_VERSION, "1.0");
  for (const version of ["1.0", "1.0.0", "1.0.3", "1.0.123456789"]) {
    assert(isSupportedVersion(version), version);
  }
  for (
    const version of [
      undefined,
      "",
      "1",
      "0.3",
      "1.1",
      "2.0",
      "1.00",
      "01.0",
      "1.0.",
      "1.0.01",
      " 1.0",
      "1.0 ",
      "v1.0",
      "1.0-rc",
      "1.0.0.0",
      "1,0",
      "1.0.1234567890",
    ]
  ) {
    assert(!isSupportedVersion(version), String(version));
  }
});

Deno.test("requestedVersion() reads the header first, then the query parameter", () => {
  assertStrictEquals(requestedVersion(...request()), undefined);
  assertStrictEquals(requestedVersion(...request("?A2A-Version=1.0")), "1.0");
  assertStrictEquals(requestedVersion(...request("?a2a-VERSION=1.0")), "1.0");
  assertStrictEquals(
    requestedVersion(...request("?A2A-Version=1.0", { "A2A-Version": "0.3" })),
    "0.3",
  );
  assertStrictEquals(requestedVersion(...request("", { "a2a-version": "" })), "");
  assertStrictEquals(requestedVersion(...request("?A2A-Version=1.0&A2A-Version=1.0")), "");
});

Deno.test("checkVersion() passes 1.0 and refuses everything else with -32009", () => {
  checkVersion(...request("", { "A2A-Version": "1.0" }));
  checkVersion(...request("?A2A-Version=1.0.2"));
  assertThrows(() => checkVersion(...request()), A2AFailure);
  const absent = refusal("");
  assertStrictEquals(absent.kind, "versionNotSupported");
  assertEquals(absent.metadata, { supportedVersions: "1.0" });
  assert(absent.message.includes("0.3"));
  assertEquals(refusal("", { "A2A-Version": "0.3" }).metadata, {
    supportedVersions: "1.0",
    requestedVersion: "0.3",
  });
  assertEquals(
    refusal("", { "A2A-Version": "99.999.999" }).metadata.requestedVersion,
    "99.999.999",
  );
  for (const odd of ["1000.0", "1.0-beta", "<script>", "1.1.1.1", "x".repeat(200)]) {
    const failure = refusal("", { "A2A-Version": odd });
    assertEquals(failure.metadata, { supportedVersions: "1.0" });
    assert(!failure.message.includes(odd));
  }
});
