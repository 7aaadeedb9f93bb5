/**
 * Go's own transparency-log code as an independent check of the Beacon's: two small programs
 * built from `tests/go/` against Debian's `golang.org/x/mod/sumdb/{note,tlog}` (packages
 * `golang-go` and `golang-golang-x-mod-dev`, which `.ci/run` installs):
 *
 * - `tests/go/tlogcheck` fetches `<prefix>/checkpoint` and the tiles of a running log and
 *   verifies them, and any inclusion and consistency proofs given, with `sumdb/note` and
 *   `sumdb/tlog` ({@linkcode runTlogCheck});
 * - `tests/go/tlogvectors` prints the root, tiles and some proofs Go computes for a log of `n`
 *   leaves whose data is the text `leaf <i>` ({@linkcode goTlogVectors}).
 *
 * Each program is built once per test process, into a temporary folder removed at exit, with
 * `GO111MODULE=off GOPATH=/usr/share/gocode` (no module downloads). A test that needs Go calls
 * {@linkcode requireGo} first: without Go it fails, naming the packages, rather than skipping.
 *
 * @example Check a running log
 * ```ts ignore
 * import { runTlogCheck } from "./tests/support/go_tlog.ts";
 *
 * const result = await runTlogCheck({
 *   prefix: "http://127.0.0.1:8080/beacon/0.1/log",
 *   verifierKey: "example.com/log+0123abcd+AQ...",
 * });
 * console.log(result.code, result.stdout);
 * ```
 *
 * @module
 */
import { sha256 } from "@noble/hashes/sha2.js";
import { childEnvironment } from "../../scripts/runtimes.ts";

/** Where Debian's golang-golang-x-mod-dev puts the sources (the GOPATH the programs build in). */
export const GO_PATH = "/usr/share/gocode";

/** What a machine without Go needs, for failure messages. */
export const GO_MISSING =
  "Go and golang.org/x/mod are needed: apt-get install golang-go golang-golang-x-mod-dev " +
  `(go on the PATH, sources in ${GO_PATH}/src/golang.org/x/mod/sumdb); .ci/run installs them`;

/** The repository root (the programs are built from `tests/go/<name>` under it). */
const ROOT = new URL("../../", import.meta.url).pathname.replace(/\/$/, "");

/** The programs in `tests/go/`. */
export type GoProgram = "tlogcheck" | "tlogvectors";

let available: Promise<boolean> | undefined;
let binDirectory: Promise<string> | undefined;
const binaries = new Map<GoProgram, Promise<string>>();

/** Whether `go` runs and the `sumdb/note` and `sumdb/tlog` sources are present. Cached. */
export function goAvailable(): Promise<boolean> {
  available ??= (async () => {
    for (const file of ["note/note.go", "tlog/tlog.go", "tlog/tile.go"]) {
      try {
        await Deno.stat(`${GO_PATH}/src/golang.org/x/mod/sumdb/${file}`);
      } catch {
        return false;
      }
    }
    try {
      const output = await new Deno.Command("go", {
        args: ["version"],
        env: goEnvironment(),
        clearEnv: true,
        stdin: "null",
        stdout: "piped",
        stderr: "null",
      }).output();
      return output.success && new TextDecoder().decode(output.stdout).startsWith("go version");
    } catch {
      return false; // not on the PATH, or not permitted to run
    }
  })();
  return available;
}

/** Throws {@linkcode GO_MISSING} when Go cannot be used: tests needing it fail, never skip. */
export async function requireGo(): Promise<void> {
  if (!(await goAvailable())) throw new Error(GO_MISSING);
}

/**
 * The environment of `go` and of the built programs: the runtime's own variables (PATH, HOME,
 * TMPDIR, caches, certificates, proxies) and GOPATH mode without network module downloads.
 */
function goEnvironment(cache?: string): Record<string, string> {
  const env: Record<string, string> = {
    ...childEnvironment(),
    GO111MODULE: "off",
    GOPATH: GO_PATH,
    GOPROXY: "off",
    GOFLAGS: "",
    CGO_ENABLED: "0",
  };
  // Go needs a build cache; without HOME or XDG_CACHE_HOME it has no default one.
  if (cache !== undefined && env.HOME === undefined && env.XDG_CACHE_HOME === undefined) {
    env.GOCACHE = cache;
  }
  return env;
}

/** One temporary folder per process for the binaries, removed when the process ends. */
function directory(): Promise<string> {
  binDirectory ??= (async () => {
    const path = await Deno.makeTempDir({ prefix: "beacon-go-" });
    globalThis.addEventListener("unload", () => {
      try {
        Deno.removeSync(path, { recursive: true });
      } catch {
        // already gone
      }
    });
    return path;
  })();
  return binDirectory;
}

