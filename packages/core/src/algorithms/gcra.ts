import { admit, numericAlgorithm, peek, reject, rejectCost, type NumericAlgorithm } from './step';

/**
 * GCRA state. The theoretical arrival time (TAT) is `last + debt / limit` ms: `debt` counts in
 * units of 1/limit ms, so one request's emission interval (windowMs / limit ms) is exactly
 * `windowMs` units and every number stays an integer, whatever the rate.
 */
export interface GcraState {
  /** Time of the last admitted request, epoch ms. */
  readonly last: number;
  /** TAT − last, in 1/limit ms. */
  readonly debt: number;
}

/**
 * GCRA with redis-cell `CL.THROTTLE` semantics: limit = burst + 1; a request of `cost` adds
 * `cost` emission intervals to the TAT and passes when the new TAT is within the delay-variation
 * tolerance (`burst + 1` intervals) of now. A rejection leaves the TAT unchanged. With a queue
 * (`maxWaitMs`), a request up to `maxWaitMs` past the tolerance is admitted with that delay.
 */
export const gcra: NumericAlgorithm<GcraState> = numericAlgorithm(
  (state, frame) => {
    frame.s0 = state.last;
    frame.s1 = state.debt;
  },
  (frame) => ({ last: frame.s0, debt: frame.s1 }),
  function gcraStep(frame, policy, cost) {
    const { nowMs } = frame;
    const { limit: perWindow, windowMs, burst } = policy;
    const limit = burst + 1;
    const tolerance = windowMs * limit;
    // (TAT − now) in 1/limit ms; 0 once the TAT is in the past.
    const current = frame.live ? Math.max(0, frame.s1 - (nowMs - frame.s0) * perWindow) : 0;
    if (cost > limit) {
      return rejectCost(
        frame,
        limit,
        remainingOf(tolerance - current, windowMs),
        Math.ceil(current / perWindow),
      );
    }
    const debt = current + cost * windowMs;
    // A queue lets the TAT run ahead of the tolerance by maxWaitMs: the request waits its turn.
    const queue = policy.maxWaitMs * perWindow;
    if (debt > tolerance + queue) {
      return reject(
        frame,
        limit,
        remainingOf(tolerance - current, windowMs),
        Math.ceil(current / perWindow),
        Math.ceil((debt - tolerance - queue) / perWindow),
      );
    }
    const resetMs = Math.ceil(debt / perWindow);
    const remaining = remainingOf(tolerance - debt, windowMs);
    if (cost === 0) return peek(frame, limit, remaining, resetMs);
    const delayMs = debt > tolerance ? Math.ceil((debt - tolerance) / perWindow) : 0;
    frame.s0 = nowMs;
    frame.s1 = debt;
    admit(frame, limit, remaining, resetMs, delayMs, resetMs);
  },
);

/** redis-cell: remaining = (tolerance − (TAT − now)) / interval, truncated, never negative. */
function remainingOf(headroom: number, interval: number): number {
  return headroom > 0 ? Math.floor(headroom / interval) : 0;
}
