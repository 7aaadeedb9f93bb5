/**
 * The bench's own instruments, against real surfaces: this process's `/proc` entries, a real
 * `deno run --cpu-prof` child, and `node:util` argument parsing.
 */
import { assert, assertEquals, assertThrows } from "../../tests/support/assert.ts";
import { readProfiles } from "../lib/cpuprofile.ts";
import { nonNegative, parseOptions, positive } from "../lib/options.ts";
import { readThreads, startThreadWatch, statTicks } from "../lib/threads.ts";

Deno.test("statTicks reads utime + stime after a command name holding spaces and parentheses", () => {
  const line = "42 (a (weird) name) S 1 2 3 4 5 6 7 8 9 10 17 5 0 0 20 0 1 0 100 200 300";
  assertEquals(statTicks(line), 22);
});

Deno.test("readThreads lists this process's main thread, whose tid is the pid", () => {
  const threads = readThreads(Deno.pid);
  const main = threads.find((t) => t.tid === Deno.pid);
  assert(main, "the main thread is one of the tasks");
  assert(main.name.length > 0 && main.name.length <= 15, `comm is a short name: ${main.name}`);
  assert(threads.length >= 2, "Deno runs helper threads beside the main one");
});

/** A `deno run` child that spins on its main thread until it used `ticks` of CPU, then idles. */
const SPINNER = `
const stat = () => Deno.readTextFileSync("/proc/self/task/" + Deno.pid + "/stat");
const ticks = () => { const f = stat().slice(stat().lastIndexOf(")") + 2).split(" ");
  return Number(f[11]) + Number(f[12]); };
const start = ticks(); const until = Date.now() + 20000; let x = 0;
while (ticks() - start < 20 && Date.now() < until) { for (let i = 0; i < 1e5; i++) x += Math.sqrt(i); }
console.log("spun " + (x > 0));
setInterval(() => {}, 1000);
`;

Deno.test("startThreadWatch attributes a deno run process's JavaScript to its main thread", async () => {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["eval", SPINNER],
    stdout: "piped",
    stderr: "null",
  }).spawn();
  try {
    // The runtime's startup threads settle before the window opens.
    const finish = startThreadWatch(child.pid);
    const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
    const { value } = await reader.read();
    const cpu = finish();
    reader.releaseLock();
    assertEquals(value?.trim(), "spun true");
    assert(cpu.mainTicks >= 10, `the spinning shows in the main thread: ${JSON.stringify(cpu)}`);
    const mainKey = Object.keys(cpu.byName).find((k) => k.startsWith("main ("));
    assertEquals(cpu.byName[mainKey!], cpu.mainTicks);
    assert(cpu.threadTicks >= cpu.mainTicks);
    // The kernel scales a thread's and the process's tick counts to their run time separately,
    // each kept from going backwards (proc(5), utime; kernel/sched/cputime.c, cputime_adjust), so
    // the process total may trail a thread read just before it by a tick or two.
    assert(
      cpu.processTicks + 2 >= cpu.mainTicks,
      `the process total covers its threads: ${JSON.stringify(cpu)}`,
    );
    assert(cpu.mainUtilisation > 0);
  } finally {
    child.kill("SIGKILL");
    await child.status;
    await child.stdout.cancel().catch(() => {});
  }
});

Deno.test("readProfiles finds the hot function of a real --cpu-prof run and its file", async () => {
  const dir = await Deno.makeTempDir({ prefix: "bench-profile-test-" });
  try {
    const script = `${dir}/hot.ts`;
    await Deno.writeTextFile(
      script,
      "function hotLoop(n: number) { let s = 0; for (let i = 0; i < n; i++) s += Math.sqrt(i); " +
        "return s; }\nlet t = 0;\nfor (let i = 0; i < 400; i++) t += hotLoop(1e5);\n" +
        "console.log(t > 0);\n",
    );
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["run", "--cpu-prof", `--cpu-prof-dir=${dir}`, script],
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert(out.success, new TextDecoder().decode(out.stderr));
    const [profile] = await readProfiles(dir, dir);
    assert(profile, "one profile was written");
    assertEquals(profile.functions[0].name, "hotLoop");
    assertEquals(profile.functions[0].location, "hot.ts:1");
    assertEquals(profile.files[0].name, "hot.ts");
    assert(profile.functions[0].busyShare > 0.5, "the loop dominates the run");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("parseOptions takes --name=value and --name value, and refuses unknown flags", () => {
  const spec = { rounds: { type: "string" }, strict: { type: "boolean", default: false } } as const;
  assertEquals(parseOptions(["--rounds=3", "--strict"], spec), { rounds: "3", strict: true });
  assertEquals(parseOptions(["--rounds", "4"], spec).rounds, "4");
  assertThrows(() => parseOptions(["--round=3"], spec), /Cannot parse the arguments/);
  assertEquals(positive("2.5", "duration", 1), 2.5);
  assertEquals(positive(undefined, "duration", 7), 7);
  assertThrows(() => positive("0", "duration", 1), /not a positive number/);
  assertEquals(nonNegative("0", "pause", 1), 0);
  assertThrows(() => nonNegative("-1", "pause", 1), /zero or more/);
});
