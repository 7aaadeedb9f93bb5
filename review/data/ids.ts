/**
 * Receipt ids as a reviewer types them: the whole id or any unique prefix of it (at least 4
 * characters), so nobody has to copy 30 characters. An ambiguous prefix is refused with the
 * candidates listed (rendered safely, like everything taken from the database).
 *
 * @module
 */
import type { Client } from "@libsql/client";
import { CliError } from "../io.ts";
import { idsWithPrefix } from "./queries.ts";
import { safeText } from "../render/mod.ts";

/** Shortest prefix accepted. */
export const MIN_PREFIX = 4;
/** Characters of a receipt id the Beacon mints (intake/accept.ts). */
const RECEIPT_ID_LENGTH = 30;
/** Candidates listed for an ambiguous prefix. */
const SHOWN_CANDIDATES = 5;

/**
 * The full receipt id that `typed` names.
 *
 * @param client The database.
 * @param typed A receipt id or a unique prefix of one.
 * @param action What the command does, for the message (`show`, `mark`, …).
 * @returns The full id.
 * @throws {CliError} When it names no submission, or several.
 */
export async function resolveId(client: Client, typed: string, action: string): Promise<string> {
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(typed)) {
    throw new CliError(`Cannot ${action}: ${safeText(typed)} is not a receipt id`, 2);
  }
  if (typed.length < MIN_PREFIX) {
    throw new CliError(`Cannot ${action}: give at least ${MIN_PREFIX} characters of the id`, 2);
  }
  const found = await idsWithPrefix(client, typed, SHOWN_CANDIDATES + 1);
  if (found.includes(typed)) return typed;
  if (found.length === 1) return found[0];
  if (found.length === 0) {
    throw new CliError(
      typed.length >= RECEIPT_ID_LENGTH
        ? `Cannot ${action}: no submission has receipt id ${typed}`
        : `Cannot ${action}: no submission has a receipt id starting ${typed}`,
    );
  }
  const listed = found.slice(0, SHOWN_CANDIDATES).map((id) => safeText(id)).join(", ");
  throw new CliError(
    `Cannot ${action}: ${typed} is ambiguous; it starts ${listed}` +
      (found.length > SHOWN_CANDIDATES ? " and more" : ""),
  );
}

/**
 * Every id of `typed`, resolved, all or nothing.
 *
 * @param client The database.
 * @param typed Ids or prefixes.
 * @param action What the command does.
 * @returns The full ids, duplicates removed, in the order given.
 */
export async function resolveIds(
  client: Client,
  typed: readonly string[],
  action: string,
): Promise<string[]> {
  const ids: string[] = [];
  for (const one of typed) {
    const id = await resolveId(client, one, action);
    if (!ids.includes(id)) ids.push(id);
  }
  return ids;
}
