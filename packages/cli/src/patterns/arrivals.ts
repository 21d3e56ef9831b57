/** A stretch of time during which one key sends at a constant rate. */
export interface Segment {
  /** ms from the start of its period */
  readonly startMs: number;
  readonly endMs: number;
  /** requests per second during the stretch (0: silent) */
  readonly rps: number;
}

/**
 * One key's rates over a pattern's duration: `segments` repeated every `periodMs` (the last
 * period cut at the duration), read as a count of requests' worth so far. Held as one period,
 * never one object per period or per second: the work of a key is its requests, not its span.
 */
export class Timeline {
  /** Requests' worth sent over the whole duration at scale 1. */
  readonly total: number;
  readonly #periodMs: number;
  readonly #segments: readonly Segment[];
  /** Requests' worth sent before each segment of a period (one more: the period's whole). */
  readonly #before: readonly number[];
  readonly #periods: number;

  /**
   * @param segments - one period's rates, in time order, not overlapping, within [0, `periodMs`)
   * @param periodMs - how often they repeat (the duration itself: once)
   * @param durationMs - where the last period is cut
   */
  constructor(segments: readonly Segment[], periodMs: number, durationMs: number) {
    this.#periodMs = periodMs;
    // Silent stretches send nothing: left out, the search below always lands on one that sends.
    this.#segments = segments.filter((segment) => worth(segment, Infinity) > 0);
    const before = [0];
    for (const segment of this.#segments) before.push((before.at(-1) as number) + worth(segment, Infinity));
    this.#before = before;
    this.#periods = Math.floor(durationMs / periodMs);
    const cut = durationMs - this.#periods * periodMs;
    let last = 0;
    for (const segment of this.#segments) last += worth(segment, cut);
    this.total = this.#periods * (before.at(-1) as number) + last;
  }

  /** When (ms from the start) the requests' worth sent reaches `sent`, in [0, {@link total}). */
  timeAt(sent: number): number {
    const perPeriod = this.#before.at(-1) as number;
    const period = Math.min(Math.floor(sent / perPeriod), this.#periods);
    const within = sent - period * perPeriod;
    // The last segment with no more than `within` sent before it.
    let low = 0;
    let high = this.#segments.length - 1;
    while (low < high) {
      const middle = (low + high + 1) >> 1;
      if ((this.#before[middle] as number) <= within) low = middle;
      else high = middle - 1;
    }
    const { startMs, rps } = this.#segments[low] as Segment;
    return period * this.#periodMs + startMs + ((within - (this.#before[low] as number)) * 1000) / rps;
  }
}

/** Requests' worth of a segment sent before `cutMs` (from its period's start). */
function worth({ startMs, endMs, rps }: Segment, cutMs: number): number {
  const length = Math.min(endMs, cutMs) - startMs;
  return rps > 0 && length > 0 ? (rps * length) / 1000 : 0;
}

/**
 * The arrival times (ms from the start, fractional, increasing) of one key sending at the rates
 * of `timeline`. Each arrival is placed by the requests' worth sent before it, not from the
 * previous arrival: no rounding error builds up, and a silent stretch costs nothing.
 *
 * - Without `random`, requests evenly spaced, the first offset by `phase` of a gap, so a stretch
 *   of `n` requests' worth sends exactly `n` (a 1 s stretch at 100 r/s: 100 requests, at 0, 10,
 *   20 … ms). A part of a request left at a stretch's end is carried into the next: stretches of
 *   a tenth of a request's worth send one request in ten, never one each. A key sends
 *   `ceil(total × scale - phase)` requests: at most one more than its worth.
 * - With `random`, a Poisson process: gaps drawn from an exponential, the rate changing from one
 *   stretch to the next.
 *
 * @param timeline - the key's rates
 * @param phase - in [0, 1): how far into its first gap the key starts (keys with different
 *   phases interleave instead of arriving at the same instants)
 * @param options.scale - multiplies every stretch's rate (a key's weight), default 1
 * @param options.random - a seeded source of uniform numbers in [0, 1), for Poisson arrivals
 */
export function* arrivals(
  timeline: Timeline,
  phase: number,
  { scale = 1, random }: { scale?: number; random?: () => number } = {},
): Generator<number, void, undefined> {
  if (!(scale > 0)) return;
  const gap = (): number => (random === undefined ? 1 : -Math.log(1 - random()));
  const available = timeline.total * scale;
  for (let sent = random === undefined ? phase : gap(); sent < available; sent += gap()) {
    yield timeline.timeAt(sent / scale);
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
