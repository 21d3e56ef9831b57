import type { Policy } from '../types';
import type { Algorithm } from './step';
import { admitted, costExceedsCapacity, peeked, rejected } from './step';

/** Guava SmoothWarmingUp state: stored ("cold") permits and the next free time, epoch ms (fractional). */
export interface WarmUpState {
  readonly stored: number;
  readonly next: number;
}

/** Guava's cold factor: a cold limiter starts at a third of its rate. */
const COLD_FACTOR = 3;

/** The shape of the warm-up curve, from the rate and the warm-up period (Guava `doSetRate`). */
export function curve(policy: Policy, warmupMs: number) {
  const stable = policy.windowMs / policy.limit; // ms per request at the full rate
  const cold = stable * COLD_FACTOR;
  const threshold = (0.5 * warmupMs) / stable;
  const maxPermits = threshold + (2 * warmupMs) / (stable + cold);
  const slope = (cold - stable) / (maxPermits - threshold);
  return { stable, threshold, maxPermits, slope, coolDown: warmupMs / maxPermits };
}

/**
 * Warm-up, exactly as Guava's `RateLimiter.create(rate, warmupPeriod)` (SmoothWarmingUp): a cold
 * key (new, or idle long enough) starts at a third of its rate and speeds up to the full rate
 * over `warmupMs` of use; idle time cools it down again at the same pace. A request may pass
 * when the next free time is at most `maxWaitMs` away; it then waits until that time
 * (`delayMs`) and pushes the next free time by the cost of its permits: stored (cold) permits
 * cost more, along the curve's slope. `create(2.0, 4 s)` gives waits of 0, 1.375, 1.125, 0.875,
 * 0.625, 0.5, 0.5, … s. A request is never split: one permit per unit of cost; `limit` is 1.
 */
export const warmUp: Algorithm<WarmUpState> = {
  step(state, policy, nowMs, cost) {
    const { stable, threshold, maxPermits, slope, coolDown } = curve(policy, policy.warmupMs);
    // Guava `resync`: idle time adds stored permits (cools the limiter down), up to the maximum.
    let stored = state === undefined ? maxPermits : state.stored;
    let next = state === undefined ? nowMs : state.next;
    if (nowMs > next) {
      stored = Math.min(maxPermits, stored + (nowMs - next) / coolDown);
      next = nowMs;
    }
    const waitMs = next - nowMs;
    const resetMs = Math.ceil(waitMs);
    const remaining = waitMs <= 0 ? 1 : 0;
    if (cost > 1) return costExceedsCapacity(1, remaining, resetMs);
    if (waitMs > policy.maxWaitMs) return rejected(1, 0, resetMs, Math.ceil(waitMs - policy.maxWaitMs));
    if (cost === 0) return peeked(1, remaining, resetMs);
    // Guava `reserveEarliestAvailable` with `storedPermitsToWaitTime`: fresh permits cost the
    // stable interval; stored ones above the threshold cost the area under the slope.
    const fromStored = Math.min(cost, stored);
    let spendMs = stable * (cost - fromStored);
    const above = stored - threshold;
    let belowThreshold = fromStored;
    if (above > 0) {
      const takeAbove = Math.min(above, fromStored);
      const length = stable + above * slope + (stable + (above - takeAbove) * slope);
      spendMs += (takeAbove * length) / 2;
      belowThreshold = fromStored - takeAbove;
    }
    spendMs += stable * belowThreshold;
    const nextFree = next + spendMs;
    const nextStored = stored - fromStored;
    // Forgettable once fully cold again: the next free time has passed and the store refilled.
    const ttlMs = Math.ceil(Math.max(0, nextFree - nowMs) + (maxPermits - nextStored) * coolDown) + 1;
    const untilFree = Math.ceil(Math.max(0, nextFree - nowMs));
    const nextState = { stored: nextStored, next: nextFree };
    return admitted(1, untilFree === 0 ? 1 : 0, untilFree, Math.ceil(waitMs), nextState, ttlMs);
  },
};
