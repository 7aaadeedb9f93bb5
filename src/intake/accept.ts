/**
 * Accepting a submission, shared by both protocols: mint an unguessable receipt id, digest the
 * exact bytes to be stored, append the row durably, and only then hand back the receipt. The
 * receipt carries facts about the submission (id, time, kind, size, digest), never its content
 * (design principle 2).
 *
 * Retries: a sender may name an idempotency key (native `Idempotency-Key`; for A2A, `messageId`
 * plus the digest of the canonical message). The same key from the same source within the window
 * returns the first receipt instead of storing a duplicate. With the default `"same-bytes"` rule
 * the same key with other bytes is refused; with `"any"` a key match always replays.
 *
 * @module
 */
import { IdempotencyKeyReusedError, StorageError, UnacknowledgedRowError } from "../errors.ts";
import type {
  NewSubmission,
  SubmissionKind,
  SubmissionStore,
  SubmissionSummary,
  Surface,
} from "../store/store.ts";
import {
  type ReceiptBatchProof,
  type ReceiptSignature,
  receiptSignatureOf,
  type SignedReceiptFields,
} from "../signing/receipt.ts";
import { sha256Digest } from "../bytes.ts";
import { isReceiptId, newSubmissionIds } from "../ids.ts";
import type { IdentityCheck } from "../message/identity.ts";
import type { SourceHasher } from "./source_hash.ts";

/** What a protocol hands to the intake. */
export interface SubmissionInput {
  readonly surface: Surface;
  readonly kind: SubmissionKind;
  /** Media type of `content`. */
  readonly contentType: string;
  /** The exact bytes to store and digest. */
  readonly content: Uint8Array<ArrayBuffer>;
  /** The source key from the source middleware. */
  readonly source: string;
  readonly identity?: IdentityCheck;
  readonly idempotencyKey?: string;
  /**
   * What a key match within the window means. `"same-bytes"` (the default, the native
   * `Idempotency-Key` rule): a retry must carry the same bytes, otherwise
   * `idempotency_key_reused`. `"any"`: the key itself already names the content (the A2A key
   * is `messageId` plus the digest of the canonical message), so a match always replays.
   */
  readonly idempotencyReplay?: "same-bytes" | "any";
}

/** The receipt: what the Beacon acknowledges having stored. */
export interface Receipt {
  /**
   * Receipt id = A2A task id: base64url (30 characters) of a 48-bit millisecond time followed by
   * 128 bits from a CSPRNG.
   */
  readonly id: string;
  /** ISO 8601 UTC time of receipt, millisecond precision. */
  readonly receivedAt: string;
  /** The protocol it arrived through: `native` or `a2a`. */
  readonly surface: Surface;
  /** `structured` (a valid beacon/0.1 message) or `unstructured` (free text). */
  readonly kind: SubmissionKind;
  /** Bytes stored. */
  readonly size: number;
  /** `sha256:<hex>` of the stored bytes. */
  readonly digest: string;
  /** The signer's key fingerprint and verification result, for signed messages. */
  readonly identity?: IdentityCheck;
  /**
   * The Beacon's Ed25519 signature over the receipt's canonical fields (id, receivedAt, digest,
   * size, kind; docs/protocol-0.1.md §Receipt signatures), base64url; with `batch`, over the
   * Merkle root of the receipts committed together.
   */
  readonly signature?: string;
  /** For a batch signature: this receipt's inclusion proof in the signed batch. */
  readonly batch?: ReceiptBatchProof;
}

/** The result of {@linkcode Intake.accept}. */
export interface Accepted {
  /** The receipt (the first one, for a replayed retry). */
  readonly receipt: Receipt;
  /** The A2A context id opened for the submission (not part of the native receipt). */
  readonly contextId: string;
  /** True when an earlier receipt is returned for a retry. */
  readonly replayed: boolean;
}

