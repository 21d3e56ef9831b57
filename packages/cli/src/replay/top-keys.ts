/** One key followed by a {@link TopKeys} summary. */
export interface TopKeyEntry<T> {
  readonly key: string;
  /** Times counted: at least the true count, at most `error` more. */
  readonly count: number;
  /** How much of `count` may belong to keys this one replaced (0: exact). */
  readonly error: number;
  /** Data kept beside the key while it is followed (the per-key chart series). */
  readonly data: T;
}

interface Slot<T> {
  key: string;
  count: number;
  error: number;
  index: number;
  data: T;
}

/**
 * The most frequent keys of a stream in bounded memory: the Space-Saving summary (Metwally,
 * Agrawal, El Abbadi, 2005). It follows `capacity` keys; a key not followed replaces the one with
 * the lowest count and inherits that count as its possible error. Every key whose true count
 * exceeds (total / capacity) is guaranteed to be followed, which is what "the keys limited most"
 * needs from a log of millions of distinct clients.
 *
 * A min-heap of the followed keys finds the one to replace in O(log capacity).
 */
export class TopKeys<T = undefined> {
  readonly #capacity: number;
  readonly #fresh: (key: string, previous: T | undefined) => T;
  readonly #slots = new Map<string, Slot<T>>();
  readonly #heap: Array<Slot<T>> = [];

  /**
   * @param capacity - keys followed at once
   * @param fresh - the data of a newly followed key; `previous` is the data of the key it
   *   replaces, to reuse (the summary replaces keys all the time in a log of many clients)
   */
  constructor(capacity: number, fresh: (key: string, previous: T | undefined) => T) {
    this.#capacity = capacity;
    this.#fresh = fresh;
  }

  /**
   * Counts one occurrence of `key`.
   * @returns the data kept for `key` (new when the key has just started being followed)
   */
  add(key: string, weight = 1): T {
    let slot = this.#slots.get(key);
    if (slot === undefined) {
      if (this.#heap.length < this.#capacity) {
        slot = { key, count: weight, error: 0, index: this.#heap.length, data: this.#fresh(key, undefined) };
        this.#heap.push(slot);
        this.#slots.set(key, slot);
        this.#up(slot.index);
        return slot.data;
      } else {
        slot = this.#heap[0] as Slot<T>;
        this.#slots.delete(slot.key);
        slot.key = key;
        slot.error = slot.count;
        slot.data = this.#fresh(key, slot.data);
      }
      this.#slots.set(key, slot);
    }
    slot.count += weight;
    this.#down(slot.index);
    return slot.data;
  }

  /** The followed key's data, `undefined` when `key` is not followed. */
  get(key: string): T | undefined {
    return this.#slots.get(key)?.data;
  }

  /** The `n` keys with the highest counts, highest first (ties: the smaller error, then the key). */
  top(n: number): Array<TopKeyEntry<T>> {
    return [...this.#heap]
      .sort((a, b) => b.count - a.count || a.error - b.error || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
      .slice(0, n)
      .map(({ key, count, error, data }) => ({ key, count, error, data }));
  }

  #up(index: number): void {
    const heap = this.#heap;
    const slot = heap[index] as Slot<T>;
    while (index > 0) {
      const parentIndex = (index - 1) >> 1;
      const parent = heap[parentIndex] as Slot<T>;
      if (parent.count <= slot.count) break;
      heap[index] = parent;
      parent.index = index;
      index = parentIndex;
    }
    heap[index] = slot;
    slot.index = index;
  }

  #down(index: number): void {
    const heap = this.#heap;
    const slot = heap[index] as Slot<T>;
    for (;;) {
      const left = 2 * index + 1;
      if (left >= heap.length) break;
      const right = left + 1;
      const child =
        right < heap.length && (heap[right] as Slot<T>).count < (heap[left] as Slot<T>).count ? right : left;
      const smaller = heap[child] as Slot<T>;
      if (smaller.count >= slot.count) break;
      heap[index] = smaller;
      smaller.index = index;
      index = child;
    }
    heap[index] = slot;
    slot.index = index;
  }
}
