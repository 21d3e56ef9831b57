import { clampLimit, type LimitAlgorithm, type LimitState } from './limit-algorithm';

/** Additive increase, multiplicative decrease: the state is the limit alone. */
export type AimdState = LimitState;

/** What counts as a drop besides `dropped` (Netflix's `AIMDLimit` timeout: 5 s). */
const TIMEOUT_MS = 5000;
/** The limit kept after a drop (Netflix's `backoffRatio`). */
const BACKOFF = 0.9;

/**
 * AIMD (Netflix concurrency-limits `AIMDLimit`), as a pure step: a window with a drop (or slower
 * than 5 s) multiplies the limit by 0.9; any other window using at least half the limit adds 1.
 * It sees latency only past its timeout: it backs off on failures, not on a queue.
 */
export const aimd: LimitAlgorithm<AimdState> = {
  init: (limit) => ({ limit }),
  update(state, { rttMs, inFlight, dropped }, bounds) {
    if (dropped || rttMs > TIMEOUT_MS) return { limit: clampLimit(state.limit * BACKOFF, bounds) };
    if (inFlight * 2 >= state.limit) return { limit: clampLimit(state.limit + 1, bounds) };
    return state;
  },
};
