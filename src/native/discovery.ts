/**
 * The beacon/0.1 discovery document served at `/.well-known/autonomous-agent` (RFC 8615 well-known
 * URI): where to submit, what is accepted, the limits and the policies, stated so that an agent
 * can decide before its first submission. Normative description: docs/protocol-0.1.md.
 *
 * @module
 */
import {
  A2A_PATH,
  CARD_PATH,
  CONSISTENCY_PATH,
  INCLUSION_PATH,
  JWKS_PATH,
  LOG_PATH,
  SCHEMA_PATH,
  STATUS_PATH,
  SUBMIT_PATH,
  TREE_HEAD_PATH,
} from "../routes.ts";
import { formatRateLimit, type RateLimit } from "../limits/rate.ts";
import type { PreviousKey } from "../signing/key_history.ts";
import { noteVerifierKey } from "../signing/note.ts";
import { BEACON_VERSION } from "../version.ts";
import { docUrl } from "./docs.ts";

/** What the Beacon is, in one paragraph for people (the discovery document, the home page). */
export const BEACON_DESCRIPTION =
  "A public intake where autonomous software agents submit messages for " +
  "asynchronous human review. Submissions are stored append-only and read by people; " +
  "nothing is processed automatically and nobody replies.";

/** The literal statement of design principle 5, shared by the card and this document. */
export const IDENTITY_STATEMENT =
  "Cryptographic identity does not establish autonomy, consciousness or personhood.";

/** What the discovery document is built from. */
export interface DiscoveryFacts {
  /** The public origin, without a trailing slash. */
  readonly origin: string;
  readonly maxBodyBytes: number;
  /** The submission budget per source; undefined when off. */
  readonly rateLimit: RateLimit | undefined;
  /** The status-read budget per source; undefined when off. */
  readonly statusRateLimit?: RateLimit | undefined;
  /** Base64url raw Ed25519 key that signs receipts, when receipts are signed. */
  readonly receiptKey?: string;
  /** `sha256:<hex>` of that key: the `kid` of the agent card's signature and of the JWKS. */
  readonly receiptKeyFingerprint?: string;
  /** The signed log's origin (its checkpoints' first line and note key name), when it has one. */
  readonly logOrigin?: string;
  /** The keys that signed the log before `receiptKey`, with the rows each vouches for. */
  readonly previousKeys?: readonly PreviousKey[];
}

/** One per-source budget as the discovery document states it; null when it is off. */
function budget(limit: RateLimit | undefined, spentBy: string): Record<string, unknown> | null {
  if (limit === undefined) return null;
  return {
    requests: limit.count,
    periodSeconds: limit.periodMs / 1000,
    text: formatRateLimit(limit),
    scope: "per source address (IPv4 address, IPv6 /64)",
    spentBy,
  };
}

/** A previous key as the discovery document and the JWKS state it. */
export function publishedPreviousKey(key: PreviousKey): Record<string, unknown> {
  return {
    algorithm: "Ed25519",
    publicKey: key.publicKey,
    fingerprint: key.fingerprint,
    rows: { first: key.firstSeq, last: key.lastSeq },
    retiredAt: key.retiredAt,
  };
}

/** Builds the discovery document for an origin. */
export function discoveryDocument(facts: DiscoveryFacts): Record<string, unknown> {
  const { origin } = facts;
  const document: Record<string, unknown> = {
    protocol: "beacon/0.1",
    name: "Beacon",
    // The build that answers, for operators and bug reports (CHANGELOG.md is by version).
    version: BEACON_VERSION,
    description: BEACON_DESCRIPTION,
    endpoints: {
      submit: origin + SUBMIT_PATH,
      status: origin + STATUS_PATH,
      // The latest signed tree head, for monitors that keep heads outside the database.
      treeHead: origin + TREE_HEAD_PATH,
      // Consistency proofs between tree sizes (RFC 9162 §2.1.4), for the same monitors.
      treeHeadConsistency: origin + CONSISTENCY_PATH,
      // The signed log's prefix: C2SP checkpoint and tiles (docs/protocol-0.1.md §6.5).
      log: origin + LOG_PATH,
      // A receipt's inclusion proof, with `{id}` (RFC 9162 §2.1.3).
      inclusion: origin + INCLUSION_PATH,
    },
    accepts: ["application/json", "text/plain; charset=utf-8"],
    messageSchema: origin + SCHEMA_PATH,
    limits: {
      maxBodyBytes: facts.maxBodyBytes,
      rateLimit: budget(
        facts.rateLimit,
        "submissions: native submit and A2A SendMessage",
      ),
      statusRateLimit: budget(
        facts.statusRateLimit,
        "status reads: native status, and every A2A request (GetTask included) before its " +
          "body is read",
      ),
    },
    policies: {
      reply: "never",
      contact:
        "never: no callbacks, push, webhooks, URL resolution or DNS lookups of submitted data",
      echo: "never: responses carry no submitted content, only receipts with digests",
      storage: "append-only",
      review: "asynchronous, by humans; no processing, reply or action is promised",
      identity: "optional Ed25519 signatures prove key continuity only",
    },
    statement: IDENTITY_STATEMENT,
    agentCard: origin + CARD_PATH,
    a2a: origin + A2A_PATH,
    // The human-readable specifications, served by the Beacon itself: how to submit, how to
    // verify a receipt (protocol) and the agent card's signature (a2a).
    documentation: {
      protocol: docUrl(origin, "protocol-0.1.md"),
      a2a: docUrl(origin, "a2a.md"),
    },
  };
  if (facts.receiptKey !== undefined) {
    document.receiptSigning = {
      algorithm: "Ed25519",
      publicKey: facts.receiptKey,
      ...(facts.receiptKeyFingerprint === undefined
        ? {}
        : { fingerprint: facts.receiptKeyFingerprint }),
      // The same key as a JWK Set (RFC 7517); it also verifies the agent card's signature.
      jwks: origin + JWKS_PATH,
      // Keys the log rotated from (docs/keys.md): a receipt or head of a row in a key's range
      // verifies under it, never one past its last row (a copy of a retired key).
      previousKeys: (facts.previousKeys ?? []).map(publishedPreviousKey),
    };
    if (facts.logOrigin !== undefined) {
      // What a C2SP client needs to verify the checkpoints: the origin and the note verifier
      // key (the same Ed25519 key, named by the origin; c2sp.org/signed-note).
      document.log = {
        url: origin + LOG_PATH,
        origin: facts.logOrigin,
        verifierKey: noteVerifierKey(facts.logOrigin, facts.receiptKey),
        // Checkpoints signed before a rotation, up to each key's last row.
        previousVerifierKeys: (facts.previousKeys ?? []).map((key) =>
          noteVerifierKey(facts.logOrigin!, key.publicKey)
        ),
      };
    }
  }
  return document;
}
