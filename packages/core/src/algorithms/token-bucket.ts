import type { Algorithm } from './step';
import { admitted, costExceedsCapacity, peeked, rejected } from './step';

/**
 * Token-bucket state. `tokens` counts in units of 1/windowMs of a token, so a refill of
 * `limit / windowMs` tokens per ms is exactly `limit` units per ms: integers only, any rate.
 */
export interface TokenBucketState {
  readonly tokens: number;
  /** When `tokens` was last computed, epoch ms. */
  readonly last: number;
}

/**
 * Token bucket with Spring Cloud Gateway `RedisRateLimiter` semantics: replenish rate =
 * `limit / windowMs`, burst capacity = `burst + 1`, requested tokens = `cost`; a new key starts
 * full; refill is continuous and capped at the capacity; time never runs backwards
 * (`max(0, now - last)`). Unlike the gateway, a rejection writes nothing: the refill is a pure
 * function of time, so the decisions are the same without the write.
 */
export const tokenBucket: Algorithm<TokenBucketState> = {
  step(state, policy, nowMs, cost) {
    const { limit: perWindow, windowMs, burst } = policy;
    const limit = burst + 1;
    const capacity = limit * windowMs;
    const elapsed = state === undefined ? 0 : Math.max(0, nowMs - state.last);
    const filled = state === undefined ? capacity : Math.min(capacity, state.tokens + elapsed * perWindow);
    const resetOf = (tokens: number): number => Math.ceil((capacity - tokens) / perWindow);
    if (cost > limit) return costExceedsCapacity(limit, Math.floor(filled / windowMs), resetOf(filled));

    const requested = cost * windowMs;
    if (filled < requested) {
      return rejected(
        limit,
        Math.floor(filled / windowMs),
        resetOf(filled),
        Math.ceil((requested - filled) / perWindow),
      );
    }
    const tokens = filled - requested;
    const resetMs = resetOf(tokens);
    if (cost === 0) return peeked(limit, Math.floor(tokens / windowMs), resetMs);
    return admitted(limit, Math.floor(tokens / windowMs), resetMs, 0, { tokens, last: nowMs }, resetMs);
  },
};
