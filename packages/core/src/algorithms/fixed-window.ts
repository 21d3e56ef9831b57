import type { Algorithm } from './step';
import { admitted, costExceedsCapacity, peeked, rejected } from './step';

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
export const fixedWindow: Algorithm<FixedWindowState> = {
  step(state, policy, nowMs, cost) {
    const { limit, windowMs } = policy;
    const open = state !== undefined && nowMs < state.start + windowMs;
    const start = open ? state.start : nowMs;
    const count = open ? state.count : 0;
    const endsInMs = open ? start + windowMs - nowMs : 0;
    if (cost > limit) return costExceedsCapacity(limit, limit - count, endsInMs);
    if (count + cost > limit) return rejected(limit, limit - count, endsInMs, endsInMs);
    if (cost === 0) return peeked(limit, limit - count, endsInMs);
    const ttlMs = start + windowMs - nowMs;
    return admitted(limit, limit - count - cost, ttlMs, 0, { start, count: count + cost }, ttlMs);
  },
};
