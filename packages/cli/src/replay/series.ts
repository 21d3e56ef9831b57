/** What happened to a request, as charted: admitted at once, admitted after a delay, refused. */
export const OUTCOMES = ['admitted', 'delayed', 'limited'] as const;
/** One of {@link OUTCOMES}. */
export type Outcome = (typeof OUTCOMES)[number];

const EMPTY: Uint32Array[] = [];

/** Most buckets a series keeps before it doubles (or so) its bucket width. */
const MAX_BUCKETS = 4096;

/**
 * Bucket widths, each a whole multiple of the one before, so buckets of one width merge exactly
 * into the next, and series of different widths re-bucket onto the widest.
 */
export function bucketWidthAt(level: number): number {
  const ladder = [
    100, 200, 1000, 2000, 10_000, 20_000, 60_000, 120_000, 600_000, 1_200_000, 3_600_000, 7_200_000,
  ];
  return ladder[level] ?? 7_200_000 * 2 ** (level - ladder.length + 1);
}

/**
 * Requests per outcome over time, in buckets aligned to multiples of their width since the epoch.
 * It starts at 100 ms buckets and widens them whenever it would pass {@link MAX_BUCKETS}, so its
 * memory is bounded whatever the log's length or duration (a month of log: 20-minute buckets).
 */
export class Series {
  #level = 0;
  /** Bucket index (since the epoch, at the current width) of the first bucket held. */
  #origin: number | undefined;
  // Allocated at the first request: the summary of hottest keys makes and drops many series.
  #counts: Uint32Array[] = EMPTY;
  #used = 0;

  /** Forgets every request, keeping the memory for the next key that uses this series. */
  clear(): void {
    for (const counts of this.#counts) counts.fill(0, 0, this.#used);
    this.#level = 0;
    this.#origin = undefined;
    this.#used = 0;
  }

  /** The current bucket width in ms. */
  get widthMs(): number {
    return bucketWidthAt(this.#level);
  }

  /** The start of the first bucket (epoch ms), `undefined` before the first request. */
  get startMs(): number | undefined {
    return this.#origin === undefined ? undefined : this.#origin * this.widthMs;
  }

  /** The end of the last bucket holding a request (epoch ms). */
  get endMs(): number | undefined {
    return this.#origin === undefined ? undefined : (this.#origin + this.#used) * this.widthMs;
  }

  /**
   * Counts one request.
   * @param outcome - index into {@link OUTCOMES}
   * @param timeMs - epoch ms: the arrival, or for a delayed request the moment it is let through
   */
  add(outcome: number, timeMs: number): void {
    let width = this.widthMs;
    if (this.#origin === undefined) {
      this.#origin = Math.floor(timeMs / width);
      if (this.#counts === EMPTY) this.#counts = OUTCOMES.map(() => new Uint32Array(64));
    }
    let index = Math.floor(timeMs / width) - this.#origin;
    if (index < 0) index = 0; // never happens: times only move forward from the first one
    if (index >= (this.#counts[0] as Uint32Array).length) {
      this.#makeRoom(index + 1);
      width = this.widthMs;
      index = Math.floor(timeMs / width) - (this.#origin as number);
    }
    const counts = this.#counts[outcome] as Uint32Array;
    counts[index] = (counts[index] as number) + 1;
    if (index >= this.#used) this.#used = index + 1;
  }

  /**
   * The counts of one outcome in buckets of `widthMs` starting at `fromMs`.
   * @param outcome - index into {@link OUTCOMES}
   * @param widthMs - a width from {@link bucketWidthAt}, at least {@link widthMs}
   * @param fromMs - a multiple of `widthMs`
   * @param buckets - how many buckets to return
   */
  values(outcome: number, widthMs: number, fromMs: number, buckets: number): Float64Array {
    const values = new Float64Array(buckets);
    if (this.#origin === undefined) return values;
    const own = this.widthMs;
    const counts = this.#counts[outcome] as Uint32Array;
    for (let i = 0; i < this.#used; i++) {
      const count = counts[i] as number;
      if (count === 0) continue;
      const at = Math.floor(((this.#origin + i) * own - fromMs) / widthMs);
      if (at >= 0 && at < buckets) values[at] = (values[at] as number) + count;
    }
    return values;
  }

  #makeRoom(needed: number): void {
    if (needed <= MAX_BUCKETS) {
      let capacity = (this.#counts[0] as Uint32Array).length;
      while (capacity < needed) capacity *= 2;
      this.#counts = this.#counts.map((old) => {
        const grown = new Uint32Array(Math.min(capacity, MAX_BUCKETS));
        grown.set(old);
        return grown;
      });
      return;
    }
    // Widen until the span from the origin to the new request fits.
    const spanMs = needed * this.widthMs;
    const origin = this.#origin as number;
    const oldWidth = this.widthMs;
    let level = this.#level;
    // Two buckets to spare: the new origin may start a bucket earlier, and the index is inclusive.
    while (Math.ceil(spanMs / bucketWidthAt(level)) + 2 > MAX_BUCKETS) level++;
    const width = bucketWidthAt(level);
    const newOrigin = Math.floor((origin * oldWidth) / width);
    this.#counts = this.#counts.map((old) => {
      const merged = new Uint32Array(MAX_BUCKETS);
      for (let i = 0; i < this.#used; i++) {
        const at = Math.floor(((origin + i) * oldWidth) / width) - newOrigin;
        merged[at] = (merged[at] as number) + (old[i] as number);
      }
      return merged;
    });
    this.#used = Math.floor(((origin + this.#used - 1) * oldWidth) / width) - newOrigin + 1;
    this.#origin = newOrigin;
    this.#level = level;
  }
}
