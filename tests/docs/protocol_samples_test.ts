/**
 * The verification programs printed in docs/protocol-0.1.md (§6.3 for a single receipt, §6.4 for
 * a batch receipt with its inclusion proof, §6.5 for a signed tree head) are run exactly as printed, on Deno and on Node.js: a
 * reader who copies one gets `true`, and a receipt with one signed field changed gets `false`.
 * A sample that drifted from the format would fail here before it failed a reader.
 */
import { assertEquals } from "../support/assert.ts";
import { nodeExecutable } from "../../scripts/tools.ts";

const PROTOCOL = new URL("../../docs/protocol-0.1.md", import.meta.url);

/** The first ```js block after the heading that starts with `heading`. */
async function sample(heading: string): Promise<string> {
  const text = await Deno.readTextFile(PROTOCOL);
  const start = text.indexOf(`\n${heading}`);
  if (start < 0) throw new Error(`docs/protocol-0.1.md has no heading ${heading}`);
  const open = text.indexOf("\n```js\n", start);
  const close = text.indexOf("\n```\n", open + 1);
  if (open < 0 || close < 0) throw new Error(`no js sample after ${heading}`);
  return text.slice(open + "\n```js\n".length, close + 1);
}

/** What the program prints on `runtime`, run as an ES module from standard input. */
async function run(runtime: "deno" | "node", program: string): Promise<string> {
  const [command, args] = runtime === "deno"
    ? [Deno.execPath(), ["run", "--no-config", "-"]]
    : [await nodeExecutable(), ["--input-type=module", "-"]];
  const child = new Deno.Command(command, {
    args,
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const writer = child.stdin.getWriter();
  await writer.write(new TextEncoder().encode(program));
  await writer.close();
  const output = await child.output();
  const stderr = new TextDecoder().decode(output.stderr);
  assertEquals(output.success, true, `${runtime} failed: ${stderr}`);
  return new TextDecoder().decode(output.stdout).trim();
}

/** The program with its first occurrence of `from` replaced, which must exist. */
function tampered(program: string, from: string, to: string): string {
  if (!program.includes(from)) throw new Error(`the sample no longer contains ${from}`);
  return program.replace(from, to);
}

for (const runtime of ["deno", "node"] as const) {
  Deno.test(`protocol §6.3: the single-receipt sample prints true on ${runtime}, false when tampered`, async () => {
    const program = await sample("### 6.3");
    assertEquals(await run(runtime, program), "true");
    assertEquals(await run(runtime, tampered(program, `"size": 49`, `"size": 50`)), "false");
  });

  Deno.test(`protocol §6.5: the tree-head sample prints true on ${runtime}, false when tampered`, async () => {
    const program = await sample("### 6.5");
    assertEquals(await run(runtime, program), "true");
    // A signed member, and a head naming another key than the one recorded, each break it.
    assertEquals(await run(runtime, tampered(program, `"treeSize": 3`, `"treeSize": 2`)), "false");
    assertEquals(
      await run(
        runtime,
        tampered(
          program,
          `"publicKey": "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"`,
          `"publicKey": "A${"A".repeat(42)}"`,
        ),
      ),
      "false",
    );
  });

  Deno.test(`protocol §6.6: the receipt-in-the-log sample prints true on ${runtime}, false when tampered`, async () => {
    const program = await sample("### 6.6");
    assertEquals(await run(runtime, program), "true");
    // The receipt's time, its leaf's place, the checkpoint's size, and a proof hash each break it.
    assertEquals(
      await run(
        runtime,
        tampered(program, `"2026-12-07T09:12:05.102Z"`, `"2026-12-07T09:12:05.103Z"`),
      ),
      "false",
    );
    assertEquals(await run(runtime, tampered(program, `"index": 2`, `"index": 3`)), "false");
    assertEquals(await run(runtime, tampered(program, `"5\\n" +`, `"6\\n" +`)), "false");
    assertEquals(await run(runtime, tampered(program, `"d4bcae5f`, `"d4bcae5e`)), "false");
  });

  Deno.test(`protocol §6.4: the batch-receipt sample prints true on ${runtime}, false when tampered`, async () => {
    const program = await sample("### 6.4");
    assertEquals(await run(runtime, program), "true");
    // A signed field, the leaf's position, and a proof cut short each break it.
    assertEquals(await run(runtime, tampered(program, `"size": 41`, `"size": 42`)), "false");
    assertEquals(await run(runtime, tampered(program, `"index": 3`, `"index": 2`)), "false");
    assertEquals(
      await run(
        runtime,
        tampered(program, `"kkP7KYvbtKwK9g6wY-O-Nqv-HwluqJ-c6uxIzEwNXMg",\n`, ""),
      ),
      "false",
    );
  });
}
