import type { Algorithm } from './step';
import { admitted, costExceedsCapacity, peeked, rejected } from './step';

/** Sliding-log state: the times (epoch ms, ascending) of the admitted units still in the window. */
export interface SlidingLogState {
  readonly times: readonly number[];
}

/**
 * Sliding log: exact. A unit admitted at `t` counts until `t + windowMs`; a request of `cost`
 * passes when the units still counted plus `cost` are at most `limit`. Each unit is one entry
 * (ten requests in one millisecond count as ten); rejected requests are not recorded.
 */
export const slidingLog: Algorithm<SlidingLogState> = {
  step(state, policy, nowMs, cost) {
    const { limit, windowMs } = policy;
    const all = state === undefined ? [] : state.times;
    const cutoff = nowMs - windowMs;
    let first = 0;
    while (first < all.length && (all[first] as number) <= cutoff) first++;
    const live = all.length - first;
    const newest = live > 0 ? (all[all.length - 1] as number) : 0;
    const resetMs = live > 0 ? Math.max(0, newest + windowMs - nowMs) : 0;
    if (cost > limit) return costExceedsCapacity(limit, Math.max(0, limit - live), resetMs);
    if (live + cost > limit) {
      // The oldest live units must leave first: the k-th of them leaves at its time + windowMs.
      const leaving = all[first + live + cost - limit - 1] as number;
      return rejected(limit, Math.max(0, limit - live), resetMs, leaving + windowMs - nowMs);
    }
    if (cost === 0) return peeked(limit, limit - live, resetMs);
    const times = all.slice(first);
    for (let i = 0; i < cost; i++) times.push(nowMs);
    // A clock that went back leaves an out-of-order entry; keep the log sorted.
    if (live > 0 && newest > nowMs) times.sort((a, b) => a - b);
    const last = times[times.length - 1] as number;
    const ttlMs = last + windowMs - nowMs;
    return admitted(limit, limit - live - cost, ttlMs, 0, { times }, ttlMs);
  },
};
