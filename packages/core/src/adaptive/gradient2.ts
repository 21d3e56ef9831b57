import { clampLimit, type LimitAlgorithm, type LimitState } from './limit-algorithm';

/** Netflix's Gradient2: the limit follows the ratio of a long-run mean latency to the window's. */
export interface Gradient2State extends LimitState {
  /** Exponential mean of the windows' latencies (ms); `NaN` before the first window. */
  readonly longRttMs: number;
  /** Windows averaged so far, up to the warm-up (a plain mean until then). */
  readonly samples: number;
}

/** Latency allowed above the long-run mean before the limit shrinks (Netflix's `rttTolerance`). */
const TOLERANCE = 1.5;
/** Weight of a new window in the limit (Netflix's `smoothing`). */
const SMOOTHING = 0.2;
/** Windows in the long-run mean's horizon (Netflix's `longWindow`: 600). */
const LONG_WINDOW = 600;
/** Windows averaged plainly before the exponential mean starts (Netflix's warm-up). */
const WARM_UP = 10;

/** Netflix's `queueSize`: how far the limit probes above what the latency supports. */
function headroom(limit: number): number {
  return limit < 50 ? 2 : 4;
}

/**
 * Gradient2 (Netflix concurrency-limits `Gradient2Limit`), as a pure step: the gradient
 * `tolerance × longRtt / rtt`, within [0.5, 1], scales the limit, plus a little headroom, smoothed.
 * A long-run mean far above the window's (latency fell) is pulled down 5 % a window; a window
 * with fewer than half the limit in flight leaves the limit alone (the app, not the backend, was
 * the bound).
 */
export const gradient2: LimitAlgorithm<Gradient2State> = {
  init: (limit) => ({ limit, longRttMs: Number.NaN, samples: 0 }),
  update(state, { rttMs, inFlight }, bounds) {
    const samples = Math.min(state.samples + 1, WARM_UP);
    let longRttMs: number;
    if (state.samples === 0) longRttMs = rttMs;
    else if (state.samples < WARM_UP) longRttMs = state.longRttMs + (rttMs - state.longRttMs) / samples;
    else longRttMs = state.longRttMs + ((rttMs - state.longRttMs) * 2) / (LONG_WINDOW + 1);
    if (longRttMs / rttMs > 2) longRttMs *= 0.95;
    if (inFlight < state.limit / 2) return { limit: state.limit, longRttMs, samples };
    const gradient = Math.max(0.5, Math.min(1, (TOLERANCE * longRttMs) / rttMs));
    const next = state.limit * gradient + headroom(state.limit);
    const limit = clampLimit(state.limit * (1 - SMOOTHING) + next * SMOOTHING, bounds);
    return { limit, longRttMs, samples };
  },
};
