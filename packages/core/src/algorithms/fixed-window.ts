import { admit, numericAlgorithm, peek, reject, rejectCost, type NumericAlgorithm } from './step';

/** Fixed-window state: the window opened at `start` (epoch ms) by the key's first request. */
export interface FixedWindowState {
  readonly start: number;
  readonly count: number;
}

/**
 * Fixed window: at most `limit` units per window of `windowMs`, the window opening at the key's
 * first request (like INCR + PEXPIRE on first hit, set atomically). Rejected requests are not
 * counted, so `remaining` always tells how many more would pass.
 */
export const fixedWindow: NumericAlgorithm<FixedWindowState> = numericAlgorithm(
  (state, frame) => {
    frame.s0 = state.start;
    frame.s1 = state.count;
  },
  (frame) => ({ start: frame.s0, count: frame.s1 }),
  function fixedWindowStep(frame, policy, cost) {
    const { nowMs } = frame;
    const { limit, windowMs } = policy;
    const open = frame.live && nowMs < frame.s0 + windowMs;
    const start = open ? frame.s0 : nowMs;
    const count = open ? frame.s1 : 0;
    const endsInMs = open ? start + windowMs - nowMs : 0;
    if (cost > limit) return rejectCost(frame, limit, limit - count, endsInMs);
    if (count + cost > limit) return reject(frame, limit, limit - count, endsInMs, endsInMs);
    if (cost === 0) return peek(frame, limit, limit - count, endsInMs);
    const ttlMs = start + windowMs - nowMs;
    frame.s0 = start;
    frame.s1 = count + cost;
    admit(frame, limit, limit - count - cost, ttlMs, 0, ttlMs);
  },
);
