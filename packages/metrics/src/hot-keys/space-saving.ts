import { keyId } from './key-id';
import { hashOf, KeyTable } from './key-table';

/** One of the most requested keys of a limiter (see {@link SpaceSaving}). */
export interface HotKey {
  /** The key as the limiter saw it, or its shortened form (`keyId`: over 200 characters, or like one). */
  readonly key: string;
  /**
   * Its requests over about the last minute (each weighted by `e^(-age / 60 s)`): an upper
   * bound, at most `error` above the true weighted count.
   */
  readonly requests: number;
  /** Of those, counted since the key entered the summary: admitted at once. */
  readonly admitted: number;
  /** … admitted with a delay. */
  readonly delayed: number;
  /** … refused (dry-run refusals included). */
  readonly limited: number;
  /**
   * How much `requests` may overstate the key: the weighted count of the key that held its
   * counter before it. Never above the weighted total of all requests divided by the summary's size.
   */
  readonly error: number;
}

/** Decisions a key is counted under. */
export const ADMITTED = 0;
export const DELAYED = 1;
export const LIMITED = 2;
export type Outcome = typeof ADMITTED | typeof DELAYED | typeof LIMITED;

/** Time constant of the decay: a request counts `e^(-age / TIME_CONSTANT_MS)`. */
export const TIME_CONSTANT_MS = 60_000;
/** Weights are rescaled before they grow past e^20, so sums keep their precision. */
const RESCALE_AFTER_MS = 20 * TIME_CONSTANT_MS;

/**
 * The most requested keys of one limiter, in fixed memory: the Space-Saving summary (Metwally,
 * Agrawal, El Abbadi, 2005) with `size` counters, whatever the number of distinct keys.
 *
 * A request for a key that has a counter adds to it; one for a key without a counter takes the
 * counter of the least counted key, whose count becomes the newcomer's `error` (it may have been
 * that high), plus one. So each count is an upper bound, overstating the key by at most its
 * `error` ≤ total / size, and every key with more than total / size requests holds a counter.
 *
 * Recent requests weigh more (forward decay, Cormode et al. 2009): a request counts
 * `e^(-age / 60 s)`, so a key hot an hour ago fades, and the weighted count of a steady key is
 * about its requests over the last minute. Weighting every request alike at one instant is
 * Space-Saving with weighted updates, so the bounds above hold for the weighted counts.
 *
 * A hit costs a `Map` lookup, a few additions and a sift in a heap of `size` (O(log size), mostly
 * O(1)); it allocates nothing for a key of up to 200 characters (but one like a shortened key:
 * see `keyId`).
 */
export class SpaceSaving {
  readonly size: number;
  readonly #table: KeyTable;
  readonly #count: Float64Array;
  readonly #error: Float64Array;
  readonly #outcomes: [Float64Array, Float64Array, Float64Array];
  /** A min-heap of slots by count: the root is the counter a new key takes. */
  readonly #heap: Int32Array;
  /** Where each slot sits in the heap. */
  readonly #position: Int32Array;
  #used = 0;
  /** Weighted requests of every key, counted or not. */
  #total = 0;
  /** Weights are `e^((t - epoch) / TIME_CONSTANT_MS)`: a request at `epoch` weighs 1. */
  #epoch = Number.NaN;
  #weightAt = Number.NaN;
  #weight = 1;

  constructor(size: number) {
    this.size = size;
    this.#table = new KeyTable(size);
    this.#count = new Float64Array(size);
    this.#error = new Float64Array(size);
    this.#outcomes = [new Float64Array(size), new Float64Array(size), new Float64Array(size)];
    this.#heap = new Int32Array(size);
    this.#position = new Int32Array(size);
  }

  /** Counts one request for `key` decided as `outcome` at `nowMs`. */
  add(key: string, outcome: Outcome, nowMs: number): void {
    const w = this.#weightOf(nowMs);
    const id = keyId(key);
    const hash = hashOf(id);
    let slot = this.#table.get(id, hash);
    if (slot < 0) slot = this.#take(id, hash);
    this.#count[slot] = (this.#count[slot] as number) + w;
    const counted = this.#outcomes[outcome];
    counted[slot] = (counted[slot] as number) + w;
    this.#total += w;
    this.#siftDown(this.#position[slot] as number);
  }

