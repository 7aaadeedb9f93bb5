/**
 * Reads the log's tiles back from the heads that carry them (src/store/log_rows.ts), for the
 * served tiles, the proofs, and a process that continues the log from its newest head.
 *
 * A head row is used only when its checkpoint note verifies under the key it names and the log's
 * origin, and that key may cover its size: the current key, or a previous key up to its rotation
 * boundary (src/signing/key_history.ts; the tiles and the origin are the log's, not a key's). So
 * a row a database writer appended, or a retired key's head past its boundary, is never read as
 * the log: with one tiled head per size and
 * per start (the unique indexes of migration 12), a verified head is the one the Beacon signed,
 * and its entries are the ones it signed over. Tiles never change once a head covers them, so
 * assembled tiles and verdicts are kept in small caches, which bound the cost of any request to a
 * few reads and at most 127 node hashes per proof step.
 *
 * @module
 */
import { fromBase64url, fromHex } from "../bytes.ts";
import type { KeyHistory } from "../signing/key_history.ts";
import { checkpointBody, verifyNoteSignature } from "../signing/note.ts";
import { entriesAt, HASH_BYTES, type Tile, TILE_WIDTH, type TileSource } from "../signing/tiles.ts";
import type { LogRows, TileHeadRow } from "../store/log_rows.ts";

/** Tiles kept assembled (8 KiB each at most). */
const CACHED_TILES = 512;
/** Head verdicts kept (a head row never changes). */
const CACHED_VERDICTS = 8192;

/** Thrown when the stored heads do not hold a tile they cover: the store was changed. */
export class TileMissing extends Error {
  constructor(tile: Tile) {
    super(`the stored heads do not hold tile ${tile.level}/${tile.index} (width ${tile.width})`);
    this.name = "TileMissing";
  }
}

/** A map that forgets its oldest entry past `limit`. */
class Recent<K, V> extends Map<K, V> {
  readonly limit: number;

  constructor(limit: number) {
    super();
    this.limit = limit;
  }

  override set(key: K, value: V): this {
    if (this.size >= this.limit && !this.has(key)) this.delete(this.keys().next().value!);
    return super.set(key, value);
  }
}

/** Reads verified tiles of the log, signed by the keys of its history. */
export class TileReader {
  readonly #rows: LogRows;
  readonly #history: () => KeyHistory;
  readonly #origin: string;
  readonly #tiles = new Recent<string, readonly Uint8Array[]>(CACHED_TILES);
  readonly #verdicts = new Recent<number, boolean>(CACHED_VERDICTS);

  /** @param history The log's keys as now known (it grows when a rotation is recorded). */
  constructor(rows: LogRows, history: () => KeyHistory, origin: string) {
    this.#rows = rows;
    this.#history = history;
    this.#origin = origin;
  }

  /**
   * Whether a head row's note signature verifies over its size and root under the origin and
   * its key, and that key may cover its size.
   */
  async verifies(
    head: Pick<TileHeadRow, "seq" | "publicKey" | "treeSize" | "rootHash" | "noteSignature">,
  ) {
    if (!this.#history().mayCover(head.publicKey, head.treeSize)) return false;
    let verdict = this.#verdicts.get(head.seq);
    if (verdict === undefined) {
      const rawKey = fromBase64url(head.publicKey);
      verdict = rawKey?.length === 32 && await verifyNote(rawKey, this.#origin, head);
      this.#verdicts.set(head.seq, verdict);
    }
    return verdict;
  }

  /**
   * The entries of `tile`, read from the verified heads that hold them.
   *
   * @throws {TileMissing} When they do not hold every entry.
   * @throws {StorageError} When the database fails.
   */
  async tile(tile: Tile): Promise<readonly Uint8Array[]> {
    const key = `${tile.level}/${tile.index}/${tile.width}`;
    const cached = this.#tiles.get(key) ??
      this.#tiles.get(`${tile.level}/${tile.index}/${TILE_WIDTH}`);
    if (cached !== undefined) return cached.slice(0, tile.width);
    const low = tile.index * TILE_WIDTH;
    const high = low + tile.width;
    const entries: Uint8Array[] = new Array(tile.width);
    let filled = 0;
    const heads = await this.#rows.tileHeads(this.#history().keys(), tile.level, low, high);
    for (const head of heads) {
      if (!await this.verifies(head)) continue;
      const first = entriesAt(head.fromSize, tile.level);
      const last = entriesAt(head.treeSize, tile.level);
      let offset = 0;
      for (let level = 0; level < tile.level; level++) {
        offset += (entriesAt(head.treeSize, level) - entriesAt(head.fromSize, level)) * HASH_BYTES;
      }
      for (let entry = Math.max(first, low); entry < Math.min(last, high); entry++) {
        if (entries[entry - low] !== undefined) continue;
        const at = offset + (entry - first) * HASH_BYTES;
        if (at + HASH_BYTES > head.tiles.length) break;
        entries[entry - low] = head.tiles.slice(at, at + HASH_BYTES);
        filled++;
      }
    }
    if (filled !== tile.width) throw new TileMissing(tile);
    this.#tiles.set(key, entries);
    return entries;
  }

  /** The tile source for proofs and roots over the first `size` leaves. */
  source(): TileSource {
    return (tile) => this.tile(tile);
  }

  /**
   * The right edge of the log at `size` leaves: the entries of every level's newest tile, as
   * `TileLog.fromEdge` takes them.
   */
  async edge(size: number): Promise<Uint8Array[][]> {
    const edge: Uint8Array[][] = [];
    for (let level = 0; level === 0 || entriesAt(size, level) > 0; level++) {
      const entries = entriesAt(size, level);
      const width = entries % TILE_WIDTH;
      edge.push(
        width === 0 ? [] : [
          ...await this.tile({ level, index: Math.floor(entries / TILE_WIDTH), width }),
        ],
      );
    }
    return edge;
  }
}

async function verifyNote(
  rawKey: Uint8Array<ArrayBuffer>,
  origin: string,
  head: Pick<TileHeadRow, "treeSize" | "rootHash" | "noteSignature">,
): Promise<boolean> {
  const root = fromHex(head.rootHash);
  if (root?.length !== HASH_BYTES || !Number.isSafeInteger(head.treeSize)) return false;
  const body = checkpointBody(origin, head.treeSize, root);
  return await verifyNoteSignature(rawKey, origin, body, head.noteSignature);
}
