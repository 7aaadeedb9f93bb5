/**
 * The client address cannot be forgotten quietly: `beacon.fetch` without its second argument, or
 * with one that has no `remoteAddress`, is a type error (TS2554, TS2345), while a peer address or
 * the explicit `UNKNOWN_CLIENT` type-checks. Each program is checked by `deno check`, as a user's
 * file would be; and a caller whose types do not reach the Beacon (Hono's `mount` types its
 * handler's arguments as `any`) gets one warning line, once.
 */
import { assertEquals, assertMatch, assertStrictEquals } from "../support/assert.ts";
import { ROOT } from "../../scripts/tools.ts";

async function check(program: string): Promise<{ code: number; output: string }> {
  const directory = await Deno.makeTempDir({ dir: ROOT, prefix: ".type-test-" });
  try {
    const file = `${directory}/program.ts`;
    await Deno.writeTextFile(file, program);
    const result = await new Deno.Command(Deno.execPath(), {
      args: ["check", "--quiet", "--config", `${ROOT}/tools/test/deno.json`, file],
      env: { NO_COLOR: "1" },
      stdout: "piped",
      stderr: "piped",
    }).output();
    const decode = (bytes: Uint8Array) => new TextDecoder().decode(bytes);
    return {
      code: result.code,
      output: decode(result.stdout) + decode(result.stderr),
    };
  } finally {
    await Deno.remove(directory, { recursive: true });
  }
}

const HEAD = `import { createBeacon, UNKNOWN_CLIENT } from "../mod.ts";
const beacon = createBeacon({ database: { url: ":memory:" } });
const request = new Request("http://127.0.0.1/");
void UNKNOWN_CLIENT;
`;

Deno.test("beacon.fetch without the client address does not type-check", async () => {
  const omitted = await check(HEAD + "await beacon.fetch(request);\n");
  assertStrictEquals(omitted.code, 1, omitted.output);
  assertMatch(omitted.output, /TS2554 \[ERROR\]: Expected 2 arguments, but got 1/);

  const withoutAddress = await check(HEAD + 'await beacon.fetch(request, { scheme: "https" });\n');
  assertStrictEquals(withoutAddress.code, 1, withoutAddress.output);
  assertMatch(withoutAddress.output, /Property 'remoteAddress' is missing/);

  const undefinedAddress = await check(
    HEAD + "await beacon.fetch(request, { remoteAddress: undefined });\n",
  );
  assertStrictEquals(undefinedAddress.code, 1, undefinedAddress.output);
  assertMatch(undefinedAddress.output, /TS2322/);
});

Deno.test("a peer address or the explicit UNKNOWN_CLIENT type-checks", async () => {
  const given = await check(
    HEAD + 'await beacon.fetch(request, { remoteAddress: "192.0.2.1" });\n' +
      "await beacon.fetch(request, UNKNOWN_CLIENT);\n" +
      "await beacon.fetch(request, { remoteAddress: null });\n",
  );
  assertEquals({ code: given.code, output: given.output }, { code: 0, output: "" });
});

Deno.test("a call whose types did not reach the Beacon warns once, in one line", async () => {
  const program = `import { createBeacon } from ${JSON.stringify(`${ROOT}/mod.ts`)};
const beacon = createBeacon({ database: { url: ":memory:" }, log: () => {} });
const untyped = beacon.fetch as (request: Request, ...rest: unknown[]) => Promise<Response>;
for (let i = 0; i < 3; i++) {
  const response = await untyped(new Request("http://127.0.0.1/.well-known/autonomous-agent"));
  await response.body?.cancel();
}
await beacon.close();
`;
  const result = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--quiet", "--config", `${ROOT}/tools/test/deno.json`, "-A", "-"],
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const writer = result.stdin.getWriter();
  await writer.write(new TextEncoder().encode(program));
  await writer.close();
  const output = await result.output();
  assertStrictEquals(output.code, 0, new TextDecoder().decode(output.stderr));
  const lines = new TextDecoder().decode(output.stderr).trim().split("\n");
  assertEquals(lines.length, 1, lines.join("\n"));
  const warning = JSON.parse(lines[0]);
  assertEquals(warning.event, "warning");
  assertMatch(warning.message, /without a client address .* shares one rate-limit bucket/);
});
