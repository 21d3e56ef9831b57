import type { LimitSample } from './limit-algorithm';

/** Fewest requests in a window: fewer say too little about latency (Netflix's `windowSize`: 10). */
const MIN_SAMPLES = 10;
/** Windows (`windowMs`) after which a window closes with fewer samples (at least 2). */
const LONG_WINDOWS = 3;

/**
 * Gathers released permits into windows of at least `windowMs` and 10 requests (or 2 once
 * `3 × windowMs` passed), as Netflix's `WindowedLimit` does: the algorithm sees one mean latency per window, not each request's noise.
 */
export class SampleWindow {
  #start = Number.NaN;
  #count = 0;
  #measured = 0;
  #rttSum = 0;
  #inFlight = 0;
  #dropped = false;
  /** The last window's mean latency: a window of drops alone is measured with it. */
  #lastRttMs = Number.NaN;
  /** A running mean of latencies (ms), for `retryAfterMs`; `NaN` before any. */
  meanRttMs = Number.NaN;

  constructor(readonly windowMs: number) {}

  /**
   * Adds one released permit; returns the window when this one closes it.
   * @param rttMs - its latency, or `undefined` when not measured (dropped)
   */
  add(now: number, rttMs: number | undefined, inFlight: number, dropped: boolean): LimitSample | undefined {
    if (this.#count === 0) this.#start = now;
    this.#count++;
    if (inFlight > this.#inFlight) this.#inFlight = inFlight;
    if (dropped) this.#dropped = true;
    if (rttMs !== undefined) {
      this.#measured++;
      this.#rttSum += rttMs;
      this.meanRttMs = Number.isNaN(this.meanRttMs) ? rttMs : this.meanRttMs + (rttMs - this.meanRttMs) / 16;
    }
    const elapsed = now - this.#start;
    if (elapsed < this.windowMs) return undefined;
    // Few samples close a window too once it lasted LONG_WINDOWS windows: at a low limit on a
    // slow backend (after an event-loop cut) 10 latencies would make each window long.
    if (this.#count < MIN_SAMPLES && (this.#count < 2 || elapsed < LONG_WINDOWS * this.windowMs))
      return undefined;
    const rtt = this.#measured > 0 ? this.#rttSum / this.#measured : this.#lastRttMs;
    const sample = { rttMs: Math.max(rtt, 1e-3), inFlight: this.#inFlight, dropped: this.#dropped };
    this.#lastRttMs = rtt;
    this.#count = this.#measured = this.#rttSum = this.#inFlight = 0;
    this.#dropped = false;
    return Number.isNaN(rtt) ? undefined : sample;
  }

  /** Starts a new window (the limit was changed from outside, by the event loop). */
  reset(): void {
    this.#count = this.#measured = this.#rttSum = this.#inFlight = 0;
    this.#dropped = false;
  }
}
