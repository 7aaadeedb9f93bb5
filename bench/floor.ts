/**
 * The floor: a staged minimal server that does the durable submission's own work and nothing
 * else, built from the Beacon's own pieces, so `deno task bench` can show what the Beacon spends
 * beyond that work on this machine, in the same run as the echo (issue 22).
 *
 * What it does per request, the same job as the Beacon's, with the Beacon's modules:
 *
 * - `POST /a2a/v1`: the strict JSON parser (`src/json/strict_json.ts`), the JSON-RPC envelope
 *   (`src/a2a/jsonrpc.ts`), the `SendMessage` checks and content mapping (`src/a2a/send_message.ts`,
 *   which runs the valibot message schema for a data part), the idempotency key (the RFC 8785
 *   form's SHA-256, `idempotencyKeyOf`);
 * - `POST /beacon/0.1/submissions`: `text/plain` strictly decoded as UTF-8, refused when blank;
 * - the content's SHA-256 (`src/bytes.ts`, the one SHA-256 home), the row as the store writes it
 *   (`src/store/rows.ts` `pendingRow`, with the integer idempotency hash);
 * - group commit with one promise per request: the rows queued while a commit runs go into the
 *   next one, started one macrotask later; each batch's receipts signed with one Ed25519
 *   signature over their RFC 6962 root (`src/signing/receipt.ts` `signReceipts`), then
 *   `BEGIN IMMEDIATE`, the Beacon's prepared inserts (the key check inside the insert, the
 *   batch's leaves and signature as one row of the same transaction), `COMMIT`, checked to be
 *   back in autocommit, in the Beacon's own schema (`src/store/migrations.ts`) with WAL, `synchronous = FULL` and
 *   `wal_autocheckpoint` 20000;
 * - the answer only after the commit: the JSON-RPC task or the native receipt
 *   (`src/native/receipt.ts`), with the Beacon's hardening headers
 *   (`src/middleware/response_headers.ts`).
 *
 * What it leaves out is the Beacon's structure: the middleware chain, the door, the error
 * mapping, the source and rate-limit middleware, the body limit with its deadline, the intake's
 * in-flight map, the group committer's deadlines and retries, the store's error types.
 *
 * `FLOOR_STAGE` stops the job early, to price each stage: `parse` (parse and checks, then the
 * answer), `hash` (+ the SHA-256s and the row), `commit` (+ the durable group commit, unsigned
 * receipts), `sign` (+ the batch's Merkle tree and signature, in the receipts but not stored),
 * `full` (the default: + the batch's signature stored in its rows' transaction). `FLOOR_HEADERS=1`
 * answers with the content type alone instead of the Beacon's headers.
 *
 * Run: `PORT=8126 BEACON_DATABASE_URL=file:/tmp/floor.db deno run -A bench/floor.ts`; on SIGTERM
 * it prints `{"event":"shutdown","commits":n,"submissions":m}` as the Beacon does.
 *
 * @module
 */
import Database from "libsql";
import { parseStrictJson } from "../src/json/strict_json.ts";
import { decodeUtf8Strict } from "../src/json/utf8.ts";
import { readEnvelope, resultBody } from "../src/a2a/jsonrpc.ts";
import { checkSendMessage, idempotencyKeyOf, mapContent } from "../src/a2a/send_message.ts";
import { sha256Digest } from "../src/bytes.ts";
import { newContextId, newReceiptId } from "../src/ids.ts";
import {
  INSERT_BATCH,
  INSERT_ROW,
  INSERT_ROW_UNLESS_KEY_USED,
  keyedInsertArgs,
  type NewSubmission,
  type PendingRow,
  pendingRow,
  type StoredSignature,
} from "../src/store/rows.ts";
import { DURABILITY_PRAGMAS, embeddedFilePath, openClient } from "../src/store/client.ts";
import { migrate } from "../src/store/migrations.ts";
import { signingKeyFromSeed } from "../src/signing/key.ts";
import { signReceipts } from "../src/signing/receipt.ts";
import { nativeReceipt } from "../src/native/receipt.ts";
import { harden } from "../src/middleware/response_headers.ts";
import type { Receipt } from "../src/intake/accept.ts";

