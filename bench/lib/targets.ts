/**
 * What `deno task bench` loads: each target's server, request, and the one probe that proves,
 * before any load, that the target answers the way its numbers will be read (a `-32009` is an
 * HTTP 200 that wrk cannot tell from an acceptance, for example).
 *
 * @module
 */

import type { BodyKind } from "./load.ts";
import { fixedBody, sendMessageBody, textBody } from "./payload.ts";
import type { ServerSpec } from "./process.ts";
import {
  beaconSpec,
  echoSpec,
  FLOOR_HEADS_KNOBS,
  referenceFloorMissing,
  referenceFloorSpec,
  sdkSpec,
} from "./servers.ts";

/**
 * What a target's answers mean for the checks. `floor`: the reference floor (../shared/floor), the
 * durable job without the Beacon's structure; it stores what it accepts, so its storage is checked
 * like a Beacon's.
 */
export type Role = "limit" | "reference" | "accept" | "refuse" | "floor";

/** Outcome of the one request sent before loading, to prove the target answers as intended. */
export interface Probe {
  ok: boolean;
  detail: string;
  /** 2xx answers the probe itself caused (they may have stored rows). */
  twoXx: number;
}

/** One thing the bench loads. */
export interface Target {
  id: string;
  label: string;
  role: Role;
  beacon: boolean;
  path: string;
  kind: BodyKind;
  size: number;
  headers: Record<string, string>;
  /** Whether a 2xx answer means a stored submission (false for the -32009 scenario). */
  twoXxStores: boolean;
  /** Runs only when named in --only (an extra reference, not one of the targets). */
  optional?: boolean;
  /** Why this target cannot run on this machine (it is then left out, and the run says so). */
  unavailable?: string;
  /**
   * A process the server needs beside it, started first by the harness (`sqld`: a real libSQL
   * server on loopback). Its CPU is measured around each round and reported beside the server's.
   */
  companion?: "sqld";
  /** The database file whose rows are counted (default `<dir>/<id>.db`). */
  databaseFile?(dir: string): string;
  /** `companionUrl`: where the companion listens. */
  spec(dir: string, companionUrl?: string): ServerSpec;
  probe(origin: string): Promise<Probe>;
}

/** What every target needs to know about the run. */
export interface TargetSettings {
  size: number;
  /** The Beacon entry file (relative to the root). */
  entry: string;
  npmCache: string;
}

const A2A_HEADERS = { "Content-Type": "application/json", "A2A-Version": "1.0" };
const TEXT_HEADERS = { "Content-Type": "text/plain; charset=utf-8" };
const SUBMIT_PATH = "/beacon/0.1/submissions";
/** A path the Beacon serves nothing at: the router refuses it before reading the body. */
const UNKNOWN_PATH = "/beacon/0.1/nothing-here";
const OVERSIZE = 70_000;

interface Answer {
  status: number;
  headers: Headers;
  json: unknown;
  text: string;
}

async function post(url: string, headers: Record<string, string>, body: string): Promise<Answer> {
  const response = await fetch(url, { method: "POST", headers, body });
  const text = await response.text();
  let json: unknown = undefined;
  try {
    json = JSON.parse(text);
  } catch {
    // Left undefined: the probe reports the raw text instead.
  }
  return { status: response.status, headers: response.headers, json, text };
}

/** Reads a nested property without trusting the shape of a server's answer. */
function dig(value: unknown, ...path: string[]): unknown {
  let current = value;
  for (const key of path) {
    if (current === null || typeof current !== "object") return undefined;
    current = (current as Record<string, unknown>)[key];
  }
  return current;
}

function seen(answer: Answer): string {
  return `got ${answer.status} ${answer.text.slice(0, 300)}`;
}

function probeOf(answer: Answer, ok: boolean, detail: string): Probe {
  return { ok, detail: ok ? detail : seen(answer), twoXx: answer.status < 300 ? 1 : 0 };
}

