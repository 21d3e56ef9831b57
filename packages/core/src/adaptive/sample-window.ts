import type { LimitSample } from './limit-algorithm';

/** Fewest requests in a window: fewer say too little about latency (Netflix's `windowSize`: 10). */
const MIN_SAMPLES = 10;

/**
 * Gathers released permits into windows of at least `windowMs` and 10 requests, as Netflix's
 * `WindowedLimit` does: the algorithm sees one mean latency per window, not each request's noise.
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
    if (this.#count < MIN_SAMPLES || now - this.#start < this.windowMs) return undefined;
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
