import type { Store } from '../stores/store';

/**
 * Permits counted in this process: per key, how many are taken. A key whose count drops to 0 is
 * forgotten, so the table holds only keys with requests in flight (bounded by them, whatever
 * the number of distinct keys seen). No lease and no timer: the permits die with the process.
 */
export class PermitTable {
  readonly #counts = new Map<string, number>();
  /** Called with the key of each permit given back: limiters with requests waiting on this table. */
  readonly #watchers = new Set<(key: string) => void>();

  /** Takes a permit when fewer than `max` are taken: the count after, or -1 when full. */
  take(key: string, max: number): number {
    const taken = this.#counts.get(key) ?? 0;
    if (taken >= max) return -1;
    this.#counts.set(key, taken + 1);
    return taken + 1;
  }

  /** Gives one permit of `key` back, then tells the watchers (who may take it at once). */
  give(key: string): void {
    const taken = this.#counts.get(key) ?? 0;
    if (taken <= 1) this.#counts.delete(key);
    else this.#counts.set(key, taken - 1);
    if (this.#watchers.size > 0) for (const watcher of this.#watchers) watcher(key);
  }

  /** Permits of `key` taken now. */
  count(key: string): number {
    return this.#counts.get(key) ?? 0;
  }

  /** Keys with permits taken now. */
  get size(): number {
    return this.#counts.size;
  }

  watch(watcher: (key: string) => void): void {
    this.#watchers.add(watcher);
  }

  unwatch(watcher: (key: string) => void): void {
    this.#watchers.delete(watcher);
  }
}

/** One table per in-process store and prefix: limiters sharing both share their counts, as on Redis. */
const tables = new WeakMap<Store, Map<string, PermitTable>>();

/** The permit table of `store` for `prefix`, made on first use. */
export function permitTable(store: Store, prefix: string): PermitTable {
  let byPrefix = tables.get(store);
  if (byPrefix === undefined) tables.set(store, (byPrefix = new Map()));
  let table = byPrefix.get(prefix);
  if (table === undefined) byPrefix.set(prefix, (table = new PermitTable()));
  return table;
}
