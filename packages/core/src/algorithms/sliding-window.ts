import { admit, numericAlgorithm, peek, reject, rejectCost, type NumericAlgorithm } from './step';

/** Sliding-window state: counters of the window starting at `start` and of the one before it. */
export interface SlidingWindowState {
  /** Start of the current window, a multiple of windowMs (epoch ms). */
  readonly start: number;
  readonly previous: number;
  readonly current: number;
}

/**
 * Sliding window, two-counter approximation (as Cloudflare and most Redis limiters): windows are
 * aligned to multiples of `windowMs`, and the count at `elapsed` ms into the current window is
 * `previous * (windowMs - elapsed) / windowMs + current`. Everything is compared multiplied by
 * `windowMs`, so no fraction is ever rounded. Rejected requests are not counted.
 */
export const slidingWindow: NumericAlgorithm<SlidingWindowState> = numericAlgorithm(
  (state, frame) => {
    frame.s0 = state.start;
    frame.s1 = state.previous;
    frame.s2 = state.current;
  },
  (frame) => ({ start: frame.s0, previous: frame.s1, current: frame.s2 }),
  function slidingWindowStep(frame, policy, cost) {
    const { nowMs } = frame;
    const { limit, windowMs } = policy;
    let start = nowMs - (nowMs % windowMs);
    let previous = 0;
    let current = 0;
    if (frame.live) {
      if (frame.s0 >= start) {
        // Same window, or a clock a little behind the one that wrote the state: stay in its window.
        start = frame.s0;
        previous = frame.s1;
        current = frame.s2;
      } else if (frame.s0 === start - windowMs) {
        previous = frame.s2;
      }
    }
    const elapsed = Math.max(0, nowMs - start);
    const used = previous * (windowMs - elapsed) + current * windowMs;
    const full = limit * windowMs;
    const remainingOf = (usedScaled: number): number =>
      Math.max(0, Math.floor((full - usedScaled) / windowMs));
    const resetOf = (cur: number): number =>
      cur > 0 ? 2 * windowMs - elapsed : previous > 0 ? windowMs - elapsed : 0;
    if (cost > limit) return rejectCost(frame, limit, remainingOf(used), resetOf(current));

    if (used + cost * windowMs > full) {
      let retryAfterMs: number;
      if (current + cost <= limit) {
        // Within this window, once the previous window's weight has decayed enough.
        retryAfterMs = windowMs - Math.floor(((limit - current - cost) * windowMs) / previous) - elapsed;
      } else {
        // In the next window, where this window's count becomes the decaying one.
        const into = Math.max(0, windowMs - Math.floor(((limit - cost) * windowMs) / current));
        retryAfterMs = windowMs - elapsed + into;
      }
      return reject(frame, limit, remainingOf(used), resetOf(current), retryAfterMs);
    }
    if (cost === 0) return peek(frame, limit, remainingOf(used), resetOf(current));
    const resetMs = resetOf(current + cost);
    frame.s0 = start;
    frame.s1 = previous;
    frame.s2 = current + cost;
    // The state matters until two windows after its start: from a clock behind that start
    // (stayed in its window above), longer than the reset.
    admit(frame, limit, remainingOf(used + cost * windowMs), resetMs, 0, start + 2 * windowMs - nowMs);
  },
);