  /** The `n` most requested keys at `nowMs`, most requested first. */
  top(n: number, nowMs: number): HotKey[] {
    const scale = this.#used === 0 ? 0 : this.#decay(nowMs);
    const slots = Array.from({ length: this.#used }, (_, slot) => slot)
      .sort((a, b) => (this.#count[b] as number) - (this.#count[a] as number))
      .slice(0, n);
    return slots.map((slot) => ({
      key: this.#table.keyOf(slot),
      requests: (this.#count[slot] as number) * scale,
      admitted: (this.#outcomes[ADMITTED][slot] as number) * scale,
      delayed: (this.#outcomes[DELAYED][slot] as number) * scale,
      limited: (this.#outcomes[LIMITED][slot] as number) * scale,
      error: (this.#error[slot] as number) * scale,
    }));
  }

  /** Weighted requests of all keys at `nowMs`; `error` never exceeds this divided by `size`. */
  total(nowMs: number): number {
    return this.#used === 0 ? 0 : this.#total * this.#decay(nowMs);
  }

  /** The slot for a key without one: a free one, or the least counted key's. */
  #take(id: string, hash: number): number {
    let slot: number;
    if (this.#used < this.size) {
      slot = this.#used++;
      this.#heap[slot] = slot;
      this.#position[slot] = slot;
      this.#count[slot] = 0;
      this.#error[slot] = 0;
      // A zero count is the least: the new slot belongs at the root's side, sifted from the bottom.
      this.#siftUp(slot);
    } else {
      slot = this.#heap[0] as number;
      this.#table.delete(slot);
      this.#error[slot] = this.#count[slot] as number;
    }
    this.#outcomes[ADMITTED][slot] = 0;
    this.#outcomes[DELAYED][slot] = 0;
    this.#outcomes[LIMITED][slot] = 0;
    this.#table.set(detached(id), hash, slot);
    return slot;
  }

  /**
   * What a count at the epoch weighs at `nowMs`: never more than 1, so a clock read before the
   * epoch (stepped back by NTP or a restored VM, or no number at all) scales nothing up.
   */
  #decay(nowMs: number): number {
    const age = nowMs - this.#epoch;
    return age > 0 ? Math.exp(-age / TIME_CONSTANT_MS) : 1;
  }

  #weightOf(given: number): number {
    // A clock that gives no number: the last time seen (or this process's), never a NaN weight.
    const nowMs = Number.isFinite(given)
      ? given
      : Number.isFinite(this.#weightAt)
        ? this.#weightAt
        : Date.now();
    if (nowMs === this.#weightAt) return this.#weight;
    if (Number.isNaN(this.#epoch)) this.#epoch = nowMs;
    else if (Math.abs(nowMs - this.#epoch) > RESCALE_AFTER_MS) this.#rescale(nowMs);
    this.#weightAt = nowMs;
    this.#weight = Math.exp((nowMs - this.#epoch) / TIME_CONSTANT_MS);
    return this.#weight;
  }

  /**
   * Moves the epoch to `nowMs`: every count scaled alike, so the heap order stands. Back in time
   * (a clock stepped back), nothing is scaled up: the counts stand as they were, at the new epoch.
   * Scaled by `e^(hours / minute)`, they became Infinity, then NaN, for good.
   */
  #rescale(nowMs: number): void {
    const factor = this.#decay(nowMs);
    for (const column of [this.#count, this.#error, ...this.#outcomes]) {
      for (let i = 0; i < this.#used; i++) column[i] = (column[i] as number) * factor;
    }
    this.#total *= factor;
    this.#epoch = nowMs;
  }

  #siftUp(at: number): void {
    const heap = this.#heap;
    const slot = heap[at] as number;
    const count = this.#count[slot] as number;
    while (at > 0) {
      const parent = (at - 1) >> 1;
      const above = heap[parent] as number;
      if ((this.#count[above] as number) <= count) break;
      heap[at] = above;
      this.#position[above] = at;
      at = parent;
    }
    heap[at] = slot;
    this.#position[slot] = at;
  }

  #siftDown(at: number): void {
    const heap = this.#heap;
    const used = this.#used;
    const slot = heap[at] as number;
    const count = this.#count[slot] as number;
    for (;;) {
      let child = 2 * at + 1;
      if (child >= used) break;
      const right = child + 1;
      if (
        right < used &&
        (this.#count[heap[right] as number] as number) < (this.#count[heap[child] as number] as number)
      )
        child = right;
      const below = heap[child] as number;
      if ((this.#count[below] as number) >= count) break;
      heap[at] = below;
      this.#position[below] = at;
      at = child;
    }
    heap[at] = slot;
    this.#position[slot] = at;
  }
}

/**
 * `text`, sharing no memory with the string it came from: V8 may represent a substring (or a
 * concatenation) of 13 characters or more as a view of its parts, which would keep a whole
 * request line alive for as long as the key holds a counter. Slicing a fresh concatenation makes
 * V8 flatten it into new memory. Shorter strings are always flat copies already.
 */
function detached(text: string): string {
  return text.length < 13 ? text : (' ' + text).slice(1);
}
