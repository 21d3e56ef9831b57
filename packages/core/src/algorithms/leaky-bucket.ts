import type { Algorithm } from './step';
import { admitted, costExceedsCapacity, peeked, rejected } from './step';

/** nginx `limit_req` node: `excess` in thousandths of a request, `last` in epoch ms. */
export interface LeakyBucketState {
  readonly excess: number;
  readonly last: number;
}

/** nginx keeps excess in thousandths of a request. */
const MILLI = 1000;

/**
 * Leaky bucket exactly as nginx `limit_req` computes it (ngx_http_limit_req_module):
 *
 *     excess = lr->excess - rate * ms / 1000 + 1000;  if (excess < 0) excess = 0;
 *     if (excess > burst) reject;                       // state left unchanged
 *     delay = (excess - delay) * 1000 / rate            // unless nodelay
 *
 * with the exact rate `limit / windowMs` (nginx truncates it to whole thousandths per second,
 * which only differs for rates such as 7r/m). A new key starts empty, so its first request has
 * excess 0. A cost `c` adds `c` thousand; its floor is `(c - 1) * 1000`, so an idle key behaves
 * like a new one for every cost.
 */
export const leakyBucket: Algorithm<LeakyBucketState> = {
  step(state, policy, nowMs, cost) {
    const { limit: perWindow, windowMs, burst } = policy;
    const limit = burst + 1;
    const capacity = burst * MILLI;
    let elapsed = state === undefined ? 0 : nowMs - state.last;
    // nginx: a clock that went back more than a minute counts as 1 ms, a smaller step back as 0.
    if (elapsed < -60_000) elapsed = 1;
    else if (elapsed < 0) elapsed = 0;
    const level =
      state === undefined ? -Infinity : state.excess - Math.floor((elapsed * perWindow * MILLI) / windowMs);
    // ms needed to leak `amount` thousandths: smallest t with floor(t * rate) >= amount.
    const leakMs = (amount: number): number => Math.ceil((amount * windowMs) / (perWindow * MILLI));
    const resetMs = state === undefined ? 0 : Math.max(0, leakMs(state.excess + MILLI) - elapsed);
    const remaining = level + MILLI <= 0 ? limit : Math.max(0, Math.floor((capacity - level) / MILLI));
    if (cost > limit) return costExceedsCapacity(limit, remaining, resetMs);

    const excess = Math.max(Math.max(0, (cost - 1) * MILLI), level + cost * MILLI);
    if (excess > capacity) {
      const needed = (state as LeakyBucketState).excess + cost * MILLI - capacity;
      return rejected(limit, remaining, resetMs, Math.max(0, leakMs(needed) - elapsed));
    }
    if (cost === 0) return peeked(limit, remaining, resetMs);

    const threshold = policy.nodelay ? Infinity : policy.delay * MILLI;
    const delayMs =
      excess <= threshold ? 0 : Math.floor(((excess - threshold) * windowMs) / (perWindow * MILLI));
    // nginx moves `last` only when time has passed (`if (ms) lr->last = now`).
    const last = state === undefined || elapsed !== 0 ? nowMs : state.last;
    const drainMs = leakMs(excess + MILLI);
    // `last` stays ahead of now after a small clock step back; keep the state until it has leaked.
    const ttlMs = drainMs + Math.max(0, last - nowMs);
    return admitted(
      limit,
      Math.floor((capacity - excess) / MILLI),
      drainMs,
      delayMs,
      { excess, last },
      ttlMs,
    );
  },
};
