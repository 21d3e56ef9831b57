import type { ConcurrencyDecision } from './concurrency-types';

/** A request waiting for a permit. */
export interface Waiter {
  readonly key: string;
  /** `performance.now()` when it began waiting. */
  readonly since: number;
  /** Ends the wait with its decision (called once, by whoever takes it out of the queue). */
  readonly settle: (decision: ConcurrencyDecision) => void;
}

/**
 * Requests waiting for a permit, first come first served per key, at most `maxSize` over all
 * keys and `maxPerKey` for one key. Only keys with waiters are kept.
 */
export class WaitQueue {
  readonly #byKey = new Map<string, Waiter[]>();
  #size = 0;

  /**
   * @param maxSize - most requests waiting at once
   * @param maxPerKey - most requests waiting at once for one key
   */
  constructor(
    readonly maxSize: number,
    readonly maxPerKey: number,
  ) {}

  /** Requests waiting, over all keys. */
  get size(): number {
    return this.#size;
  }

  /** Requests waiting for `key`. */
  waiting(key: string): number {
    return this.#byKey.get(key)?.length ?? 0;
  }

  /**
   * Adds a waiter at the back of its key's line; `false` (not added) when `maxSize` wait already,
   * or `maxPerKey` for its key.
   */
  push(waiter: Waiter): boolean {
    if (this.#size >= this.maxSize) return false;
    const line = this.#byKey.get(waiter.key);
    if (line === undefined) this.#byKey.set(waiter.key, [waiter]);
    else if (line.length >= this.maxPerKey) return false;
    else line.push(waiter);
    this.#size++;
    return true;
  }

  /** The first waiter for `key`, still in the queue. */
  head(key: string): Waiter | undefined {
    return this.#byKey.get(key)?.[0];
  }

  /** Takes the first waiter for `key` out of the queue. */
  shift(key: string): Waiter | undefined {
    const line = this.#byKey.get(key);
    if (line === undefined) return undefined;
    const first = line.shift();
    if (line.length === 0) this.#byKey.delete(key);
    this.#size--;
    return first;
  }

  /** Takes `waiter` out wherever it is; `false` when it was not queued (already taken out). */
  remove(waiter: Waiter): boolean {
    const line = this.#byKey.get(waiter.key);
    const index = line?.indexOf(waiter) ?? -1;
    if (line === undefined || index < 0) return false;
    line.splice(index, 1);
    if (line.length === 0) this.#byKey.delete(waiter.key);
    this.#size--;
    return true;
  }
}