/** Builds `tests/go/<program>` once per process and returns the binary's path. */
export function goBinary(program: GoProgram): Promise<string> {
  let built = binaries.get(program);
  if (built === undefined) {
    built = (async () => {
      await requireGo();
      const folder = await directory();
      const output = `${folder}/${program}`;
      const result = await new Deno.Command("go", {
        args: ["build", "-o", output, `./tests/go/${program}`],
        cwd: ROOT,
        env: goEnvironment(`${folder}/gocache`),
        clearEnv: true,
        stdin: "null",
        stdout: "piped",
        stderr: "piped",
      }).output();
      if (!result.success) {
        const decoder = new TextDecoder();
        throw new Error(
          `go build ./tests/go/${program} failed (${result.code}):\n` +
            decoder.decode(result.stdout) + decoder.decode(result.stderr),
        );
      }
      return output;
    })();
    // A failed build is not cached: the next caller sees the error again, from a new attempt.
    built.catch(() => binaries.delete(program));
    binaries.set(program, built);
  }
  return built;
}

/** The exit status and output of a program run. */
export interface GoRun {
  /** 0: everything verified; 1: a check failed (a `FAIL: ...` line); 2: a usage error. */
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs a built program with `args` and `stdin`, in the environment `go` built it in. */
async function runProgram(program: GoProgram, args: string[], stdin: string): Promise<GoRun> {
  const binary = await goBinary(program);
  const child = new Deno.Command(binary, {
    args,
    cwd: ROOT,
    env: goEnvironment(),
    clearEnv: true,
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const writer = child.stdin.getWriter();
  try {
    await writer.write(new TextEncoder().encode(stdin));
  } finally {
    await writer.close().catch(() => {});
  }
  const result = await child.output();
  const decoder = new TextDecoder();
  return {
    code: result.code,
    stdout: decoder.decode(result.stdout),
    stderr: decoder.decode(result.stderr),
  };
}

/** An inclusion proof for tlogcheck: leaf `index` in the tree of size `treeSize`. */
export interface InclusionItem {
  index: number;
  /** Must equal the checkpoint's size (tlogcheck knows only that tree's hash). */
  treeSize: number;
  /** 64 hex digits: SHA-256(0x00 || leaf data). */
  leafHash: string;
  /** The audit path, 64 hex digits each, leaf side first (RFC 6962 order). */
  proof: string[];
}

/** A consistency proof for tlogcheck, from the tree of size `first` to size `second`. */
export interface ConsistencyItem {
  first: number;
  /** 64 hex digits: the tree hash of the first `first` leaves. */
  firstRoot: string;
  /** Must equal the checkpoint's size. */
  second: number;
  proof: string[];
}

/** What tlogcheck reads on stdin. */
export interface TlogCheckInput {
  /** The log's URL prefix, on a loopback IP literal: `http://127.0.0.1:PORT/beacon/0.1/log`. */
  prefix: string;
  /** The note verifier key, `<origin>+<8 hex key hash>+<base64(0x01 || public key)>`. */
  verifierKey: string;
  inclusion?: InclusionItem[];
  consistency?: ConsistencyItem[];
}

/**
 * Runs tlogcheck on `input`. With `verbose`, stderr lists every tile URL it fetched
 * (`fetched <prefix>/tile/... (N bytes)`).
 */
export function runTlogCheck(
  input: TlogCheckInput,
  options: { verbose?: boolean } = {},
): Promise<GoRun> {
  return runProgram("tlogcheck", options.verbose ? ["-v"] : [], JSON.stringify(input));
}

/** What tlogvectors prints for a log of `size` leaves `leaf 0`, `leaf 1`, … (all hex). */
export interface GoTlogVectors {
  size: number;
  /** The RFC 6962 tree hash (SHA-256 of nothing for size 0). */
  root: string;
  /**
   * C2SP tile path (`tile/<L>/<NNN>[.p/<W>]`, no height element) to the tile's bytes: every
   * full tile, and at each level the one partial tile of this size.
   */
  tiles: Record<string, string>;
  /** Leaf index to its audit path in the tree of `size` leaves (0, 1, size/2, size-2, size-1). */
  inclusion: Record<string, string[]>;
  /** Earlier size m to the consistency proof from m to `size` (1, 2, size/2, size-1, size). */
  consistency: Record<string, string[]>;
  /** The leaf hashes of the indexes in `inclusion`. */
  leafHashes: Record<string, string>;
  /** The tree hashes of the sizes in `consistency`. */
  roots: Record<string, string>;
}

const HEX_HASH = /^[0-9a-f]{64}$/;
const TILE_PATH = /^tile\/(0|[1-9][0-9]?)\/((?:x[0-9]{3}\/)*[0-9]{3})(?:\.p\/([1-9][0-9]{0,2}))?$/;

function fail(n: number, what: string): never {
  throw new Error(`tlogvectors ${n}: ${what}`);
}

function hashMap(n: number, name: string, value: unknown): Record<string, string> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    fail(n, `"${name}" is not an object`);
  }
  for (const [key, hash] of Object.entries(value)) {
    if (!/^(0|[1-9][0-9]*)$/.test(key)) fail(n, `"${name}" key ${key} is not a decimal`);
    if (typeof hash !== "string" || !HEX_HASH.test(hash)) fail(n, `${name}[${key}] not a hash`);
  }
  return value as Record<string, string>;
}

function proofMap(n: number, name: string, value: unknown): Record<string, string[]> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    fail(n, `"${name}" is not an object`);
  }
  for (const [key, proof] of Object.entries(value)) {
    if (!/^(0|[1-9][0-9]*)$/.test(key)) fail(n, `"${name}" key ${key} is not a decimal`);
    if (!Array.isArray(proof) || !proof.every((h) => typeof h === "string" && HEX_HASH.test(h))) {
      fail(n, `${name}[${key}] is not a list of hashes`);
    }
  }
  return value as Record<string, string[]>;
}

