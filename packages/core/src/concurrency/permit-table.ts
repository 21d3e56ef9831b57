import { heldKey, ownedKeyText } from '../stores/key-digest';
import type { PermitStore } from '../stores/permit-store';
import type { Store } from '../stores/store';

/**
 * Keys at 0 permits kept before a sweep may forget them (see {@link PermitTable}): a sweep runs
 * once more than this many are idle and they are over half the table.
 */
const IDLE_KEPT = 1024;

/**
 * Permits counted in this process: per key, how many are taken. No lease and no timer: the
 * permits die with the process.
 *
 * A key whose count drops to 0 stays in the map (at 0) until a sweep forgets the idle keys at
 * once, when they are over {@link IDLE_KEPT} and over half the map: the table stays bounded by
 * the keys with requests in flight (at most twice them, plus `IDLE_KEPT`), whatever the number
 * of distinct keys seen. Deleting the last entry of a key at each release would make V8 rebuild
 * the map's hash table, in old space once the map has lived a while, at each 1 → 0 → 1: a
 * request at a time per key, or a pipelined batch drained before the next, did so every few
 * requests, and the tables thrown away fed the major GC.
 *
 * Each key's count is a small object of its own, changed in place: a take and a give look the
 * key up once each, where a count kept as the map's value is looked up and stored again.
 */
export class PermitTable {
  readonly #counts = new Map<string, Count>();
  /** Keys in `#counts` at 0. */
  #idle = 0;
  /** Called with the key of each permit given back: limiters with requests waiting on this table. */
  readonly #watchers = new Set<(key: string) => void>();

  /**
   * Takes a permit when fewer than `max` are taken: the count after, or -1 when full. A key is
   * held as the memory store holds it (`heldKey`, a copy of its own text): a 15 kB key, or one
   * sliced out of a 15 kB header, costs an idle entry what a short one does.
   */
  take(key: string, max: number): number {
    const held = heldKey(key);
    const count = this.#counts.get(held);
    if (count === undefined) {
      if (max < 1) return -1;
      this.#counts.set(ownedKeyText(held), { taken: 1 });
      return 1;
    }
    if (count.taken >= max) return -1;
    if (count.taken === 0) this.#idle--;
    return ++count.taken;
  }

  /** Gives one permit of `key` back, then tells the watchers (who may take it at once). */
  give(key: string): void {
    const count = this.#counts.get(heldKey(key));
    if (count !== undefined && count.taken > 0 && --count.taken === 0) {
      if (++this.#idle > IDLE_KEPT && this.#idle * 2 > this.#counts.size) this.#sweep();
    }
    if (this.#watchers.size > 0) for (const watcher of this.#watchers) watcher(key);
  }

  /** Permits of `key` taken now. */
  count(key: string): number {
    return this.#counts.get(heldKey(key))?.taken ?? 0;
  }

  /** Keys with permits taken now. */
  get size(): number {
    return this.#counts.size - this.#idle;
  }

  /** Keys held in memory, those at 0 included (for tests of the bound). */
  get held(): number {
    return this.#counts.size;
  }

  watch(watcher: (key: string) => void): void {
    this.#watchers.add(watcher);
  }

  unwatch(watcher: (key: string) => void): void {
    this.#watchers.delete(watcher);
  }

  /** Forgets every key at 0: at least half the map, so its cost is spread over as many releases. */
  #sweep(): void {
    for (const [key, count] of this.#counts) if (count.taken === 0) this.#counts.delete(key);
    this.#idle = 0;
  }
}

/** The permits of one key taken now. */
interface Count {
  taken: number;
}

/** One table per in-process store and prefix: limiters sharing both share their counts, as on Redis. */
const tables = new WeakMap<Store, Map<string, PermitTable>>();
/** One table per shared store and prefix: the leases this process holds there (see {@link leaseTable}). */
const leaseTables = new WeakMap<PermitStore, Map<string, PermitTable>>();

/** The permit table of `store` for `prefix`, made on first use. */
export function permitTable(store: Store, prefix: string): PermitTable {
  return tableOf(tables, store, prefix);
}

/**
 * The leases this process holds in the shared store `store` for `prefix`, counted per key by
 * every limiter on both, as Redis counts them: what keeps this process within `max` when Redis
 * counts fewer than it runs (it lost its data, or a lease lapsed while its request still runs).
 */
export function leaseTable(store: PermitStore, prefix: string): PermitTable {
  return tableOf(leaseTables, store, prefix);
}

function tableOf<K extends object>(
  byStore: WeakMap<K, Map<string, PermitTable>>,
  store: K,
  prefix: string,
): PermitTable {
  let byPrefix = byStore.get(store);
  if (byPrefix === undefined) byStore.set(store, (byPrefix = new Map()));
  let table = byPrefix.get(prefix);
  if (table === undefined) byPrefix.set(prefix, (table = new PermitTable()));
  return table;
}
