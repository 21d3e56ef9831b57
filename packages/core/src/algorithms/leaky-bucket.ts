import { admit, numericAlgorithm, peek, reject, rejectCost, type NumericAlgorithm } from './step';

/** nginx `limit_req` node: `excess` in thousandths of a request, `last` in epoch ms. */
export interface LeakyBucketState {
  readonly excess: number;
  readonly last: number;
}

/** nginx keeps excess in thousandths of a request. */
export const MILLI = 1000;

/**
 * ms since the last leak, as nginx counts them: a clock that went back more than a minute counts
 * as 1 ms, a smaller step back as 0.
 */
export function elapsedSince(last: number, nowMs: number): number {
  const elapsed = nowMs - last;
  if (elapsed < -60_000) return 1;
  return elapsed < 0 ? 0 : elapsed;
}

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
export const leakyBucket: NumericAlgorithm<LeakyBucketState> = numericAlgorithm(
  (state, frame) => {
    frame.s0 = state.excess;
    frame.s1 = state.last;
  },
  (frame) => ({ excess: frame.s0, last: frame.s1 }),
  function leakyBucketStep(frame, policy, cost) {
    const { nowMs, live, s0: lastExcess, s1: lastLeak } = frame;
    const { limit: perWindow, windowMs, burst } = policy;
    const limit = burst + 1;
    const capacity = burst * MILLI;
    const elapsed = live ? elapsedSince(lastLeak, nowMs) : 0;
    const level = live ? lastExcess - Math.floor((elapsed * perWindow * MILLI) / windowMs) : -Infinity;
    // ms needed to leak `amount` thousandths: smallest t with floor(t * rate) >= amount.
    const leakMs = (amount: number): number => Math.ceil((amount * windowMs) / (perWindow * MILLI));
    const resetMs = live ? Math.max(0, leakMs(lastExcess + MILLI) - elapsed) : 0;
    const remaining = level + MILLI <= 0 ? limit : Math.max(0, Math.floor((capacity - level) / MILLI));
    if (cost > limit) return rejectCost(frame, limit, remaining, resetMs);

    const excess = Math.max(Math.max(0, (cost - 1) * MILLI), level + cost * MILLI);
    if (excess > capacity) {
      const needed = lastExcess + cost * MILLI - capacity;
      return reject(frame, limit, remaining, resetMs, Math.max(0, leakMs(needed) - elapsed));
    }
    if (cost === 0) return peek(frame, limit, remaining, resetMs);

    const threshold = policy.nodelay ? Infinity : policy.delay * MILLI;
    const delayMs =
      excess <= threshold ? 0 : Math.floor(((excess - threshold) * windowMs) / (perWindow * MILLI));
    // nginx moves `last` only when time has passed (`if (ms) lr->last = now`).
    const last = !live || elapsed !== 0 ? nowMs : lastLeak;
    const drainMs = leakMs(excess + MILLI);
    // `last` stays ahead of now after a small clock step back; keep the state until it has leaked.
    const ttlMs = drainMs + Math.max(0, last - nowMs);
    frame.s0 = excess;
    frame.s1 = last;
    admit(frame, limit, Math.floor((capacity - excess) / MILLI), drainMs, delayMs, ttlMs);
  },
);
