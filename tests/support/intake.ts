/**
 * A real `Intake` over a real in-memory store, for tests of the protocol handlers. `closed`
 * closes the store first, so every database call fails the way an unreachable database does.
 *
 * @module
 */
import { Intake, type IntakeOptions } from "../../src/intake/accept.ts";
import { SourceHasher } from "../../src/intake/source_hash.ts";
import { type ReceiptSigner, SubmissionStore } from "../../src/store/store.ts";
import { signingKeyFromSeed } from "../../src/signing/key.ts";
import { IntakeSignatures } from "../../src/signing/log_audit.ts";
import { signReceipts } from "../../src/signing/receipt.ts";

/** What {@linkcode realIntake} may set. */
export interface RealIntakeOptions {
  readonly closed?: boolean;
  /** The store's receipt signer; default: a fresh key's, which the replay check also uses. */
  readonly signReceipts?: ReceiptSigner;
}

/** The intake. */
export async function realIntake(options: RealIntakeOptions = {}): Promise<Intake> {
  return (await realIntakeAndStore(options)).intake;
}

/** The intake and its store, for a test that closes the store partway (an outage). */
export async function realIntakeAndStore(
  options: RealIntakeOptions = {},
): Promise<{ intake: Intake; store: SubmissionStore }> {
  const key = await signingKeyFromSeed(crypto.getRandomValues(new Uint8Array(32)));
  const store = await SubmissionStore.open({ url: ":memory:" }, Date.now, {
    signReceipts: options.signReceipts ?? ((receipts) => signReceipts(key, receipts)),
  });
  const acknowledged = new IntakeSignatures([key.publicKey]);
  if (options.closed) await store.close();
  const intake = new Intake(
    {
      store,
      now: Date.now,
      randomBytes: (n) => crypto.getRandomValues(new Uint8Array(n)),
      sourceHasher: new SourceHasher(new Uint8Array(32)),
      idempotencyWindowMs: 60_000,
      acknowledged: (fields, stored) => acknowledged.verifies(fields, stored),
    } satisfies IntakeOptions,
  );
  return { intake, store };
}
