import { ownedKeyText } from '../key-digest';

/**
 * Every key's state as numbers in typed arrays, one column per field, indexed by slot: no
 * object per key (a plain object costs a header and a boxed number per field). Three columns
 * fit every algorithm (`state-columns.ts` maps each one's fields onto them); the sliding log's
 * timestamps live beside them, per slot. The table owns them: it creates and grows them.
 */
export interface StateColumns {
  a: Float64Array;
  b: Float64Array;
  c: Float64Array;
  /** sliding-log only: the admitted units' times, by slot. */
  readonly logs: Map<number, readonly number[]>;
}

/** Slots the table starts with; it doubles up to `maxKeys` as keys arrive. */
const INITIAL_SLOTS = 1024;

/**
 * Keys → slots in typed-array columns, at most `maxKeys` of them. Eviction is CLOCK (second
 * chance, as in operating systems' page caches): every access sets a slot's `used` bit; when a
 * slot is needed and none is free, a hand sweeps the slots, clearing `used` bits and taking the
 * first slot that was not used since the hand last passed — or whose state has expired. A new
 * key starts unmarked, so keys seen once go before keys seen again: a key in use survives a
 * flood of new keys, idle keys go first, and every operation is O(1) amortized, with no
 * per-key object and no timer.
 */
export class SlotTable {
  readonly columns: StateColumns;
  /** Epoch ms after which a slot's state is no longer needed. */
  #expiresAt: Float64Array;
  #used: Uint8Array;
  /** Which key, in which index, each slot holds (to unlink it on eviction). */
  #keys: Array<string | undefined> = [];
  #owners: Array<Map<string, number> | undefined> = [];
  #free: number[] = [];
  #next = 0;
  #hand = 0;
  #size = 0;
  #forgotten = 0;

  constructor(readonly maxKeys: number) {
    const slots = Math.min(maxKeys, INITIAL_SLOTS);
    this.columns = {
      a: new Float64Array(slots),
      b: new Float64Array(slots),
      c: new Float64Array(slots),
      logs: new Map(),
    };
    this.#expiresAt = new Float64Array(slots);
    this.#used = new Uint8Array(slots);
  }

  /** Keys held. */
  get size(): number {
    return this.#size;
  }

  /** Keys evicted to make room while their state was still live (they started afresh). */
  get forgotten(): number {
    return this.#forgotten;
  }

  /** The key's slot when it holds live state at `now`; marks it used. */
  find(index: Map<string, number>, key: string, now: number): number | undefined {
    const slot = index.get(key);
    if (slot === undefined) return undefined;
    this.#used[slot] = 1;
    return (this.#expiresAt[slot] as number) > now ? slot : undefined;
  }

  /** The key's slot, live or not, or -1: with {@link isLive} and {@link keep}, one lookup per decision. */
  slotOf(index: Map<string, number>, key: string): number {
    return index.get(key) ?? -1;
  }

  /** Whether a slot holds live state at `now`; marks it used. */
  isLive(slot: number, now: number): boolean {
    this.#used[slot] = 1;
    return (this.#expiresAt[slot] as number) > now;
  }

  /** A slot for the key (its own, or a new one), to hold state until `expiresAt`. */
  claim(index: Map<string, number>, key: string, now: number, expiresAt: number): number {
    return this.keep(index, key, index.get(key) ?? -1, now, expiresAt);
  }

  /** {@link claim} for a key whose slot (or -1) {@link slotOf} gave, nothing changed since. */
  keep(index: Map<string, number>, key: string, found: number, now: number, expiresAt: number): number {
    let slot = found;
    if (slot < 0) {
      slot = this.#allocate(now);
      // Held for as long as the slot: its own copy, never a slice keeping a larger string alive.
      const text = ownedKeyText(key);
      index.set(text, slot);
      this.#keys[slot] = text;
      this.#owners[slot] = index;
      this.#size++;
      // Not marked used: a key seen once (a flood of rotating addresses) goes before any key
      // seen again, so a flood cannot push out the keys in use.
      this.#used[slot] = 0;
    } else {
      this.#used[slot] = 1;
    }
    this.#expiresAt[slot] = expiresAt;
    return slot;
  }

  /** Expires a slot's state (read as absent from now on) but keeps the slot for its key to reuse. */
  expire(slot: number): void {
    this.#expiresAt[slot] = 0;
  }

  /** Forgets the key. */
  release(index: Map<string, number>, key: string): void {
    const slot = index.get(key);
    if (slot !== undefined) this.#vacate(slot);
  }

  #allocate(now: number): number {
    const free = this.#free.pop();
    if (free !== undefined) return free;
    if (this.#next < this.#expiresAt.length) return this.#next++;
    if (this.#expiresAt.length < this.maxKeys) {
      this.#grow(Math.min(this.maxKeys, this.#expiresAt.length * 2));
      return this.#next++;
    }
    return this.#evict(now);
  }

  #evict(now: number): number {
    const slots = this.#expiresAt.length;
    for (;;) {
      const slot = this.#hand;
      this.#hand = slot + 1 === slots ? 0 : slot + 1;
      if (this.#used[slot] === 0 || (this.#expiresAt[slot] as number) <= now) {
        if ((this.#expiresAt[slot] as number) > now) this.#forgotten++;
        this.#vacate(slot);
        return this.#free.pop() as number;
      }
      this.#used[slot] = 0;
    }
  }

  #vacate(slot: number): void {
    const key = this.#keys[slot];
    if (key === undefined) return;
    this.#owners[slot]?.delete(key);
    this.#keys[slot] = undefined;
    this.#owners[slot] = undefined;
    this.#expiresAt[slot] = 0;
    this.#used[slot] = 0;
    this.columns.logs.delete(slot);
    this.#free.push(slot);
    this.#size--;
  }

  #grow(slots: number): void {
    const grow = <T extends Float64Array | Uint8Array>(old: T, make: (n: number) => T): T => {
      const next = make(slots);
      next.set(old);
      return next;
    };
    const f64 = (n: number) => new Float64Array(n);
    this.columns.a = grow(this.columns.a, f64);
    this.columns.b = grow(this.columns.b, f64);
    this.columns.c = grow(this.columns.c, f64);
    this.#expiresAt = grow(this.#expiresAt, f64);
    this.#used = grow(this.#used, (n) => new Uint8Array(n));
  }
}
