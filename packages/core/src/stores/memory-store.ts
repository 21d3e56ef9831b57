import { runStep } from '../algorithms';
import { SluiceConfigError } from '../policy/config-error';
import type { Verdict } from '../types';
import type { Store, StoreRequest } from './store';

/** Options of {@link MemoryStore}. */
export interface MemoryStoreOptions {
  /**
   * Most keys kept at once; past it the least recently used key is forgotten (as nginx evicts
   * its `limit_req_zone`), so a flood of distinct keys cannot grow memory without bound. A
   * forgotten key starts fresh, so size it above the number of keys active within one window.
   * @defaultValue 100000
   */
  maxKeys?: number;
}

interface Entry {
  state: unknown;
  /** Epoch ms after which `state` is no longer needed (the key is back to its initial state). */
  expiresAt: number;
}

const OPTIONS = new Set(['maxKeys']);

/**
 * The in-process store, and the default. O(1) per decision for every algorithm but
 * `sliding-log` (O(limit)); no timer per key: an idle key expires lazily, when it is next read
 * or when it reaches the least-recently-used end, and the number of keys is capped by `maxKeys`.
 *
 * Memory: about 200 bytes per key plus the key text (measured by the flood test: 1 000 000
 * distinct keys through a store with `maxKeys: 100 000` stay under 40 MB of heap).
 *
 * @example
 * ```ts
 * const limiter = createLimiter({ rate: '10r/s', store: new MemoryStore({ maxKeys: 50_000 }) });
 * ```
 */
export class MemoryStore implements Store {
  /** The cap on keys. */
  readonly maxKeys: number;
  // Map iteration order is insertion order: re-inserting a key on every access keeps the least
  // recently used key first, so eviction and expiry sweeping are O(1).
  readonly #entries = new Map<string, Entry>();

  constructor(options: MemoryStoreOptions = {}) {
    for (const name of Object.keys(options)) {
      if (!OPTIONS.has(name)) {
        throw new SluiceConfigError(name, (options as Record<string, unknown>)[name], 'unknown MemoryStore option; accepted: maxKeys', 'SLUICE_UNKNOWN_OPTION');
      }
    }
    const maxKeys = options.maxKeys ?? 100_000;
    if (typeof maxKeys !== 'number' || !Number.isInteger(maxKeys) || maxKeys < 1) {
      throw new SluiceConfigError('maxKeys', maxKeys, 'must be a whole number >= 1');
    }
    this.maxKeys = maxKeys;
  }

  /** Number of keys currently held (expired ones included until they are swept). */
  get size(): number {
    return this.#entries.size;
  }

  consume(request: StoreRequest): Promise<Verdict> {
    return Promise.resolve(this.consumeSync(request));
  }

  /** The synchronous core of {@link MemoryStore.consume}. */
  consumeSync({ prefix, key, policy, cost, nowMs }: StoreRequest): Verdict {
    const now = nowMs ?? Date.now();
    const id = entryId(prefix, policy.algorithm, key);
    const entries = this.#entries;
    const entry = entries.get(id);
    const live = entry !== undefined && entry.expiresAt > now ? entry : undefined;
    const step = runStep(live?.state, policy, now, cost);
    if (entry !== undefined) entries.delete(id);
    if (step.state !== undefined) {
      const next = entry ?? { state: undefined, expiresAt: 0 };
      next.state = step.state;
      next.expiresAt = now + step.ttlMs;
      entries.set(id, next);
      if (entries.size > this.maxKeys) this.#evictOldest();
    } else if (live !== undefined) {
      entries.set(id, live);
    }
    this.#sweep(now);
    return step.verdict;
  }

  reset({ prefix, key, policy }: Omit<StoreRequest, 'cost'>): Promise<void> {
    this.#entries.delete(entryId(prefix, policy.algorithm, key));
    return Promise.resolve();
  }

  /** Forgets every key. */
  clear(): void {
    this.#entries.clear();
  }

  #evictOldest(): void {
    const oldest = this.#entries.keys().next();
    if (!oldest.done) this.#entries.delete(oldest.value);
  }

  /** Drops up to two expired keys from the least-recently-used end: idle keys leave without timers. */
  #sweep(now: number): void {
    for (let i = 0; i < 2; i++) {
      const oldest = this.#entries.entries().next();
      if (oldest.done || oldest.value[1].expiresAt > now) return;
      this.#entries.delete(oldest.value[0]);
    }
  }
}

/** Unambiguous joint key: the prefix's length makes `("a:b", "c")` and `("a", "b:c")` differ. */
function entryId(prefix: string, algorithm: string, key: string): string {
  return `${algorithm}:${prefix.length}:${prefix}:${key}`;
}
