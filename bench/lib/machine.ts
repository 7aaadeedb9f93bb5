/**
 * Facts about the machine and earlier results that a run's record carries.
 *
 * @module
 */

import type { UploadsSummary } from "./render.ts";

function cpuModel(): string {
  try {
    const info = Deno.readTextFileSync("/proc/cpuinfo");
    return info.match(/^model name\s*:\s*(.+)$/m)?.[1] ?? "unknown";
  } catch {
    return "unknown";
  }
}

/** Cores, CPU model, memory and kernel of this machine. */
export function machine(): { cpus: number; cpuModel: string; memoryGiB: number; kernel: string } {
  return {
    cpus: navigator.hardwareConcurrency,
    cpuModel: cpuModel(),
    memoryGiB: Math.round(Deno.systemMemoryInfo().total / 2 ** 30),
    kernel: Deno.osRelease(),
  };
}

/** The peaks `bench/upload_memory.ts` last wrote to `path`, or null when there is no result. */
export function lastUploads(path: string): UploadsSummary | null {
  try {
    const r = JSON.parse(Deno.readTextFileSync(path));
    return {
      at: String(r.at),
      head: `${r.git?.head ?? "unknown"}${r.git?.dirty ? " (dirty)" : ""}`,
      limitMiB: Number(r.settings?.limitMiB ?? 150),
      peaks: (r.results as { mode: string; peakMiB: number }[]).map((m) => ({
        mode: m.mode,
        peakMiB: m.peakMiB,
      })),
    };
  } catch {
    return null;
  }
}
