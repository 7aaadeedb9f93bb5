/**
 * Accepting a submission, shared by both protocols: mint an unguessable receipt id, digest the
 * exact bytes to be stored, append the row durably, and only then hand back the receipt. The
 * receipt carries facts about the submission (id, time, kind, size, digest), never its content
 * (design principle 2).
 *
 * Retries: a sender may name an idempotency key (native `Idempotency-Key`, A2A `messageId`). The
 * same key from the same source with the same bytes within the window returns the first receipt
 * instead of storing a duplicate; the same key with other bytes is refused.
 *
 * @module
 */
import { BeaconError } from "../errors.ts";
import type {
  NewSubmission,
  SubmissionKind,
  SubmissionStore,
  SubmissionSummary,
  Surface,
} from "../store/store.ts";
import { base64url, hex, sha256Digest } from "./encoding.ts";

/** A signer's identity as checked at intake. */
export interface IdentityCheck {
  /** `sha256:<hex>` of the raw Ed25519 public key. */
  readonly fingerprint: string;
  /** Whether the signature over the canonical message verified. */
  readonly verified: boolean;
}

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
}

/** The receipt: what the Beacon acknowledges having stored. */
export interface Receipt {
  /** Receipt id = A2A task id: 128 bits from a CSPRNG, base64url (22 characters). */
  readonly id: string;
  /** ISO 8601 UTC time of receipt, millisecond precision. */
  readonly receivedAt: string;
  readonly surface: Surface;
  readonly kind: SubmissionKind;
  /** Bytes stored. */
  readonly size: number;
  /** `sha256:<hex>` of the stored bytes. */
  readonly digest: string;
  /** The signer's key fingerprint and verification result, for signed messages. */
  readonly identity?: IdentityCheck;
}

/** What the intake needs from the Beacon's configuration. */
export interface IntakeOptions {
  readonly store: SubmissionStore;
  readonly now: () => number;
  readonly randomBytes: (length: number) => Uint8Array<ArrayBuffer>;
  /** HMAC key for hashing source keys, so raw addresses are never at rest. */
  readonly sourceKey: CryptoKey;
  /** How long an idempotency key is remembered, in milliseconds. */
  readonly idempotencyWindowMs: number;
}

/** Receipt ids and context ids carry 128 random bits. */
const ID_BYTES = 16;

/** Builds the receipt of a stored submission from its summary. */
export function receiptOf(summary: SubmissionSummary): Receipt {
  const receipt: Receipt = {
    id: summary.id,
    receivedAt: summary.receivedAt,
    surface: summary.surface,
    kind: summary.kind,
    size: summary.size,
    digest: summary.digest,
  };
  if (summary.identityFingerprint === undefined) return receipt;
  return {
    ...receipt,
    identity: {
      fingerprint: summary.identityFingerprint,
      verified: summary.identityVerified === true,
    },
  };
}

/** The intake: accepts submissions into the store. */
export class Intake {
  readonly #options: IntakeOptions;
  readonly #inFlight = new Map<string, Promise<{ receipt: Receipt; digest: string }>>();

  /** Creates the intake over a store. */
  constructor(options: IntakeOptions) {
    this.#options = options;
  }

  /** The store this intake writes to. */
  get store(): SubmissionStore {
    return this.#options.store;
  }

  /** A fresh 128-bit id, base64url. */
  newId(): string {
    return base64url(this.#options.randomBytes(ID_BYTES));
  }

  /** The salted hash of a source key: 128 bits of HMAC-SHA-256, hex. */
  async sourceHash(source: string): Promise<string> {
    const mac = await crypto.subtle.sign(
      "HMAC",
      this.#options.sourceKey,
      new TextEncoder().encode(source),
    );
    return hex(new Uint8Array(mac, 0, 16));
  }

  /**
   * Stores the submission and returns its receipt; `replayed` is true when an earlier receipt is
   * returned for a retry. Throws `BeaconError("idempotency_key_reused")` for a reused key with
   * other content and `StorageError` when the database fails.
   */
  async accept(input: SubmissionInput): Promise<{ receipt: Receipt; replayed: boolean }> {
    const [digest, sourceHash] = await Promise.all([
      sha256Digest(input.content),
      this.sourceHash(input.source),
    ]);
    if (input.idempotencyKey === undefined) {
      return { receipt: await this.#store(input, digest, sourceHash), replayed: false };
    }
    const slot = `${sourceHash} ${input.idempotencyKey}`;
    const running = this.#inFlight.get(slot);
    if (running !== undefined) {
      const first = await running.catch(() => undefined);
      if (first !== undefined) return this.#replay(first.receipt, first.digest, digest);
    }
    const since = new Date(this.#options.now() - this.#options.idempotencyWindowMs).toISOString();
    const earlier = await this.store.findByIdempotencyKey(sourceHash, input.idempotencyKey, since);
    if (earlier !== undefined) return this.#replay(receiptOf(earlier), earlier.digest, digest);
    const storing = this.#store(input, digest, sourceHash).then((receipt) => ({ receipt, digest }));
    this.#inFlight.set(slot, storing);
    try {
      return { receipt: (await storing).receipt, replayed: false };
    } finally {
      this.#inFlight.delete(slot);
    }
  }

  #replay(receipt: Receipt, storedDigest: string, digest: string) {
    if (storedDigest !== digest) throw new BeaconError("idempotency_key_reused");
    return { receipt, replayed: true };
  }

  async #store(input: SubmissionInput, digest: string, sourceHash: string): Promise<Receipt> {
    const row: NewSubmission = {
      id: this.newId(),
      contextId: this.newId(),
      receivedAt: new Date(this.#options.now()).toISOString(),
      surface: input.surface,
      kind: input.kind,
      contentType: input.contentType,
      content: input.content,
      digest,
      sourceHash,
      identityFingerprint: input.identity?.fingerprint,
      identityVerified: input.identity?.verified,
      idempotencyKey: input.idempotencyKey,
    };
    await this.store.append(row);
    return receiptOf({ ...row, size: row.content.byteLength });
  }
}
