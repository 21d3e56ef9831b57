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
 *
 * The log's own time never goes back: a request whose clock is behind the newest entry (another
 * instance's clock, or a clock stepped back) is decided and recorded at that entry's time, so
 * the log stays in order and no `limit + 1` units ever count at once on its time line. Its
 * waits and resets are still told from the request's own clock.
 */
export const slidingLog: Algorithm<SlidingLogState> = {
  step(state, policy, nowMs, cost) {
    const { limit, windowMs } = policy;
    const all = state === undefined ? [] : state.times;
    const newest = all.length > 0 ? (all[all.length - 1] as number) : undefined;
    const at = newest !== undefined && newest > nowMs ? newest : nowMs;
    const cutoff = at - windowMs;
    let first = 0;
    while (first < all.length && (all[first] as number) <= cutoff) first++;
    const live = all.length - first;
    const resetMs = live > 0 ? Math.max(0, (newest as number) + windowMs - nowMs) : 0;
    if (cost > limit) return costExceedsCapacity(limit, Math.max(0, limit - live), resetMs);
    if (live + cost > limit) {
      // The oldest live units must leave first: the k-th of them leaves at its time + windowMs.
      const leaving = all[first + live + cost - limit - 1] as number;
      return rejected(limit, Math.max(0, limit - live), resetMs, leaving + windowMs - nowMs);
    }
    if (cost === 0) return peeked(limit, limit - live, resetMs);
    const times = all.slice(first);
    for (let i = 0; i < cost; i++) times.push(at);
    const ttlMs = at + windowMs - nowMs;
    return admitted(limit, limit - live - cost, ttlMs, 0, { times }, ttlMs);
  },
};
