/**
 * A real `Intake` over a real in-memory store, for tests of the protocol handlers. `closed`
 * closes the store first, so every database call fails the way an unreachable database does.
 *
 * @module
 */
import { Intake, type IntakeOptions } from "../../src/intake/accept.ts";
import { SourceHasher } from "../../src/intake/source_hash.ts";
import { SubmissionStore } from "../../src/store/store.ts";

/** The intake; `signReceipts` is the real option through which a receipt signer is configured. */
export async function realIntake(
  options: { closed?: boolean; signReceipts?: IntakeOptions["signReceipts"] } = {},
): Promise<Intake> {
  const store = await SubmissionStore.open({ url: ":memory:" });
  if (options.closed) await store.close();
  return new Intake({
    store,
    now: Date.now,
    randomBytes: (n) => crypto.getRandomValues(new Uint8Array(n)),
    sourceHasher: new SourceHasher(new Uint8Array(32)),
    idempotencyWindowMs: 60_000,
    signReceipts: options.signReceipts,
  });
}
