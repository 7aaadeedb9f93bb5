/**
 * Reads a V8 CPU profile (the `.cpuprofile` JSON that `deno run --cpu-prof` writes) and sums
 * self time per function and per source file, so the hottest code shows first.
 *
 * Self time of a node is the time of the samples taken while it was on top of the stack: V8
 * records each sample's node id in `samples` and the time since the previous sample in
 * `timeDeltas` (microseconds). `(idle)` is the isolate's thread while no JavaScript ran: on Deno
 * that includes the Rust HTTP stack, op dispatch and native calls on the same OS thread, so it is
 * not spare capacity; read it beside the thread's CPU from `/proc` (bench/lib/threads.ts).
 *
 * @module
 */

/** The part of V8's profile format this reads. */
interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
  children?: number[];
}

interface Profile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

/** Self time of one function (or one file), summed over the profile. */
export interface HotSpot {
  name: string;
  /** `url:line` of the function (1-based line), or the file's url. */
  location: string;
  selfMs: number;
  /** Share of all sampled time, `(idle)` included. */
  share: number;
  /** Share of the sampled time outside `(idle)`: of the time JavaScript (or GC) ran. */
  busyShare: number;
}

/** What one profile says. */
export interface ProfileSummary {
  file: string;
  durationMs: number;
  samples: number;
  /** Time in V8's special nodes: `(idle)`, `(program)`, `(garbage collector)`. */
  special: Record<string, number>;
  functions: HotSpot[];
  files: HotSpot[];
}

const SPECIAL = new Set(["(idle)", "(program)", "(garbage collector)", "(root)"]);

/** A short location: the repository-relative path of our files, `npm:pkg/...` for packages. */
export function shortUrl(url: string, root: string): string {
  if (url === "") return "[native code]";
  let path = url.replace(/^file:\/\//, "");
  path = decodeURIComponent(path);
  const npm = path.match(/\/npm\/[^/]+\/((?:@[^/]+\/)?[^/]+)\/[^/]+\/(.*)$/);
  if (npm) return `npm:${npm[1]}/${npm[2]}`;
  return path.startsWith(root + "/") ? path.slice(root.length + 1) : path;
}

function spots(
  selfUs: Map<string, { name: string; location: string; us: number }>,
  total: number,
  idle: number,
): HotSpot[] {
  return [...selfUs.values()]
    .map((s) => ({
      name: s.name,
      location: s.location,
      selfMs: s.us / 1000,
      share: total > 0 ? s.us / total : 0,
      busyShare: total - idle > 0 ? s.us / (total - idle) : 0,
    }))
    .sort((a, b) => b.selfMs - a.selfMs);
}

/**
 * Sums the profile's self time per function and per file, over its last `lastMs` (the
 * measured round and the shutdown after it; by default the whole profile).
 *
 * @example
 * ```ts
 * const summary = summariseProfile("x.cpuprofile", {
 *   nodes: [
 *     { id: 1, callFrame: { functionName: "(root)", url: "", lineNumber: -1, columnNumber: -1 } },
 *     { id: 2, callFrame: { functionName: "hot", url: "file:///r/a.ts", lineNumber: 0, columnNumber: 0 } },
 *   ],
 *   startTime: 0, endTime: 3000, samples: [2, 2, 2], timeDeltas: [1000, 1000, 1000],
 * }, "/r");
 * if (summary.functions[0].name !== "hot" || summary.functions[0].selfMs !== 3) throw new Error();
 * ```
 */
export function summariseProfile(
  file: string,
  profile: Profile,
  root: string,
  lastMs = Infinity,
): ProfileSummary {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const selfByNode = new Map<number, number>();
  const from = profile.endTime - lastMs * 1000;
  let total = 0;
  let kept = 0;
  let at = profile.startTime;
  for (let i = 0; i < profile.samples.length; i++) {
    // The delta before a sample is the best measure V8 gives of the time that sample stands for.
    const us = Math.max(0, profile.timeDeltas[i] ?? 0);
    at += profile.timeDeltas[i] ?? 0;
    if (at < from) continue;
    selfByNode.set(profile.samples[i], (selfByNode.get(profile.samples[i]) ?? 0) + us);
    total += us;
    kept++;
  }
  const special: Record<string, number> = {};
  const functions = new Map<string, { name: string; location: string; us: number }>();
  const files = new Map<string, { name: string; location: string; us: number }>();
  for (const [id, us] of selfByNode) {
    const frame = byId.get(id)?.callFrame;
    if (!frame) continue;
    const name = frame.functionName || "(anonymous)";
    if (SPECIAL.has(name)) {
      special[name] = (special[name] ?? 0) + us / 1000;
      continue;
    }
    const url = shortUrl(frame.url, root);
    const location = frame.url === "" ? url : `${url}:${frame.lineNumber + 1}`;
    const key = `${name} ${location}`;
    const f = functions.get(key) ?? { name, location, us: 0 };
    f.us += us;
    functions.set(key, f);
    const g = files.get(url) ?? { name: url, location: url, us: 0 };
    g.us += us;
    files.set(url, g);
  }
  const idle = (special["(idle)"] ?? 0) * 1000;
  return {
    file,
    durationMs: total / 1000,
    samples: kept,
    special,
    functions: spots(functions, total, idle),
    files: spots(files, total, idle),
  };
}

/** Every `.cpuprofile` in `dir`, summarised (one per isolate: the main one, and workers). */
export async function readProfiles(
  dir: string,
  root: string,
  lastMs = Infinity,
): Promise<ProfileSummary[]> {
  const out: ProfileSummary[] = [];
  for await (const entry of Deno.readDir(dir)) {
    if (!entry.isFile || !entry.name.endsWith(".cpuprofile")) continue;
    const path = `${dir}/${entry.name}`;
    out.push(summariseProfile(path, JSON.parse(await Deno.readTextFile(path)), root, lastMs));
  }
  return out.sort((a, b) => b.samples - a.samples);
}