/** What the intake needs from the Beacon's configuration. */
export interface IntakeOptions {
  readonly store: SubmissionStore;
  readonly now: () => number;
  readonly randomBytes: (length: number) => Uint8Array<ArrayBuffer>;
  /** Hashes source keys, so raw addresses are never at rest. */
  readonly sourceHasher: SourceHasher;
  /** How long an idempotency key is remembered, in milliseconds. */
  readonly idempotencyWindowMs: number;
  /**
   * Whether a stored row's receipt signature verifies under the Beacon's key (an
   * `IntakeSignatures` check, src/signing/log_audit.ts). A replay found in the database is
   * answered only when it does: the row is then one the Beacon acknowledged. Without it, a
   * database writer could insert a row with an idempotency key and have the server sign the
   * forged row's receipt by retrying it (a signing oracle). Unset: no stored row is replayed.
   */
  readonly acknowledged?: (
    /** With the row's `seq` where read: after a key rotation it decides the key (docs/keys.md). */
    fields: SignedReceiptFields & { readonly seq?: number },
    stored: ReceiptSignature | undefined,
  ) => Promise<boolean>;
}

/** The receipt facts of a submission: what was committed (a new row) or found (a lookup). */
type ReceiptFacts = Pick<SubmissionSummary, "id" | "receivedAt" | "surface" | "kind" | "digest"> & {
  readonly size: number;
  readonly identityFingerprint?: string;
  readonly identityVerified?: boolean;
  /** The receipt signature stored with the row. */
  readonly signature?: ReceiptSignature;
};

/** The receipt of a stored submission: its facts, never its content. */
function receiptOf(
  facts: Omit<ReceiptFacts, "size" | "signature">,
  size: number,
  stored: ReceiptSignature | undefined,
): Receipt {
  // One object, its members set in the receipt's order; no spread copies (every submission
  // builds one). An absent member is left out, not set to undefined.
  const receipt: { -readonly [K in keyof Receipt]: Receipt[K] } = {
    id: facts.id,
    receivedAt: facts.receivedAt,
    surface: facts.surface,
    kind: facts.kind,
    size,
    digest: facts.digest,
  };
  if (facts.identityFingerprint !== undefined) {
    receipt.identity = {
      fingerprint: facts.identityFingerprint,
      verified: facts.identityVerified === true,
    };
  }
  return withSignature(receipt, stored);
}

/** Sets a stored signature's receipt members: `signature`, and `batch` for a batch signature. */
function withSignature(
  receipt: { -readonly [K in keyof Receipt]: Receipt[K] },
  stored: ReceiptSignature | undefined,
): Receipt {
  if (stored === undefined) return receipt;
  receipt.signature = stored.signature;
  if (stored.batch !== undefined) receipt.batch = stored.batch;
  return receipt;
}

/** The intake: accepts submissions into the store. */
export class Intake {
  readonly #options: IntakeOptions;
  /**
   * Stores running now, by source and key, with the digest of what each stores. A waiter only
   * needs a success: it treats a failure or a key already used as "nothing stored".
   */
  readonly #inFlight = new Map<
    string,
    { readonly storing: Promise<Accepted | undefined>; readonly digest: string }
  >();

  /**
   * Creates the intake over a store. The store signs each batch of receipts inside the commit
   * that stores it, with the signer it was opened with.
   */
  constructor(options: IntakeOptions) {
    this.#options = options;
  }

  /**
   * The stored submission with receipt id `id`, or undefined; an id of the wrong shape is
   * answered without a database read.
   */
  find(id: string): Promise<SubmissionSummary | undefined> {
    return isReceiptId(id) ? this.#options.store.findById(id) : Promise.resolve(undefined);
  }