/** Every target, in the order a run starts them. */
export function makeTargets(settings: TargetSettings): Target[] {
  const { size } = settings;
  const sendMessageProbe = (name: string) => async (origin: string): Promise<Probe> => {
    const a = await post(origin + "/a2a/v1", A2A_HEADERS, sendMessageBody(`probe-${name}`, size));
    const state = dig(a.json, "result", "task", "status", "state");
    const ok = a.status === 200 && typeof dig(a.json, "result", "task", "id") === "string" &&
      state === "TASK_STATE_SUBMITTED";
    return probeOf(a, ok, "200 result.task in TASK_STATE_SUBMITTED");
  };
  const nativeProbe = (name: string) => async (origin: string): Promise<Probe> => {
    const a = await post(origin + SUBMIT_PATH, TEXT_HEADERS, textBody(`probe-${name}`, size));
    const ok = a.status === 202 && typeof dig(a.json, "receipt", "id") === "string";
    return probeOf(a, ok, "202 receipt");
  };
  const beacon = (id: string, rateLimit: string, env?: Record<string, string>) => (dir: string) =>
    beaconSpec({
      databasePath: `${dir}/${id}.db`,
      rateLimit,
      name: id,
      entry: settings.entry,
      npmCache: settings.npmCache,
      env,
    });
  const common = { size, beacon: true, kind: "json" as BodyKind };

  return [
    {
      ...common,
      id: "echo",
      label: "echo: bare Deno.serve",
      role: "limit",
      beacon: false,
      path: "/",
      headers: A2A_HEADERS,
      twoXxStores: false,
      spec: () => echoSpec(),
      async probe(origin) {
        const a = await post(origin + "/", A2A_HEADERS, sendMessageBody("probe-echo", size));
        return probeOf(a, a.status === 200 && dig(a.json, "ok") === true, '200 {"ok":true}');
      },
    },
    {
      ...common,
      id: "echo-413",
      label: "413 limit: bare Deno.serve refusing 70 KB",
      role: "limit",
      beacon: false,
      path: "/",
      kind: "fixed",
      size: OVERSIZE,
      headers: TEXT_HEADERS,
      twoXxStores: false,
      optional: true,
      spec: () => echoSpec(true),
      async probe(origin) {
        const a = await post(origin + "/", TEXT_HEADERS, fixedBody(OVERSIZE));
        return probeOf(a, a.status === 413, "413");
      },
    },
    {
      ...common,
      id: "sdk",
      label: "@a2a-js/sdk Express SendMessage",
      role: "reference",
      beacon: false,
      path: "/a2a/v1",
      headers: A2A_HEADERS,
      twoXxStores: false,
      spec: () => sdkSpec(),
      probe: sendMessageProbe("sdk"),
    },
    {
      ...common,
      id: "floor-ref",
      label: "reference floor: the durable SendMessage job alone (../shared/floor/server.ts)",
      role: "floor",
      path: "/a2a/v1",
      headers: A2A_HEADERS,
      twoXxStores: true,
      unavailable: referenceFloorMissing(),
      spec: (dir) => referenceFloorSpec(`${dir}/floor-ref.db`),
      probe: sendMessageProbe("floor-ref"),
    },
    {
      ...common,
      id: "floor-ref-heads",
      label: "reference floor with tree heads read back from the database every 2 s",
      role: "floor",
      path: "/a2a/v1",
      headers: A2A_HEADERS,
      twoXxStores: true,
      unavailable: referenceFloorMissing(),
      spec: (dir) =>
        referenceFloorSpec(`${dir}/floor-ref-heads.db`, {
          name: "floor-ref-heads",
          env: FLOOR_HEADS_KNOBS,
        }),
      probe: sendMessageProbe("floor-ref-heads"),
    },
    {
      ...common,
      id: "floor-ref-sqld",
      label: "reference floor with tree heads on its own real sqld on loopback",
      role: "floor",
      path: "/a2a/v1",
      headers: A2A_HEADERS,
      twoXxStores: true,
      companion: "sqld",
      unavailable: referenceFloorMissing(),
      databaseFile: (dir) => `${dir}/floor-ref-sqld-data/dbs/default/data`,
      spec: (dir, url) =>
        referenceFloorSpec(`${dir}/floor-ref-sqld.db`, {
          name: "floor-ref-sqld",
          env: { ...FLOOR_HEADS_KNOBS, DB: "remote", REMOTE_URL: url ?? "" },
        }),
      probe: sendMessageProbe("floor-ref-sqld"),
    },
    {
      ...common,
      id: "send-message",
      label: "Beacon A2A SendMessage (durable)",
      role: "accept",
      path: "/a2a/v1",
      headers: A2A_HEADERS,
      twoXxStores: true,
      spec: beacon("send-message", "off"),
      probe: sendMessageProbe("send-message"),
    },
    {
      ...common,
      id: "send-message-writer",
      label: "Beacon A2A SendMessage (durable), BEACON_WRITER_THREAD=on",
      role: "accept",
      path: "/a2a/v1",
      headers: A2A_HEADERS,
      twoXxStores: true,
      optional: true,
      spec: beacon("send-message-writer", "off", { BEACON_WRITER_THREAD: "on" }),
      probe: sendMessageProbe("send-message-writer"),
    },
    {
      ...common,
      // The tree heads' share of a durable SendMessage, priced beside `send-message` in one run.
      id: "send-message-no-heads",
      label: "Beacon A2A SendMessage (durable), BEACON_CHECKPOINT_INTERVAL=off: no tree heads",
      role: "accept",
      path: "/a2a/v1",
      headers: A2A_HEADERS,
      twoXxStores: true,
      optional: true,
      spec: beacon("send-message-no-heads", "off", { BEACON_CHECKPOINT_INTERVAL: "off" }),
      probe: sendMessageProbe("send-message-no-heads"),
    },
    {
      ...common,
      id: "beacon-sqld",
      label: "Beacon A2A SendMessage (durable) on a real sqld on loopback",
      role: "accept",
      path: "/a2a/v1",
      headers: A2A_HEADERS,
      twoXxStores: true,
      companion: "sqld",
      // sqld keeps its default namespace's SQLite file here (its data folder, `-d`).
      databaseFile: (dir) => `${dir}/beacon-sqld-data/dbs/default/data`,
      spec: (dir, url) =>
        beaconSpec({
          databasePath: `${dir}/beacon-sqld.db`,
          databaseUrl: url,
          rateLimit: "off",
          name: "beacon-sqld",
          entry: settings.entry,
          npmCache: settings.npmCache,
        }),
      probe: sendMessageProbe("beacon-sqld"),
    },
    {
      ...common,
      id: "native-submit",
      label: "Beacon native submit (durable)",
      role: "accept",
      path: SUBMIT_PATH,
      kind: "text",
      headers: TEXT_HEADERS,
      twoXxStores: true,
      spec: beacon("native-submit", "off"),
      probe: nativeProbe("native"),
    },
    {
      ...common,
      id: "refuse-429",
      label: "Beacon 429 rate limited",
      role: "refuse",
      path: SUBMIT_PATH,
      kind: "text",
      headers: TEXT_HEADERS,
      twoXxStores: true,
      spec: beacon("refuse-429", "1/1h"),
      async probe(origin) {
        // The limit allows a first submission; send until the refusal shows (a few at most).
        let twoXx = 0;
        let last: Answer | undefined;
        const statuses: number[] = [];
        for (let i = 0; i < 5; i++) {
          last = await post(origin + SUBMIT_PATH, TEXT_HEADERS, textBody(`probe-429-${i}`, size));
          statuses.push(last.status);
          if (last.status < 300) twoXx++;
          if (last.status === 429) break;
        }
        const ok = last!.status === 429 && dig(last!.json, "error", "code") === "rate_limited" &&
          last!.headers.has("retry-after");
        return {
          ok,
          detail: ok
            ? `429 rate_limited with Retry-After (answers ${statuses.join(", ")})`
            : `answers ${statuses.join(", ")}; last ${seen(last!)}`,
          twoXx,
        };
      },
    },
    {
      ...common,
      id: "refuse-32009",
      label: "Beacon -32009 no A2A-Version",
      role: "refuse",
      path: "/a2a/v1",
      headers: { "Content-Type": "application/json" },
      // A JSON-RPC error is HTTP 200: these 2xx answers are refusals and must store nothing.
      twoXxStores: false,
      spec: beacon("refuse-32009", "off"),
      async probe(origin) {
        const a = await post(
          origin + "/a2a/v1",
          { "Content-Type": "application/json" },
          sendMessageBody("probe-32009", size),
        );
        const ok = a.status === 200 && dig(a.json, "error", "code") === -32009;
        return probeOf(a, ok, "200 JSON-RPC error -32009 (wrk counts these as 2xx)");
      },
    },
    {
      ...common,
      id: "refuse-404",
      label: "Beacon 404 unknown path",
      role: "refuse",
      path: UNKNOWN_PATH,
      headers: A2A_HEADERS,
      twoXxStores: true,
      spec: beacon("refuse-404", "off"),
      async probe(origin) {
        const a = await post(
          origin + UNKNOWN_PATH,
          A2A_HEADERS,
          sendMessageBody("probe-404", size),
        );
        const ok = a.status === 404 && dig(a.json, "error", "code") === "not_found";
        return probeOf(a, ok, "404 not_found");
      },
    },
    {
      ...common,
      id: "refuse-413",
      label: "Beacon 413 by Content-Length",
      role: "refuse",
      path: SUBMIT_PATH,
      kind: "fixed",
      size: OVERSIZE,
      headers: TEXT_HEADERS,
      twoXxStores: true,
      optional: true,
      spec: beacon("refuse-413", "off"),
      async probe(origin) {
        const a = await post(origin + SUBMIT_PATH, TEXT_HEADERS, fixedBody(OVERSIZE));
        const ok = a.status === 413 && dig(a.json, "error", "code") === "too_large";
        return probeOf(a, ok, "413 too_large");
      },
    },
  ];
}

