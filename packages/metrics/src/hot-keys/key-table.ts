/**
 * Key text → counter slot for a fixed number of slots: open addressing with linear probing in a
 * table twice the size, rows deleted by shifting back (no tombstones). A `Map` that loses one
 * key and gains another at every request of a flood of new keys keeps growing its deleted
 * entries and rehashing; this table never allocates after construction.
 */
export class KeyTable {
  readonly #mask: number;
  /** Row → slot + 1; 0 is an empty row. */
  readonly #rows: Int32Array;
  /** Slot → its key and the key's hash. */
  readonly #keys: string[];
  readonly #hashes: Int32Array;

  constructor(slots: number) {
    let size = 4;
    while (size < slots * 2) size *= 2;
    this.#mask = size - 1;
    this.#rows = new Int32Array(size);
    this.#keys = new Array<string>(slots).fill('');
    this.#hashes = new Int32Array(slots);
  }

  /** The slot holding `key`, or -1. */
  get(key: string, hash: number): number {
    const rows = this.#rows;
    for (let row = hash & this.#mask; ; row = (row + 1) & this.#mask) {
      const entry = rows[row] as number;
      if (entry === 0) return -1;
      const slot = entry - 1;
      if (this.#hashes[slot] === hash && this.#keys[slot] === key) return slot;
    }
  }

  /** The key at `slot` (set before). */
  keyOf(slot: number): string {
    return this.#keys[slot] as string;
  }

  /** Puts `key` (absent) at `slot` (free). */
  set(key: string, hash: number, slot: number): void {
    const rows = this.#rows;
    let row = hash & this.#mask;
    while (rows[row] !== 0) row = (row + 1) & this.#mask;
    rows[row] = slot + 1;
    this.#keys[slot] = key;
    this.#hashes[slot] = hash;
  }

  /** Frees `slot`, whose key is in the table. */
  delete(slot: number): void {
    const rows = this.#rows;
    const mask = this.#mask;
    let row = (this.#hashes[slot] as number) & mask;
    while (rows[row] !== slot + 1) row = (row + 1) & mask;
    // Shift later rows of the same run back over the hole, so lookups never stop short.
    for (let next = (row + 1) & mask; rows[next] !== 0; next = (next + 1) & mask) {
      const home = (this.#hashes[(rows[next] as number) - 1] as number) & mask;
      // Movable when its home is not in the cyclic range (row, next].
      if ((next > row && (home <= row || home > next)) || (next < row && home <= row && home > next)) {
        rows[row] = rows[next] as number;
        row = next;
      }
    }
    rows[row] = 0;
    this.#keys[slot] = '';
  }
}

/** FNV-1a, 32 bits, over UTF-16 code units (for keys of up to 200 characters: see `keyId`). */
export function hashOf(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash | 0;
}