/** An environment variable; undefined also where the permissions do not reach it (the profiler
 * starts this file with the Beacon's narrow ones). */
function env(name: string): string | undefined {
  try {
    return Deno.env.get(name);
  } catch {
    return undefined;
  }
}

type Stage = "parse" | "hash" | "commit" | "sign" | "full";
const STAGES: readonly Stage[] = ["parse", "hash", "commit", "sign", "full"];
const stage = (env("FLOOR_STAGE") ?? "full") as Stage;
if (!STAGES.includes(stage)) throw new Error(`FLOOR_STAGE must be one of ${STAGES.join(", ")}`);
const reached = (at: Stage) => STAGES.indexOf(stage) >= STAGES.indexOf(at);
const bareHeaders = env("FLOOR_HEADERS") === "1";

const port = Number(env("PORT") ?? "8126");
const hostname = env("HOSTNAME") ?? "127.0.0.1";
const databaseUrl = env("BEACON_DATABASE_URL") ?? "file:floor.db";
const origin = `http://${hostname}:${port}`;
const WINDOW_MS = 24 * 3600 * 1000;
const randomBytes = (length: number) => crypto.getRandomValues(new Uint8Array(length));
const sourceHash = sha256Digest(new TextEncoder().encode("floor source")).slice(7);

const migrator = await openClient({ url: databaseUrl });
await migrate(migrator);
migrator.close();
const db = new Database(embeddedFilePath(databaseUrl));
for (const pragma of DURABILITY_PRAGMAS) db.exec(pragma);
db.exec("PRAGMA wal_autocheckpoint = 20000");
const insertRow = db.prepare(INSERT_ROW);
const insertKeyed = db.prepare(INSERT_ROW_UNLESS_KEY_USED);
const insertBatch = db.prepare(INSERT_BATCH);
const key = await signingKeyFromSeed(randomBytes(32));

/** One queued row and how to answer its request. */
interface Waiting {
  readonly row: PendingRow;
  readonly resolve: (signature: StoredSignature | undefined | false) => void;
  readonly reject: (error: unknown) => void;
}

let queue: Waiting[] = [];
let busy = false;
const counters = { commits: 0, submissions: 0 };
const turn = new MessageChannel();
turn.port1.onmessage = () => void commitQueued();

function scheduleCommit(): void {
  if (busy) return;
  busy = true;
  turn.port2.postMessage(0);
}

async function commitQueued(): Promise<void> {
  const batch = queue;
  queue = [];
  try {
    const signed = reached("sign")
      ? await signReceipts(key, batch.map((waiting) => waiting.row.signed))
      : undefined;
    const signatures = signed?.receipts;
    db.exec("BEGIN IMMEDIATE");
    const stored: boolean[] = [];
    try {
      let first = 0;
      let last = 0;
      for (let i = 0; i < batch.length; i++) {
        const row = batch[i].row;
        const result = row.keySince === undefined
          ? insertRow.run(...row.values)
          : insertKeyed.run(...keyedInsertArgs(row));
        stored.push(result.changes === 1);
        if (result.changes === 1) {
          last = Number(result.lastInsertRowid);
          if (first === 0) first = last;
        }
      }
      if (signed !== undefined && reached("full") && first !== 0) {
        insertBatch.run(first, last, signed.leaves, signed.signature);
      }
      db.exec("COMMIT");
    } catch (error) {
      if (db.inTransaction) db.exec("ROLLBACK");
      throw error;
    }
    if (db.inTransaction) throw new Error("still inside a transaction after COMMIT");
    counters.commits++;
    counters.submissions += stored.filter((inserted) => inserted).length;
    for (let i = 0; i < batch.length; i++) {
      batch[i].resolve(stored[i] ? signatures?.[i] : false);
    }
  } catch (error) {
    for (const waiting of batch) waiting.reject(error);
  }
  busy = false;
  if (queue.length > 0) scheduleCommit();
}

function append(row: PendingRow): Promise<StoredSignature | undefined | false> {
  return new Promise((resolve, reject) => {
    queue.push({ row, resolve, reject });
    scheduleCommit();
  });
}