/** Names that stand for several targets in `--only` and `--skip`. */
const ALIASES: Record<string, string[]> = {
  reference: ["echo", "sdk", "floor-ref", "floor-ref-heads"],
  floor: ["floor-ref", "floor-ref-heads", "floor-ref-sqld"],
  beacon: [
    "send-message",
    "native-submit",
    "beacon-sqld",
    "refuse-429",
    "refuse-32009",
    "refuse-404",
  ],
  durable: ["send-message", "native-submit", "beacon-sqld"],
  remote: ["send-message", "beacon-sqld", "floor-ref-sqld"],
  // The durable path with heads beside the floor with heads, embedded and on sqld.
  heads: ["floor-ref-heads", "send-message", "floor-ref-sqld", "beacon-sqld"],
  refusals: ["refuse-429", "refuse-32009", "refuse-404"],
  a2a: ["send-message"],
  native: ["native-submit"],
};

/**
 * The targets `--only` and `--skip` leave (both comma lists of ids or aliases). Without `--only`
 * the optional targets stay out.
 */
export function selectTargets(
  all: readonly Target[],
  only: string | undefined,
  skip: string | undefined,
): Target[] {
  const expand = (list: string) =>
    list.split(",").map((s) => s.trim()).filter((s) => s !== "").flatMap((name) => {
      if (ALIASES[name]) return ALIASES[name];
      if (!all.some((t) => t.id === name)) {
        const known = [...all.map((t) => t.id), ...Object.keys(ALIASES)].join(", ");
        throw new Error(`Cannot select target ${name}: known targets are ${known}`);
      }
      return [name];
    });
  const chosen = only === undefined
    ? all.filter((t) => !t.optional).map((t) => t.id)
    : expand(only);
  const left = skip === undefined ? [] : expand(skip);
  return all.filter((t) => chosen.includes(t.id) && !left.includes(t.id));
}
