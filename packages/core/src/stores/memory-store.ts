import { runStep } from '../algorithms';
import { SluiceConfigError } from '../policy/config-error';
import type { Verdict } from '../types';
import type { Store, StoreRequest } from './store';

/** Options of {@link MemoryStore}. */
export interface MemoryStoreOptions {
  /**
   * Most keys kept at once; past it the keys used least recently are forgotten (as nginx evicts
   * its `limit_req_zone`), so a flood of distinct keys cannot grow memory without bound. A
   * forgotten key starts fresh, so size it well above the number of keys active within one window.
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
 * `sliding-log` (O(limit)); no timer per key. At most `maxKeys` keys are held: when full, the
 * half used least recently is forgotten at once (a generational LRU), so a flood of distinct
 * keys cannot grow memory, while a key in use is never evicted by a flood of new ones. An idle
 * key's state is ignored once it has expired and its memory goes with its generation.
 *
 * Memory: about 210 bytes per key plus the key text (GCRA, measured; the bounds test checks 1 000 000
 * distinct keys through the default `maxKeys: 100 000` stay under 40 MB of heap).
 *
 * @example
 * ```ts
 * const limiter = createLimiter({ rate: '10r/s', store: new MemoryStore({ maxKeys: 50_000 }) });
 * ```
 */
export class MemoryStore implements Store {
  /** The cap on keys. */
  readonly maxKeys: number;
  // Two generations (as hashlru / quick-lru): a hit in `#recent` costs one Map lookup and no
  // write; a hit in `#older` moves the key to `#recent`. When `#recent` is full it becomes
  // `#older` and the previous `#older` — the keys unused for a whole generation — is dropped at
  // once. Every operation is O(1), and no Map is ever iterated.
  #recent = new Map<string, Entry>();
  #older = new Map<string, Entry>();
  readonly #generation: number;

  constructor(options: MemoryStoreOptions = {}) {
    for (const name of Object.keys(options)) {
      if (!OPTIONS.has(name)) {
        throw new SluiceConfigError(
          name,
          (options as Record<string, unknown>)[name],
          'unknown MemoryStore option; accepted: maxKeys',
          'SLUICE_UNKNOWN_OPTION',
        );
      }
    }
    const maxKeys = options.maxKeys ?? 100_000;
    if (typeof maxKeys !== 'number' || !Number.isInteger(maxKeys) || maxKeys < 1) {
      throw new SluiceConfigError('maxKeys', maxKeys, 'must be a whole number >= 1');
    }
    this.maxKeys = maxKeys;
    this.#generation = Math.max(1, Math.floor(maxKeys / 2));
  }

  /** Number of keys currently held (expired ones included until their generation is dropped). */
  get size(): number {
    return this.#recent.size + this.#older.size;
  }

  consume(request: StoreRequest): Promise<Verdict> {
    return Promise.resolve(this.consumeSync(request));
  }

  /** The synchronous core of {@link MemoryStore.consume}. */
  consumeSync({ prefix, key, policy, cost, nowMs }: StoreRequest): Verdict {
    const now = nowMs ?? Date.now();
    const id = entryId(prefix, policy.algorithm, key);
    let entry = this.#recent.get(id);
    if (entry === undefined) {
      entry = this.#older.get(id);
      if (entry !== undefined) {
        this.#older.delete(id);
        this.#insert(id, entry);
      }
    }
    const step = runStep(
      entry !== undefined && entry.expiresAt > now ? entry.state : undefined,
      policy,
      now,
      cost,
    );
    if (step.state !== undefined) {
      if (entry === undefined) {
        this.#insert(id, { state: step.state, expiresAt: now + step.ttlMs });
      } else {
        entry.state = step.state;
        entry.expiresAt = now + step.ttlMs;
      }
    }
    return step.verdict;
  }

  reset({ prefix, key, policy }: Omit<StoreRequest, 'cost'>): Promise<void> {
    const id = entryId(prefix, policy.algorithm, key);
    this.#recent.delete(id);
    this.#older.delete(id);
    return Promise.resolve();
  }

  /** Forgets every key. */
  clear(): void {
    this.#recent = new Map();
    this.#older = new Map();
  }

  #insert(id: string, entry: Entry): void {
    if (this.#recent.size >= this.#generation) {
      this.#older = this.#recent;
      this.#recent = new Map();
    }
    this.#recent.set(id, entry);
    // Only reachable when maxKeys is 1: two generations of one key would be two keys.
    if (this.#recent.size + this.#older.size > this.maxKeys) this.#older = new Map();
  }
}

/** Unambiguous joint key: the prefix's length makes `("a:b", "c")` and `("a", "b:c")` differ. */
function entryId(prefix: string, algorithm: string, key: string): string {
  return `${algorithm}:${prefix.length}:${prefix}:${key}`;
}