/** The parts of a C2SP tile path, or undefined when it is not one. */
export function parseTilePath(
  path: string,
): { level: number; index: number; width: number } | undefined {
  const match = TILE_PATH.exec(path);
  if (match === null) return undefined;
  const index = Number(match[2].split("/").map((part) => part.replace(/^x/, "")).join(""));
  const width = match[3] === undefined ? 256 : Number(match[3]);
  if (Number(match[1]) > 63 || (match[3] !== undefined && width > 255)) return undefined;
  return { level: Number(match[1]), index, width };
}

/**
 * Runs tlogvectors for a log of `n` leaves and returns its output, checked for shape: keys and
 * types, lowercase 64-digit hashes, C2SP tile paths whose hex is exactly width × 32 bytes.
 */
export async function goTlogVectors(n: number): Promise<GoTlogVectors> {
  if (!Number.isSafeInteger(n) || n < 0) throw new RangeError(`not a log size: ${n}`);
  const run = await runProgram("tlogvectors", [String(n)], "");
  if (run.code !== 0) fail(n, `exit ${run.code}: ${run.stderr}`);
  let value: unknown;
  try {
    value = JSON.parse(run.stdout);
  } catch (error) {
    fail(n, `output is not JSON: ${error}`);
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) fail(n, "not object");
  const v = value as Record<string, unknown>;
  const expected = ["consistency", "inclusion", "leafHashes", "root", "roots", "size", "tiles"];
  if (Object.keys(v).sort().join() !== expected.join()) {
    fail(n, `members ${Object.keys(v).sort().join()}, want ${expected.join()}`);
  }
  if (v.size !== n) fail(n, `size ${v.size}`);
  if (typeof v.root !== "string" || !HEX_HASH.test(v.root)) fail(n, `root ${v.root}`);
  if (typeof v.tiles !== "object" || v.tiles === null || Array.isArray(v.tiles)) {
    fail(n, `"tiles" is not an object`);
  }
  for (const [path, data] of Object.entries(v.tiles)) {
    const tile = parseTilePath(path);
    if (tile === undefined) fail(n, `tile path ${path} is not a C2SP tile path`);
    if (typeof data !== "string" || !/^([0-9a-f]{2})*$/.test(data)) fail(n, `${path}: not hex`);
    if (data.length !== tile.width * 64) fail(n, `${path}: ${data.length / 2} bytes`);
  }
  return {
    size: n,
    root: v.root,
    tiles: v.tiles as Record<string, string>,
    inclusion: proofMap(n, "inclusion", v.inclusion),
    consistency: proofMap(n, "consistency", v.consistency),
    leafHashes: hashMap(n, "leafHashes", v.leafHashes),
    roots: hashMap(n, "roots", v.roots),
  };
}

/** Lowercase hex of `bytes`. */
export function toHex(bytes: Uint8Array): string {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

/** The bytes of even-length lowercase or uppercase hex. */
export function fromHex(hex: string): Uint8Array<ArrayBuffer> {
  if (!/^([0-9a-fA-F]{2})*$/.test(hex)) throw new SyntaxError("not hex");
  return Uint8Array.from(hex.match(/../g) ?? [], (pair) => parseInt(pair, 16));
}

/**
 * The note verifier key of an Ed25519 public key (c2sp.org/signed-note, Go's
 * `note.NewVerifier`): `<name>+<hash>+<key>`, where key is base64(0x01 || 32-byte public key)
 * and hash the first 4 bytes of SHA-256(name || "\n" || 0x01 || public key) as 8 lowercase hex.
 */
export function noteVerifierKey(name: string, publicKey: Uint8Array): string {
  if (publicKey.length !== 32) throw new RangeError("an Ed25519 public key has 32 bytes");
  const key = new Uint8Array([0x01, ...publicKey]);
  const hash = sha256(new Uint8Array([...new TextEncoder().encode(name + "\n"), ...key]));
  return `${name}+${toHex(hash.subarray(0, 4))}+${btoa(String.fromCharCode(...key))}`;
}
