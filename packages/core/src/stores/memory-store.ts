import { runStep } from '../algorithms';
import { SluiceConfigError } from '../policy/config-error';
import type { AlgorithmName, Verdict } from '../types';
import { SlotTable } from './memory/slot-table';
import { CODECS, type StateCodec } from './memory/state-columns';
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

const OPTIONS = new Set(['maxKeys']);

/**
 * The in-process store, and the default. O(1) per decision for every algorithm but
 * `sliding-log` (O(limit)); no timer and no object per key: state lives in typed-array columns
 * indexed by one `Map` from key to slot. At most `maxKeys` keys are held; when full, a key seen
 * only once or not used lately makes room (CLOCK eviction, see `SlotTable`), so a flood of
 * distinct keys cannot grow memory and cannot push out the keys in use. An idle key's state is
 * ignored once expired, and its slot is reused.
 *
 * Memory: about 45 bytes per key plus the key text (measured with `--expose-gc` over 1 000 000
 * keys; a plain `Map` of `{ tokens, last }` objects takes about 100). The default store
 * (`maxKeys: 100 000`) stays under 16 MB of heap whatever the flood, keys included.
 *
 * @example
 * ```ts
 * const limiter = createLimiter({ rate: '10r/s', store: new MemoryStore({ maxKeys: 50_000 }) });
 * ```
 */
export class MemoryStore implements Store {
  /** The cap on keys. */
  readonly maxKeys: number;
  readonly #table: SlotTable;
  /** algorithm → prefix → key → slot: no string is built per decision. */
  readonly #indexes = new Map<AlgorithmName, Map<string, Map<string, number>>>();
  // The index used last: one limiter calling in a row skips both lookups.
  #lastAlgorithm: AlgorithmName | undefined;
  #lastPrefix: string | undefined;
  #lastIndex: Map<string, number> | undefined;

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
    if (typeof maxKeys !== 'number' || !Number.isInteger(maxKeys) || maxKeys < 1 || maxKeys > 2 ** 30) {
      throw new SluiceConfigError('maxKeys', maxKeys, 'must be a whole number from 1 to 2^30');
    }
    this.maxKeys = maxKeys;
    this.#table = new SlotTable(maxKeys);
  }

  /** Number of keys currently held (expired ones included until their slot is reused). */
  get size(): number {
    return this.#table.size;
  }

  consume(request: StoreRequest): Promise<Verdict> {
    return Promise.resolve(this.consumeSync(request));
  }

  /** The synchronous core of {@link MemoryStore.consume}. */
  consumeSync({ prefix, key, policy, cost, nowMs }: StoreRequest): Verdict {
    const now = nowMs ?? Date.now();
    const table = this.#table;
    const index = this.#index(policy.algorithm, prefix);
    const codec = CODECS[policy.algorithm] as StateCodec<unknown>;
    const slot = table.find(index, key, now);
    const step = runStep(
      slot === undefined ? undefined : codec.decode(table.columns, slot),
      policy,
      now,
      cost,
    );
    if (step.state !== undefined)
      codec.encode(step.state, table.columns, table.claim(index, key, now, now + step.ttlMs));
    return step.verdict;
  }

  reset({ prefix, key, policy }: Omit<StoreRequest, 'cost'>): Promise<void> {
    this.#table.release(this.#index(policy.algorithm, prefix), key);
    return Promise.resolve();
  }

  #index(algorithm: AlgorithmName, prefix: string): Map<string, number> {
    if (algorithm === this.#lastAlgorithm && prefix === this.#lastPrefix)
      return this.#lastIndex as Map<string, number>;
    let byPrefix = this.#indexes.get(algorithm);
    if (byPrefix === undefined) this.#indexes.set(algorithm, (byPrefix = new Map()));
    let index = byPrefix.get(prefix);
    if (index === undefined) byPrefix.set(prefix, (index = new Map()));
    this.#lastAlgorithm = algorithm;
    this.#lastPrefix = prefix;
    this.#lastIndex = index;
    return index;
  }
}