  /**
   * Stores the submission and returns its receipt; `replayed` is true when an earlier receipt is
   * returned for a retry. Throws {@linkcode IdempotencyKeyReusedError} for a reused key with
   * other content (only under the `"same-bytes"` rule) and `StorageError` when the database fails.
   *
   * Idempotency keys live in one space per surface and source: a native `Idempotency-Key` never
   * collides with an A2A `messageId`, nor one sender's key with another's.
   */
  accept(input: SubmissionInput): Promise<Accepted> {
    try {
      const digest = sha256Digest(input.content);
      const sourceHash = this.#options.sourceHasher.hash(input.source);
      // Without a key, always stored: the store's own promise, no frame of ours around it.
      if (input.idempotencyKey === undefined) {
        return this.#store(input, digest, sourceHash) as Promise<Accepted>;
      }
      return this.#acceptKeyed(input, digest, sourceHash, input.idempotencyKey);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  async #acceptKeyed(
    input: SubmissionInput,
    digest: string,
    sourceHash: string,
    idempotencyKey: string,
  ): Promise<Accepted> {
    const key = `${input.surface}:${idempotencyKey}`;
    const slot = `${sourceHash} ${key}`;
    const running = this.#inFlight.get(slot);
    if (running !== undefined) {
      // The same key from the same source is being stored right now: wait for that answer.
      // A failure is reported to the first caller, not to those waiting on it.
      const first = await running.storing.catch(() => undefined);
      if (first !== undefined) return this.#replay(first, running.digest, digest, input);
    }
    const since = new Date(this.#options.now() - this.#options.idempotencyWindowMs).toISOString();
    // The key check runs inside the commit (SubmissionStore.append): a first use costs no read.
    const storing = this.#store(input, digest, sourceHash, key, since);
    this.#inFlight.set(slot, { storing, digest });
    try {
      const accepted = await storing;
      if (accepted !== undefined) return accepted;
    } finally {
      this.#inFlight.delete(slot);
    }
    // The key was used within the window: answer as the first submission was answered.
    const earlier = await this.#options.store.findByIdempotencyKey(sourceHash, key, since);
    if (earlier === undefined) throw new StorageError(new Error("idempotent row not found"));
    // The row as it reads now must carry the signature the intake stored with it (protocol
    // §6.3): anything else was inserted or changed by a database writer, and the Beacon never
    // re-signs, nor hands out, a receipt it did not give (threat model, the keyless writer).
    // A row stored before intake signatures existed (schema version 9) is refused too: its
    // idempotency window has long passed on every store that ran that version.
    const signature = receiptSignatureOf(earlier, earlier.signature);
    const acknowledged = this.#options.acknowledged;
    if (acknowledged === undefined || !await acknowledged(earlier, signature)) {
      throw new UnacknowledgedRowError();
    }
    const first = {
      receipt: receiptOf(earlier, earlier.size, signature),
      contextId: earlier.contextId,
      replayed: true,
    };
    return this.#replay(first, earlier.digest, digest, input);
  }

  /** The first answer for a retry; a retry is the same bytes of the same kind. */
  #replay(
    first: Accepted,
    storedDigest: string,
    digest: string,
    input: SubmissionInput,
  ): Accepted {
    const sameBytes = storedDigest === digest && first.receipt.kind === input.kind;
    if (!sameBytes && input.idempotencyReplay !== "any") {
      throw new IdempotencyKeyReusedError();
    }
    // The first receipt, with its own signature as stored with its row (or, for a submission
    // still being stored by this process, as committed): never signed again.
    return { receipt: first.receipt, contextId: first.contextId, replayed: true };
  }

  /** Stores a new row; undefined when its idempotency key was already used since `keySince`. */
  #store(
    input: SubmissionInput,
    digest: string,
    sourceHash: string,
    idempotencyKey?: string,
    keySince?: string,
  ): Promise<Accepted | undefined> {
    const now = this.#options.now();
    const { id, contextId } = newSubmissionIds(now, this.#options.randomBytes);
    const row: NewSubmission = {
      id,
      contextId,
      receivedAt: new Date(now).toISOString(),
      surface: input.surface,
      kind: input.kind,
      contentType: input.contentType,
      content: input.content,
      digest,
      sourceHash,
      identityFingerprint: input.identity?.fingerprint,
      identityVerified: input.identity?.verified,
      idempotencyKey,
    };
    // Signed in the commit, with the receipts committed together, and stored with the row: the
    // receipt is released only after that commit, and it carries exactly the stored signature.
    return this.#options.store.append(row, keySince).then((appended) => {
      if (appended === false) return undefined;
      const receipt = receiptOf(row, row.content.byteLength, appended.signature);
      return { receipt, contextId: row.contextId, replayed: false };
    });
  }
}
