/** What the block cache remembers of a rejection. */
interface Block {
  /** Local epoch ms until which the key cannot pass. */
  readonly until: number;
  /** The smallest cost known not to pass until then. */
  readonly cost: number;
  readonly limit: number;
  /** Local epoch ms at which the key is back to full, as the store said. */
  readonly resetAt: number;
}

/**
 * Remembers, per key, that the shared store said "limited until T", so later requests for that
 * key on this instance are rejected locally until T without a store call. It only ever rejects
 * what the store would reject (a key's state cannot free a unit sooner than the store said, and a
 * request costing less than the rejected one still goes to the store), so it never admits more.
 *
 * Bounded: two generations of at most `maxKeys / 2` keys each (as `hashlru`), O(1) per call.
 */
export class BlockCache {
  #recent = new Map<string, Block>();
  #older = new Map<string, Block>();
  readonly #generation: number;

  constructor(maxKeys: number) {
    this.#generation = Math.max(1, Math.floor(maxKeys / 2));
  }

  /** The block in force for a request of `cost` at `now`, if any. */
  find(key: string, cost: number, now: number): Block | undefined {
    const block = this.#recent.get(key) ?? this.#older.get(key);
    if (block === undefined) return undefined;
    if (block.until <= now) {
      this.forget(key);
      return undefined;
    }
    return cost >= block.cost && cost > 0 ? block : undefined;
  }

  /** Records a rejection of `cost` for `retryAfterMs` (local time). */
  remember(
    key: string,
    cost: number,
    now: number,
    limit: number,
    retryAfterMs: number,
    resetMs: number,
  ): void {
    if (retryAfterMs <= 0 || cost <= 0) return;
    if (this.#recent.size >= this.#generation) {
      this.#older = this.#recent;
      this.#recent = new Map();
    }
    this.#older.delete(key);
    this.#recent.set(key, { until: now + retryAfterMs, cost, limit, resetAt: now + resetMs });
  }

  forget(key: string): void {
    this.#recent.delete(key);
    this.#older.delete(key);
  }
}
