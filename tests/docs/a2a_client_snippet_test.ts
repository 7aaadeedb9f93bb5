/**
 * The A2A JS SDK client program docs/a2a.md prints (the block marked `<!-- a2a-client: … -->`)
 * runs as printed against the real server and gets a SUBMITTED task. It runs on Deno with the
 * tests' pinned `@a2a-js/sdk` 1.3.0 (tools/test/deno.json), the version the docs name.
 */
import { assertEquals, assertMatch, assertStrictEquals } from "../support/assert.ts";
import { startServer } from "../support/server.ts";
import { childEnvironment } from "../../scripts/runtimes.ts";
import { ROOT } from "../../scripts/tools.ts";

const markdown = await Deno.readTextFile(`${ROOT}/docs/a2a.md`);
const printed = /<!-- a2a-client: client\.mjs -->\n\n```js\n([\s\S]*?)\n```/.exec(markdown)?.[1];

Deno.test("docs/a2a.md's SDK client sends a message and gets a submitted task", async () => {
  assertStrictEquals(typeof printed, "string", "docs/a2a.md prints the client");
  const directory = await Deno.makeTempDir({ prefix: "beacon-a2a-client-" });
  const server = await startServer();
  try {
    await Deno.writeTextFile(`${directory}/client.mjs`, printed + "\n");
    const output = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "--config",
        `${ROOT}/tools/test/deno.json`,
        "--allow-net=127.0.0.1",
        "--allow-env",
        "--allow-read",
        `${directory}/client.mjs`,
        server.url,
      ],
      clearEnv: true,
      env: childEnvironment(),
      stdout: "piped",
      stderr: "piped",
    }).output();
    const stderr = new TextDecoder().decode(output.stderr);
    assertStrictEquals(output.code, 0, stderr);
    const result = JSON.parse(new TextDecoder().decode(output.stdout).trim());
    assertMatch(result.id, /^[A-Za-z0-9_-]{30}$/);
    assertEquals(result.state, "TASK_STATE_SUBMITTED");
  } finally {
    await server.stop();
    await Deno.remove(directory, { recursive: true });
  }
});
