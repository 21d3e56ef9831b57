/** A stretch of time during which one key sends at a constant rate. */
export interface Segment {
  /** ms from the pattern's start */
  readonly startMs: number;
  readonly endMs: number;
  /** requests per second during the stretch (0: silent) */
  readonly rps: number;
}

/**
 * The arrival times (ms from the start, fractional, increasing) of one key sending at the rates
 * of `segments`, in order.
 *
 * - Without `random`, requests evenly spaced from each stretch's start, the first offset by
 *   `phase` of a gap, so a stretch of `n` requests' worth sends exactly `n` (a 1 s stretch at
 *   100 r/s: 100 requests, at 0, 10, 20 … ms). A part of a request left at a stretch's end is
 *   carried into the next: stretches of a tenth of a request's worth send one request in ten,
 *   never one each.
 * - With `random`, a Poisson process: gaps drawn from an exponential, the rate changing from one
 *   stretch to the next.
 *
 * @param segments - the key's rates, in time order, not overlapping
 * @param phase - in [0, 1): how far into its first gap each stretch starts (keys with different
 *   phases interleave instead of arriving at the same instants)
 * @param options.scale - multiplies every stretch's rate (a key's weight), default 1
 * @param options.random - a seeded source of uniform numbers in [0, 1), for Poisson arrivals
 */
export function* arrivals(
  segments: Iterable<Segment>,
  phase: number,
  { scale = 1, random }: { scale?: number; random?: () => number } = {},
): Generator<number, void, undefined> {
  const gap = (): number => (random === undefined ? 1 : -Math.log(1 - random()));
  let needed = random === undefined ? phase : gap();
  for (const { startMs, endMs, rps } of segments) {
    if (rps * scale <= 0 || endMs <= startMs) continue;
    const perMs = (rps * scale) / 1000;
    const available = (endMs - startMs) * perMs;
    // Each arrival is placed from the stretch's start, not from the previous one: no rounding
    // error builds up over a long stretch.
    let used = needed;
    while (used < available) {
      yield startMs + used / perMs;
      used += gap();
    }
    needed = used - available;
  }
}

/** Mulberry32: a small, fast, seeded generator of uniform numbers in [0, 1); the same seed, the same traffic. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
