/**
 * The sample folders under tests/data/, checked before a test reads them.
 *
 * @module
 */

/** Fails with the likely cause: a bare `data/` line in .gitignore also ignores tests/data/. */
export async function assertSamplesExist(directory: URL): Promise<void> {
  try {
    await Deno.stat(directory);
  } catch {
    throw new Error(
      `${directory.pathname} is missing: if .gitignore has "data/", it also ignores tests/data/`,
    );
  }
}