const JSON_HEADERS = { "content-type": "application/json" };
function answer(status: number, value: unknown, location?: string): Response {
  const headers = location === undefined ? JSON_HEADERS : { ...JSON_HEADERS, location };
  const response = new Response(JSON.stringify(value), { status, headers });
  return bareHeaders ? response : harden(response);
}
const refused = (status: number) => answer(status, { error: { code: "refused" } });

/** Stores the submission (as far as the stage goes) and returns its receipt. */
async function store(
  surface: "a2a" | "native",
  content: Uint8Array<ArrayBuffer>,
  contentType: string,
  idempotencyKey: string | undefined,
): Promise<{ receipt: Receipt; contextId: string } | undefined> {
  const now = Date.now();
  const submission: NewSubmission = {
    id: newReceiptId(now, randomBytes),
    contextId: newContextId(randomBytes),
    receivedAt: new Date(now).toISOString(),
    surface,
    kind: "unstructured",
    contentType,
    content,
    digest: reached("hash") ? sha256Digest(content) : "sha256:",
    sourceHash,
    idempotencyKey,
  };
  const receipt: Receipt = {
    id: submission.id,
    receivedAt: submission.receivedAt,
    surface,
    kind: submission.kind,
    size: content.byteLength,
    digest: submission.digest,
  };
  if (!reached("hash")) return { receipt, contextId: submission.contextId };
  const since = idempotencyKey === undefined ? undefined : new Date(now - WINDOW_MS).toISOString();
  const row = pendingRow(submission, since);
  if (!reached("commit")) return { receipt, contextId: submission.contextId };
  const stored = await append(row);
  if (stored === false) return undefined; // a replay: the bench sends unique messages
  return {
    receipt: stored === undefined ? receipt : { ...receipt, ...stored },
    contextId: submission.contextId,
  };
}

async function sendMessage(request: Request): Promise<Response> {
  if (request.headers.get("a2a-version") !== "1.0") return refused(400);
  const parsed = parseStrictJson(new Uint8Array(await request.arrayBuffer()));
  if (!parsed.ok) return refused(400);
  const envelope = readEnvelope(parsed.value, parsed.rootNumberText);
  if (!envelope.ok || envelope.request.method !== "SendMessage") return refused(400);
  const checked = checkSendMessage(envelope.request.params);
  const mapped = mapContent(checked);
  const idempotencyKey = reached("hash") ? "a2a:" + idempotencyKeyOf(checked.message) : undefined;
  const stored = await store("a2a", mapped.content, "application/json", idempotencyKey);
  if (stored === undefined) return refused(409);
  const { receipt, contextId } = stored;
  const task = {
    id: receipt.id,
    contextId,
    status: { state: "TASK_STATE_SUBMITTED", timestamp: receipt.receivedAt },
    metadata: nativeReceipt(receipt, origin),
  };
  return answer(200, resultBody(envelope.request.id, { task }));
}

async function submit(request: Request): Promise<Response> {
  const body = new Uint8Array(await request.arrayBuffer());
  const text = decodeUtf8Strict(body);
  if (text === undefined || text.trim() === "") return refused(400);
  const stored = await store("native", body, "text/plain; charset=utf-8", undefined);
  const receipt = nativeReceipt(stored!.receipt, origin);
  return answer(202, receipt, receipt.receipt.status);
}

const server = Deno.serve({
  port,
  hostname,
  onListen: () =>
    console.log(JSON.stringify({ event: "listening", port, stage, publicKey: key.publicKey })),
}, async (request) => {
  const path = new URL(request.url).pathname;
  try {
    if (request.method === "POST" && path === "/a2a/v1") return await sendMessage(request);
    if (request.method === "POST" && path === "/beacon/0.1/submissions") {
      return await submit(request);
    }
  } catch (error) {
    console.error(error);
    return refused(500);
  }
  return request.method === "GET" ? answer(200, { stage }) : refused(404);
});

Deno.addSignalListener("SIGTERM", () => {
  server.shutdown().then(() => {
    db.close();
    console.log(JSON.stringify({ event: "shutdown", ...counters }));
    Deno.exit(0);
  });
});
