/**
 * What every adaptive limit algorithm shares: a pure step from one measured window of latencies
 * to the next limit, as Netflix concurrency-limits' `Limit` is (Vegas, Gradient2, AIMD).
 */

/** One window of measurements, as the limiter gathers them from released permits. */
export interface LimitSample {
  /** Mean latency of the window's requests, acquire to release, in ms. */
  readonly rttMs: number;
  /** The most requests in flight while the window's requests started. */
  readonly inFlight: number;
  /** Whether a request of the window was dropped (`release({ dropped: true })`). */
  readonly dropped: boolean;
}

/** The part of every algorithm's state the limiter reads: the limit, a real number (floored for use). */
export interface LimitState {
  readonly limit: number;
}

/** `min` and `max` of the limiter: no algorithm leaves them. */
export interface LimitBounds {
  readonly min: number;
  readonly max: number;
}

/**
 * An adaptive limit: `update` is a pure function of the state and one window, so each algorithm
 * is simulated in tests with scripted latencies, without a limiter or a clock.
 */
export interface LimitAlgorithm<S extends LimitState> {
  /** The state before any measurement, from the limiter's `initial`. */
  init(limit: number): S;
  /** The next state after one window of measurements. */
  update(state: S, sample: LimitSample, bounds: LimitBounds): S;
}

/** `value` within `bounds`. */
export function clampLimit(value: number, { min, max }: LimitBounds): number {
  return Math.max(min, Math.min(max, value));
}
